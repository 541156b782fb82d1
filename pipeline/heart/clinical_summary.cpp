#include "heart/clinical_summary.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "cardio/analysis/clinical.hpp"
#include "cardio/core/error.hpp"
#include "heart/clinical_ranges.hpp"

namespace cardio::pipeline {
namespace {

using nlohmann::json;

std::optional<double> number_at(const json& j, const json::json_pointer& at) {
  if (!j.contains(at) || !j.at(at).is_number()) return std::nullopt;
  const double v = j.at(at).get<double>();
  return std::isfinite(v) ? std::optional<double>(v) : std::nullopt;
}

/// Max and min of the samples of y with t in [t0, t1] (NaN when none is finite).
std::pair<double, double> extremes(const Eigen::VectorXd& t, const Eigen::VectorXd& y, double t0, double t1) {
  double hi = std::numeric_limits<double>::quiet_NaN(), lo = hi;
  for (Eigen::Index i = 0; i < t.size(); ++i)
    if (t[i] >= t0 && t[i] <= t1 && std::isfinite(y[i])) {
      hi = std::isnan(hi) ? y[i] : std::max(hi, y[i]);
      lo = std::isnan(lo) ? y[i] : std::min(lo, y[i]);
    }
  return {hi, lo};
}

json number_or_null(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

/// The haemodynamics of a cavity's last complete beat, from its statistics and the 1 ms samples.
json haemodynamics(const circulation::BeatCycle& cy, double period_ms, const TimeSeriesRecorder& series) {
  const circulation::BeatStats& b = cy.beats().back();
  const Eigen::VectorXd t = series.column("time_ms");
  const double t0 = b.onset_ms, t1 = std::min(b.onset_ms + period_ms, t.size() ? t[t.size() - 1] : t0);
  const Eigen::VectorXd p = series.column(cy.name() + "_pressure_mmHg");
  analysis::RateExtremes rate;  // NaN (null in the summary) when the beat's samples do not allow it
  try {
    rate = analysis::rate_extremes(t, p, t0, t1);
  } catch (const Error&) {
  }
  const auto [arterial_max, arterial_min] = extremes(t, series.column(cy.name() + "_arterial_pressure_mmHg"), t0, t1);
  const double heart_rate = 60000.0 / period_ms;
  return {{"window_ms", {t0, t1}},
          {"peak_pressure_mmHg", b.peak_pressure_mmHg},
          {"dPdt_max_mmHg_per_s", number_or_null(1000.0 * rate.max)},  // [mmHg/ms] -> [mmHg/s]
          {"dPdt_min_mmHg_per_s", number_or_null(1000.0 * rate.min)},
          {"stroke_work_mmHg_mL", b.stroke_work_mmHg_mL},
          {"heart_rate_bpm", heart_rate},
          {"cardiac_output_L_per_min", b.sv_mL * heart_rate / 1000.0},
          {"arterial_systolic_pressure_mmHg", number_or_null(arterial_max)},
          {"arterial_diastolic_pressure_mmHg", number_or_null(arterial_min)}};
}

/// heart: the clinical global strains [%] and twist, from the peak strains and analysis.twist.
/// GLS and GCS: on the LV endocardium (as echo measures them); GRS: the mean over the LV elements.
void add_global_measures(json& summary) {
  json& heart = summary["heart"];
  const json::json_pointer endocardial("/analysis/peak_strain/lv_endocardial");
  const json::json_pointer global("/analysis/peak_strain/global");
  constexpr std::pair<const char*, const char*> kEndocardial[] = {{"GLS_percent", "GLS"}, {"GCS_percent", "GCS"}};
  for (const auto& [key, strain] : kEndocardial)
    if (const auto v = number_at(summary, endocardial / strain)) heart[key] = 100.0 * *v;
  if (const auto v = number_at(summary, global / "e_rr")) heart["GRS_percent"] = 100.0 * *v;
  heart["strain_definition"] = {
      {"GLS_GCS", "peak (most negative) in the last complete beat of analysis.peak_strain.lv_endocardial: " +
                      summary.value(endocardial / "definition", std::string("(not measured)"))},
      {"GRS",
       "peak of analysis.peak_strain.global.e_rr: engineering radial strain (away from the long axis), "
       "volume-weighted mean over the AHA-segmented (analysis.lv_labels) elements"}};
  if (const auto v = number_at(summary, json::json_pointer("/heart/wall_thickening")))
    heart["wall_thickening_percent"] = 100.0 * *v;
  if (const auto v = number_at(summary, json::json_pointer("/analysis/twist/peak_twist_deg"))) heart["twist_deg"] = *v;
  if (const auto v = number_at(summary, json::json_pointer("/analysis/twist/torsion_deg_per_cm")))
    heart["torsion_deg_per_cm"] = *v;
}

/// The values compared with kClinicalRanges, by key (absent: not measured in this run).
std::map<std::string_view, double> clinical_values(const json& summary, const circulation::CavityCoupling& cavities,
                                                   std::size_t lv) {
  std::map<std::string_view, double> v;
  const auto put = [&](std::string_view key, const json& j, const char* at, double scale = 1.0) {
    if (const auto x = number_at(j, json::json_pointer(at))) v[key] = scale * *x;
  };
  const json& cav = summary["cavities"];
  for (std::size_t c = 0; c < cavities.size(); ++c) {
    const std::string& name = cavities.cycles()[c].name();
    if (c == lv) {
      put("lv_edv", cav[c], "/EDV_mL");
      put("lv_ef", cav[c], "/EF", 100.0);
      put("lv_peak_pressure", cav[c], "/haemodynamics/peak_pressure_mmHg");
      put("aortic_diastolic_pressure", cav[c], "/haemodynamics/arterial_diastolic_pressure_mmHg");
    } else if (name == "rv") {
      put("rv_ef", cav[c], "/EF", 100.0);
      put("rv_peak_pressure", cav[c], "/haemodynamics/peak_pressure_mmHg");
    }
  }
  const json& heart = summary["heart"];
  put("gls", heart, "/GLS_percent");
  put("gcs", heart, "/GCS_percent");
  put("grs", heart, "/GRS_percent");
  put("wall_thickening", heart, "/wall_thickening_percent");
  put("lv_twist", heart, "/twist_deg");
  return v;
}

/// The compared quantities a calibration of this run set to its target (key -> the config key): they
/// are inputs of the run, not its predictions.
std::map<std::string_view, std::string> calibrated_quantities(const json& summary) {
  std::map<std::string_view, std::string> by;
  if (const auto t = summary.find("tension_calibration"); t != summary.end() && t->contains("target")) {
    const bool ef = (*t)["target"] == "ejection_fraction";
    by[ef ? "lv_ef" : "lv_peak_pressure"] = "activation.target";
  }
  if (summary.contains(json::json_pointer("/circulation/afterload"))) {
    by["lv_peak_pressure"] = "circulation.closed_loop.afterload";  // the aortic systolic pressure, past the valve
    by["aortic_diastolic_pressure"] = "circulation.closed_loop.afterload";
  }
  return by;
}

}  // namespace

void add_clinical_measures(json& summary, const circulation::CavityCoupling& cavities, std::size_t lv, double period_ms,
                           const TimeSeriesRecorder& series) {
  for (std::size_t c = 0; c < cavities.size(); ++c)
    if (!cavities.cycles()[c].beats().empty())
      summary["cavities"][c]["haemodynamics"] = haemodynamics(cavities.cycles()[c], period_ms, series);
  add_global_measures(summary);
  const auto values = clinical_values(summary, cavities, lv);
  const auto calibrated = calibrated_quantities(summary);
  json comparison = json::array();
  for (const ClinicalRange& r : kClinicalRanges) {
    const auto it = values.find(r.key);
    if (it == values.end()) continue;
    comparison.push_back({{"quantity", r.quantity},
                          {"value", it->second},
                          {"unit", r.unit},
                          {"normal_range", {r.lo, r.hi}},
                          {"source", r.source},
                          {"inside", r.lo <= it->second && it->second <= r.hi}});
    if (const auto c = calibrated.find(r.key); c != calibrated.end()) comparison.back()["calibrated_by"] = c->second;
  }
  summary["clinical_comparison"] = comparison;
}

}  // namespace cardio::pipeline
