/// @file klotz_calibration.cpp
/// calibrate_passive_stiffness (passive_calibration.hpp): one root search on log C of the Klotz
/// mismatch after unloading with each C.
#include <chrono>
#include <cmath>
#include <iomanip>
#include <map>
#include <optional>
#include <string>

#include "cardio/core/error.hpp"
#include "cardio/core/units.hpp"
#include "cardio/io/json.hpp"
#include "cardio/io/series.hpp"
#include "heart/passive_calibration.hpp"
#include "heart/stiffness_search.hpp"

namespace cardio::pipeline {
namespace {

using namespace stiffness_search;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

/// The Klotz curve at the model's pressures, through (V0, EDV): V0 the model's unloaded volume.
PressureVolumeCurve klotz_at(const PressureVolumeCurve& model, double EDV_mL) {
  const KlotzCurve k = klotz_curve(model.volume_mL.front(), EDV_mL, model.pressure_mmHg.back());
  PressureVolumeCurve c;
  c.pressure_mmHg = model.pressure_mmHg;
  for (double P : model.pressure_mmHg) c.volume_mL.push_back(k.volume_mL(P));
  return c;
}

json calibration_report(const HeartSimulation& sim, const CalibrationResult& r, double EDV_mL, json evaluations,
                        double seconds) {
  const KlotzCurve k = klotz_curve(r.model.volume_mL.front(), EDV_mL, r.model.pressure_mmHg.back());
  double sum = 0, worst = 0;
  for (std::size_t i = 0; i < r.model.volume_mL.size(); ++i) {
    const double d = r.model.volume_mL[i] - r.klotz.volume_mL[i];
    sum += d * d;
    worst = std::max(worst, std::abs(d));
  }
  return {
      {"target", "klotz"},
      {"cavity", sim.passive_calibration.cavity},
      {"guccione_C_kPa", r.C_kPa},
      {"config_C_kPa", sim.material.law.C},
      {"C_scale", r.C_kPa / sim.material.law.C},
      {"end_diastolic_pressure_mmHg", r.model.pressure_mmHg.back()},
      {"end_diastolic_volume_mL", EDV_mL},
      {"unloaded_volume_mL", r.model.volume_mL.front()},
      {"model_volume_at_EDP_mL", r.model.volume_mL.back()},
      {"klotz",
       {{"A_mmHg", k.A_mmHg}, {"B", k.B}, {"V30_mL", k.volume_mL(30.0)}, {"An_mmHg", kKlotzAn_mmHg}, {"Bn", kKlotzBn}}},
      {"curves_without_pericardium", sim.pericardium.has_value()},  // ex vivo, as Klotz measured
      {"rms_volume_mismatch_mL", std::sqrt(sum / double(r.model.volume_mL.size()))},
      {"max_volume_mismatch_mL", worst},
      {"evaluations", std::move(evaluations)},
      {"unloading_iterations", r.unloaded.history.back().iteration},
      {"seconds", seconds}};
}

/// One evaluation of the consistent search: the reference unloaded with C, then the passive curve
/// at C on it, and its mismatch (nullopt: that C did not unload or did not inflate).
class UnloadedSearch {
 public:
  UnloadedSearch(const HeartSimulation& sim, const meshing::VoxelMesh& image, const NormalisedCurve& target,
                 std::ostream* log)
      : m_sim(sim), m_image(image), m_target(target), m_log(log) {}

