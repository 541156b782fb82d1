#include "heart/passive_calibration.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <map>
#include <optional>
#include <sstream>
#include <utility>

#include "cardio/core/error.hpp"
#include "cardio/core/units.hpp"
#include "cardio/io/json.hpp"
#include "cardio/io/series.hpp"
#include "heart/passive_inflation.hpp"

namespace cardio::pipeline {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

/// The root search on log C stops when the bracket, or the last secant step, is narrower than this
/// (0.1 % in C) or the mismatch is below kMismatchTol; after kMaxEvaluations curves it gives up.
constexpr double kLogBracketTol = 1e-3, kMismatchTol = 1e-5;
constexpr int kMaxEvaluations = 30;
/// The bracket's secant-aimed step is at most this many of its base steps (x4 in C for log 2): the
/// mismatch steepens towards soft C, so the secant through two stiff samples overshoots, and a C
/// that does not inflate costs a Newton failure (on the real biventricle at 2.5 mm, C = 0.125 kPa
/// after 1 kPa: over 15 minutes in the first unloading's inflation) before the step is halved.
constexpr double kMaxBracketSteps = 2.0;
/// |d mismatch / d log C| for the first probe's aim, at the shallow end of what was measured (0.07-0.11
/// on the LV phantom, 0.10 on the real biventricle; shallower at stiff C): better past the root than short.
constexpr double kTypicalMismatchSlope = 0.05;

const meshing::CavitySurface& cavity_named(const meshing::VoxelMesh& m, const std::string& name,
                                           const std::string& where) {
  for (const auto& c : m.cavities)
    if (c.name == name) return c;
  CARDIO_FAIL(where << ": passive_calibration.cavity: the mesh has no cavity '" << name << "'");
}

/// Mean of the model's normalised curve minus the target at the curve's inner points (the ends
/// are 0 and 1 for both).
double normalised_mismatch(const PressureVolumeCurve& c, const NormalisedCurve& target) {
  const double V0 = c.volume_mL.front(), span = c.volume_mL.back() - V0, edp = c.pressure_mmHg.back();
  double sum = 0;
  const std::size_t n = c.volume_mL.size();
  for (std::size_t i = 1; i + 1 < n; ++i) sum += (c.volume_mL[i] - V0) / span - target(c.pressure_mmHg[i] / edp);
  return sum / double(std::max<std::size_t>(n - 2, 1));
}

/// Where the line through (x0, g0) and (x1, g1) crosses g = 0.
double secant_root(double x0, double g0, double x1, double g1) { return x0 - g0 * (x1 - x0) / (g1 - g0); }

/// One evaluation of the search: the curve at C and its mismatch (nullopt: did not inflate).
struct Sample {
  double log_C = 0, g = 0;
  PressureVolumeCurve curve;
};

class StiffnessSearch {
 public:
  StiffnessSearch(const HeartSimulation& sim, const meshing::VoxelMesh& mesh, const std::string& cavity,
                  const NormalisedCurve& target, std::ostream* log)
      : m_sim(sim), m_mesh(mesh), m_cavity(cavity), m_target(target), m_log(log) {}

  std::optional<Sample> at(double log_C) {
    ++evaluations;
    const auto t0 = Clock::now();
    Sample s{log_C, 0, passive_curve(m_sim, m_mesh, m_cavity, m_sim.passive_calibration.points, std::exp(log_C))};
    const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    if (s.curve.volume_mL.empty()) {
      if (m_log)
        *m_log << "  passive fit: C = " << std::setprecision(4) << std::exp(log_C) << " kPa: did not inflate ("
               << std::setprecision(3) << seconds << " s)" << std::endl;
      return std::nullopt;
    }
    s.g = normalised_mismatch(s.curve, m_target);
    if (m_log)
      *m_log << "  passive fit: C = " << std::setprecision(4) << std::exp(log_C) << " kPa: normalised mismatch " << s.g
             << " (" << s.curve.newton_iterations << " Newton iterations, " << std::setprecision(3) << seconds << " s)"
             << std::endl;
    return s;
  }
  int evaluations = 0;

