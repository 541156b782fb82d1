#include "heart/passive_calibration.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <map>
#include <optional>
#include <utility>

#include "cardio/core/error.hpp"
#include "cardio/core/units.hpp"
#include "heart/passive_inflation.hpp"
#include "heart/stiffness_search.hpp"

namespace cardio::pipeline {
namespace {

using namespace stiffness_search;
using Clock = std::chrono::steady_clock;

/// The bracket's secant-aimed step is at most this many of its base steps (x4 in C for log 2): the
/// mismatch steepens towards soft C, so the secant through two stiff samples overshoots, and a C
/// that does not inflate costs a Newton failure (on the real biventricle at 2.5 mm, C = 0.125 kPa
/// after 1 kPa: unconverged after about 15 minutes in the first unloading's inflation) before the step is halved.
constexpr double kMaxBracketSteps = 2.0;
/// |d mismatch / d log C| for the first probe's aim, at the shallow end of what was measured (0.07-0.11
/// on the LV phantom, 0.10 on the real biventricle; shallower at stiff C): better past the root than short.
constexpr double kTypicalMismatchSlope = 0.05;

class StiffnessSearch {
 public:
  StiffnessSearch(const HeartSimulation& sim, const meshing::VoxelMesh& mesh, const std::string& cavity,
                  const NormalisedCurve& target, std::ostream* log)
      : m_sim(sim), m_mesh(mesh), m_cavity(cavity), m_target(target), m_log(log) {}

  std::optional<Sample> at(double log_C) {
    ++evaluations;
    const auto t0 = Clock::now();
    Sample s{log_C, 0,
             passive_curve(m_sim, m_mesh, m_cavity, m_sim.passive_calibration.points, std::exp(log_C), m_log)};
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
                                  int points, double C_kPa, std::ostream* log) {
  HeartSimulation s = sim;
  s.material.law.C = C_kPa;
  s.pericardium.reset();  // Klotz et al. 2006 measured their EDPVRs on explanted hearts
  const meshing::CavitySurface& surface = cavity_named(mesh, cavity, sim.passive_calibration.where);
  const double edp_mmHg = sim.unloading.pressure_of(cavity) / units::kMmHgInKPa;
  PassiveInflation inflation(s, mesh, sim.unloading.end_diastolic_pressures,
                             sim.unloading.where + ": unloading.end_diastolic_pressures", log);
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

}  // namespace cardio::pipeline