  std::optional<Sample> at(double log_C) {
    ++evaluations;
    const auto t0 = Clock::now();
    HeartSimulation s = m_sim;
    s.material.law.C = std::exp(log_C);
    if (m_log)
      *m_log << "passive calibration " << evaluations << ": unloading with C = " << s.material.law.C << " kPa"
             << std::endl;
    const Eigen::Matrix3Xd* start = nearest_reference(log_C);
    std::optional<UnloadingResult> unloaded;
    try {
      unloaded = unload_reference(s, m_image, m_log, start);
    } catch (const Error& e) {
      if (evaluations == 1) throw;  // at material.C: a problem of the config, not of the search
      return failed(log_C, t0, std::string("did not unload: ") + e.what());
    }
    Sample smp{log_C, 0,
               passive_curve(s, unloaded->mesh, m_sim.passive_calibration.cavity, m_sim.passive_calibration.points,
                             s.material.law.C, m_log)};
    if (smp.curve.volume_mL.empty()) return failed(log_C, t0, "did not inflate");
    smp.g = normalised_mismatch(smp.curve, m_target);
    const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    report.push_back({{"C_kPa", s.material.law.C},
                      {"unloading_iterations", unloaded->history.back().iteration},
                      {"unloaded_volume_mL", smp.curve.volume_mL.front()},
                      {"curve_newton_iterations", smp.curve.newton_iterations},
                      {"normalised_mismatch", smp.g},
                      {"seconds", seconds}});
    if (m_log)
      *m_log << "passive calibration " << evaluations << ": C = " << std::setprecision(4) << s.material.law.C
             << " kPa: V0 = " << smp.curve.volume_mL.front() << " mL, normalised mismatch " << smp.g << " ("
             << smp.curve.newton_iterations << " Newton iterations in the curve, " << std::setprecision(3) << seconds
             << " s with the unloading)" << std::endl;
    m_unloaded.emplace(log_C, std::move(*unloaded));
    return smp;
  }

  /// The reference unloaded with exp(log_C) (a C this search evaluated).
  UnloadingResult& unloaded_at(double log_C) { return m_unloaded.at(log_C); }

  int evaluations = 0;
  json report = json::array();  ///< one entry per evaluation
  std::string last_failure;

 private:
  /// The unloaded reference of the evaluated C nearest in log C: the next unloading starts there.
  const Eigen::Matrix3Xd* nearest_reference(double log_C) const {
    const Eigen::Matrix3Xd* best = nullptr;
    double distance = 0;
    for (const auto& [l, u] : m_unloaded)
      if (!best || std::abs(l - log_C) < distance) {
        best = &u.mesh.mesh.rest;
        distance = std::abs(l - log_C);
      }
    return best;
  }

  std::optional<Sample> failed(double log_C, Clock::time_point t0, const std::string& why) {
    const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    last_failure = why;
    report.push_back({{"C_kPa", std::exp(log_C)}, {"failed", why}, {"seconds", seconds}});
    if (m_log)
      *m_log << "passive calibration " << evaluations << ": C = " << std::exp(log_C) << " kPa " << why << std::endl;
    return std::nullopt;
  }