 private:
  const HeartSimulation& m_sim;
  const meshing::VoxelMesh& m_mesh;
  const std::string& m_cavity;
  const NormalisedCurve& m_target;
  std::ostream* m_log;
};

/// The root of a bracket [a, b] of opposite signs, to log_tol in log C: the secant through the two latest samples when
/// it falls inside the bracket (superlinear on the smooth, nearly linear mismatch of log C), else
/// regula falsi on the bracket; every sample narrows the bracket.
struct Refined {
  Sample best;
  bool converged = false;  ///< to log_tol or kMismatchTol (not stopped by the budget or a failure)
};

template <class Search>
Refined refine(Search& search, Sample a, Sample b, double log_tol, int max_evaluations) {
  Refined r{std::abs(a.g) < std::abs(b.g) ? a : b, false};
  Sample latest = b, previous = a;
  const auto zero_of = [](const Sample& p, const Sample& q) { return secant_root(p.log_C, p.g, q.log_C, q.g); };
  for (;;) {
    r.converged = std::abs(b.log_C - a.log_C) <= log_tol || std::abs(r.best.g) <= kMismatchTol;
    if (r.converged || search.evaluations >= max_evaluations) return r;
    const double lo = std::min(a.log_C, b.log_C), hi = std::max(a.log_C, b.log_C);
    double next = latest.g != previous.g ? zero_of(latest, previous) : zero_of(a, b);
    if (!(next > lo && next < hi)) next = zero_of(a, b);
    const auto s = search.at(next);
    if (!s) return r;  // between two that inflated: does not happen for a smooth law; keep the best
    if (std::abs(s->g) < std::abs(r.best.g)) r.best = *s;
    ((s->g > 0) == (a.g > 0) ? a : b) = *s;
    previous = latest;
    latest = *s;
    // A secant step below the tolerance: the root is that close to the latest sample.
    if (std::abs(latest.log_C - previous.log_C) < log_tol) {
      r.converged = true;
      return r;
    }
  }
}

}  // namespace

double KlotzCurve::pressure_mmHg(double V_mL) const { return V_mL > V0_mL ? A_mmHg * std::pow(V_mL - V0_mL, B) : 0.0; }

double KlotzCurve::volume_mL(double P_mmHg) const { return V0_mL + std::pow(std::max(P_mmHg, 0.0) / A_mmHg, 1.0 / B); }

KlotzCurve klotz_curve(double V0_mL, double EDV_mL, double EDP_mmHg) {
  CARDIO_CHECK(EDV_mL > V0_mL,
               "the Klotz curve needs EDV (" << EDV_mL << " mL) above the unloaded volume V0 (" << V0_mL << " mL)");
  CARDIO_CHECK(EDP_mmHg > 0 && EDP_mmHg < 0.8 * kKlotzAn_mmHg, "the Klotz curve needs an end-diastolic pressure in (0, "
                                                                   << 0.8 * kKlotzAn_mmHg << ") mmHg, got "
                                                                   << EDP_mmHg);
  const double V30 = V0_mL + (EDV_mL - V0_mL) / std::pow(EDP_mmHg / kKlotzAn_mmHg, 1.0 / kKlotzBn);
  KlotzCurve k;
  k.V0_mL = V0_mL;
  k.B = std::log(EDP_mmHg / 30.0) / std::log((EDV_mL - V0_mL) / (V30 - V0_mL));
  k.A_mmHg = EDP_mmHg / std::pow(EDV_mL - V0_mL, k.B);
  return k;
}

PressureVolumeCurve passive_curve(const HeartSimulation& sim, const meshing::VoxelMesh& mesh, const std::string& cavity,
                                  int points, double C_kPa) {
  HeartSimulation s = sim;
  s.material.law.C = C_kPa;
  s.pericardium.reset();  // Klotz et al. 2006 measured their EDPVRs on explanted hearts
  const meshing::CavitySurface& surface = cavity_named(mesh, cavity, sim.passive_calibration.where);
  const double edp_mmHg = sim.unloading.pressure_of(cavity) / units::kMmHgInKPa;
  PassiveInflation inflation(s, mesh, sim.unloading.end_diastolic_pressures,
                             sim.unloading.where + ": unloading.end_diastolic_pressures");
  PressureVolumeCurve c;
  c.pressure_mmHg.push_back(0.0);
  c.volume_mL.push_back(meshing::cavity_volume(surface, mesh.mesh.rest) / 1000.0);
  std::vector<double> fractions;
  for (int i = 1; i <= points; ++i) fractions.push_back(double(i) / points);
  const InflationOutcome out = inflation.inflate_through(fractions, [&](double s_frac, const Eigen::Matrix3Xd& x) {
    c.pressure_mmHg.push_back(s_frac * edp_mmHg);
    c.volume_mL.push_back(meshing::cavity_volume(surface, x) / 1000.0);
  });
  if (!out.converged) return {};
  c.newton_iterations = out.newton_iterations;
  return c;
}

RootBracket bracket_root(const MismatchAt& mismatch, double log_start, double g_start, double step, double log_lo,
                         double log_hi) {
  constexpr int kMaxShortenings = 4;
  RootBracket r{log_start, g_start, std::nullopt, std::nullopt, false};
  std::optional<std::pair<double, double>> previous;  // the sample before a, on the same side
  int shortenings = 0;
  // The first probe aims at the root along the typical slope (or a sixteenth of the step at least):
  // a start near the root (a re-run at the fitted C) then samples near it, not a factor 2 away.
  double s_first = step * std::clamp(1.2 * std::abs(g_start) / (kTypicalMismatchSlope * std::abs(step)), 1.0 / 16, 1.0);
  for (;;) {
    double s = std::exchange(s_first, 0.0);
    if (s == 0.0) s = step;
    if (previous && previous->second != r.g_a) {
      const double root = secant_root(r.log_a, r.g_a, previous->first, previous->second);
      s = step * std::clamp(1.2 * (root - r.log_a) / step, 0.25, kMaxBracketSteps);
    }
    const double l = std::clamp(r.log_a + s, log_lo, log_hi);
    if (std::abs(l - r.log_a) < 1e-12) return r;  // at the end of the range
    const std::optional<double> g = mismatch(l);
    if (!g) {
      r.softer_did_not_inflate = true;
      if (++shortenings > kMaxShortenings) return r;
      step *= 0.5;
      previous.reset();  // aim by halving from here on
      continue;
    }
    if ((*g > 0) != (r.g_a > 0)) {
      r.log_b = l;
      r.g_b = *g;
      return r;
    }
    previous = {r.log_a, r.g_a};
    r.log_a = l;
    r.g_a = *g;
  }
}