  const HeartSimulation& m_sim;
  const meshing::VoxelMesh& m_image;
  const NormalisedCurve& m_target;
  std::ostream* m_log;
  std::map<double, UnloadingResult> m_unloaded;  // by log C
};

/// The search walked to the end of its range or of its budget without a sign change.
[[noreturn]] void fail_unbracketed(const HeartSimulation& sim, const RootBracket& r, int evaluations,
                                   const std::string& last_failure) {
  const PassiveCalibrationParams& p = sim.passive_calibration;
  if (evaluations >= p.max_evaluations)
    CARDIO_FAIL(p.where << ": passive calibration did not converge: no sign change of the mismatch within "
                        << "passive_calibration.max_evaluations = " << p.max_evaluations
                        << " unloadings and curves (last normalised mismatch " << r.g_a
                        << " at C = " << std::exp(r.log_a) << " kPa; see run.log); raise max_evaluations");
  CARDIO_FAIL(p.where << ": passive calibration: no Guccione C between " << p.min_scale * sim.material.law.C << " and "
                      << p.max_scale * sim.material.law.C << " kPa makes the passive curve of '" << p.cavity
                      << "', unloaded with that C, follow the Klotz curve (last normalised mismatch " << r.g_a
                      << " at C = " << std::exp(r.log_a) << " kPa after " << evaluations
                      << " of passive_calibration.max_evaluations = " << p.max_evaluations << " evaluations"
                      << (last_failure.empty() ? "" : "; last failure: " + last_failure)
                      << "): the curve's shape also depends on material.b_f, b_t and b_fs");
}

}  // namespace

CalibrationResult calibrate_passive_stiffness(const HeartSimulation& sim, const meshing::VoxelMesh& image,
                                              std::ostream* log) {
  const auto t0 = Clock::now();
  const PassiveCalibrationParams& p = sim.passive_calibration;
  const double EDV = meshing::cavity_volume(cavity_named(image, p.cavity, p.where), image.mesh.rest) / 1000.0;
  const double EDP = sim.unloading.pressure_of(p.cavity) / units::kMmHgInKPa;
  const double B = klotz_curve(0.0, EDV, EDP).B;  // the normalised shape depends on EDP only
  const NormalisedCurve target = [B](double t) { return std::pow(t, 1.0 / B); };
  // One root search on log C of the mismatch after unloading with that same C: its root is where
  // the unloading and the fit agree (a fit at a fixed reference moves C by 30-90 % once the
  // reference is unloaded again with it, so alternating them spent most curves on stale references).
  UnloadedSearch search(sim, image, target, log);
  std::map<double, Sample> samples;  // by log C
  const MismatchAt mismatch = [&](double log_C) -> std::optional<double> {
    if (search.evaluations >= p.max_evaluations) return std::nullopt;
    auto s = search.at(log_C);
    if (!s) return std::nullopt;
    samples[log_C] = *s;
    return s->g;
  };
  const double log_C0 = std::log(sim.material.law.C);
  const std::optional<double> g0 = mismatch(log_C0);
  if (!g0) CARDIO_FAIL(p.where << ": passive calibration: the unloaded heart does not inflate with material.C");
  Sample best = samples.at(log_C0);
  const double log_tol = std::log1p(p.tolerance);
  if (std::abs(*g0) > kMismatchTol) {
    // A curve more concave than the target (g > 0: the volume rises too early) is too soft: stiffen.
    const RootBracket r =
        bracket_root(mismatch, log_C0, *g0, *g0 > 0 ? std::log(2.0) : -std::log(2.0),
                     std::log(p.min_scale * sim.material.law.C), std::log(p.max_scale * sim.material.law.C));
    if (!r.log_b) fail_unbracketed(sim, r, search.evaluations, search.last_failure);
    const Refined refined = refine(search, samples.at(r.log_a), samples.at(*r.log_b), log_tol, p.max_evaluations);
    if (!refined.converged)
      CARDIO_FAIL(p.where << ": passive calibration did not converge: C is bracketed but not known to "
                          << "passive_calibration.tolerance = " << p.tolerance << " after "
                          << "passive_calibration.max_evaluations = " << p.max_evaluations
                          << " unloadings and curves (best C = " << std::exp(refined.best.log_C)
                          << " kPa, normalised mismatch " << refined.best.g << "; see run.log); raise max_evaluations");
    best = refined.best;
  }
  CalibrationResult r;
  r.C_kPa = std::exp(best.log_C);
  r.unloaded = std::move(search.unloaded_at(best.log_C));
  r.model = best.curve;
  r.klotz = klotz_at(r.model, EDV);
  if (log)
    *log << "passive calibration: C = " << r.C_kPa << " kPa after " << search.evaluations
         << " unloadings and curves, normalised mismatch " << best.g << std::endl;
  r.report = calibration_report(sim, r, EDV, std::move(search.report),
                                std::chrono::duration<double>(Clock::now() - t0).count());
  return r;
}

void write_calibration_outputs(const std::filesystem::path& outdir, const CalibrationResult& r) {
  io::CsvTable t;
  t.columns = {"pressure_mmHg", "volume_klotz_mL", "volume_model_mL"};
  for (std::size_t i = 0; i < r.model.pressure_mmHg.size(); ++i)
    t.add_row({io::CsvTable::number(r.model.pressure_mmHg[i]), io::CsvTable::number(r.klotz.volume_mL[i]),
               io::CsvTable::number(r.model.volume_mL[i])});
  io::write_csv(outdir / "klotz_fit.csv", t);
  io::write_json(outdir / "passive_calibration.json", r.report);
}

}  // namespace cardio::pipeline