StiffnessFit fit_stiffness(const HeartSimulation& sim, const meshing::VoxelMesh& mesh, const std::string& cavity,
                           const NormalisedCurve& target, std::ostream* log) {
  const PassiveCalibrationParams& p = sim.passive_calibration;
  const double log_lo = std::log(p.min_scale * sim.material.law.C), log_hi = std::log(p.max_scale * sim.material.law.C);
  StiffnessSearch search(sim, mesh, cavity, target, log);
  std::map<double, Sample> samples;  // by log C
  const MismatchAt mismatch = [&](double log_C) -> std::optional<double> {
    auto s = search.at(log_C);
    if (!s) return std::nullopt;
    samples[log_C] = *s;
    return s->g;
  };
  const std::optional<double> g0 = mismatch(std::log(sim.material.law.C));
  if (!g0) CARDIO_FAIL(p.where << ": passive calibration: the unloaded heart does not inflate with material.C");
  if (std::abs(*g0) <= kMismatchTol) {  // e.g. the last round of calibrate_passive_stiffness
    const Sample& s = samples.begin()->second;
    return {std::exp(s.log_C), s.curve, search.evaluations, s.g};
  }
  // A curve more concave than the target (g > 0: the volume rises too early) is too soft: stiffen.
  const RootBracket r = bracket_root(mismatch, std::log(sim.material.law.C), *g0,
                                     *g0 > 0 ? std::log(2.0) : -std::log(2.0), log_lo, log_hi);
  if (!r.log_b)
    CARDIO_FAIL(p.where << ": passive calibration: no Guccione C between " << std::exp(log_lo) << " and "
                        << std::exp(log_hi) << " kPa makes the passive curve of '" << cavity
                        << "' follow the target (last normalised mismatch " << r.g_a << " at C = " << std::exp(r.log_a)
                        << " kPa" << (r.softer_did_not_inflate ? "; softer C did not inflate" : "")
                        << "): the curve's shape also depends on material.b_f, b_t and b_fs");
  const Sample best = refine(search, samples.at(r.log_a), samples.at(*r.log_b), kLogBracketTol, kMaxEvaluations).best;
  return {std::exp(best.log_C), best.curve, search.evaluations, best.g};
}

namespace {

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

}  // namespace

namespace {

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
    const WarmStart start = nearest_reference(log_C);
    std::optional<UnloadingResult> unloaded;
    try {
      unloaded = unload_reference(s, m_image, m_log, start);
    } catch (const Error& e) {
      if (evaluations == 1) throw;  // at material.C: a problem of the config, not of the search
      return failed(log_C, t0, std::string("did not unload: ") + e.what());
    }
    Sample smp{log_C, 0,
               passive_curve(s, unloaded->mesh, m_sim.passive_calibration.cavity, m_sim.passive_calibration.points,
                             s.material.law.C)};
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
  WarmStart nearest_reference(double log_C) const {
    WarmStart best;
    double distance = 0;
    for (const auto& [l, u] : m_unloaded)
      if (!best.X || std::abs(l - log_C) < distance) {
        best = {&u.mesh.mesh.rest, std::exp(l)};
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
    if (!r.log_b && search.evaluations >= p.max_evaluations)
      CARDIO_FAIL(p.where << ": passive calibration did not converge: no sign change of the mismatch within "
                          << "passive_calibration.max_evaluations = " << p.max_evaluations
                          << " unloadings and curves (last normalised mismatch " << r.g_a
                          << " at C = " << std::exp(r.log_a) << " kPa; see run.log); raise max_evaluations");
    if (!r.log_b)
      CARDIO_FAIL(p.where << ": passive calibration: no Guccione C between " << p.min_scale * sim.material.law.C
                          << " and " << p.max_scale * sim.material.law.C << " kPa makes the passive curve of '"
                          << p.cavity << "', unloaded with that C, follow the Klotz curve (last normalised mismatch "
                          << r.g_a << " at C = " << std::exp(r.log_a) << " kPa after " << search.evaluations
                          << " of passive_calibration.max_evaluations = " << p.max_evaluations << " evaluations"
                          << (search.last_failure.empty() ? "" : "; last failure: " + search.last_failure)
                          << "): the curve's shape also depends on material.b_f, b_t and b_fs");
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
