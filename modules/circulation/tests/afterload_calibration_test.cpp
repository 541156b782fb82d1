// The systemic arteries' R and C found for a target aortic pressure (afterload_calibration.hpp):
// the fit against an independent integration of the R-L-C Windkessel, and on the 0-D loop of
// Regazzoni et al. 2022, where the calibrated loop, left to itself, beats at the target pressures
// and the blood volume is conserved.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <string>

#include "cardio/circulation/afterload_calibration.hpp"
#include "cardio/circulation/closed_loop.hpp"
#include "cardio/circulation/closed_loop_beats.hpp"
#include "cardio/core/error.hpp"

namespace cardio::circulation {
namespace {

VesselParams arteries(double r, double c) {
  VesselParams p;
  p.resistance_mmHg_ms_per_mL = r;
  p.compliance_mL_per_mmHg = c;
  p.inductance_mmHg_ms2_per_mL = 5e3;  // 5e-3 mmHg s^2/mL, Regazzoni et al.'s systemic arteries
  return p;
}

/// A heart's ejection: 70 mL as a half sine over the first 300 ms of an 800 ms beat [mL/ms].
double ejection(double t_ms) {
  const double t = std::fmod(t_ms, 800.0);
  return t < 300.0 ? 70.0 * std::numbers::pi / 600.0 * std::sin(std::numbers::pi * t / 300.0) : 0.0;
}

/// The R-L-C arteries under ejection() into veins at 10 mmHg by classical Runge-Kutta (0.01 ms) over
/// 80 beats from rest: the largest and smallest pressure of the last (an independent reference).
PulseRange runge_kutta_pressure(const VesselParams& a) {
  const double R = a.resistance_mmHg_ms_per_mL, C = a.compliance_mL_per_mmHg, L = a.inductance_mmHg_ms2_per_mL;
  const auto rhs = [&](double t, double p, double q, double& dp, double& dq) {
    dp = (ejection(t) - q) / C;
    dq = (p - 10.0 - R * q) / L;
  };
  double p = 10, q = 0;
  PulseRange range{-1e9, 1e9};
  const double h = 0.01;
  for (long k = 0; k < 80 * 80000; ++k) {
    const double t = k * h;
    double k1p, k1q, k2p, k2q, k3p, k3q, k4p, k4q;
    rhs(t, p, q, k1p, k1q);
    rhs(t + h / 2, p + h / 2 * k1p, q + h / 2 * k1q, k2p, k2q);
    rhs(t + h / 2, p + h / 2 * k2p, q + h / 2 * k2q, k3p, k3q);
    rhs(t + h, p + h * k3p, q + h * k3q, k4p, k4q);
    p += h / 6 * (k1p + 2 * k2p + 2 * k3p + k4p);
    q += h / 6 * (k1q + 2 * k2q + 2 * k3q + k4q);
    if (k >= 79 * 80000) range.max_mmHg = std::max(range.max_mmHg, p), range.min_mmHg = std::min(range.min_mmHg, p);
  }
  return range;
}

/// One beat of ejection() observed as a heart's steps of 0.085 ms, at `p` and 10 mmHg venous.
void observe_beat(AfterloadCalibration& a, double p_mmHg) {
  const double dt = 800.0 / 9412;
  for (int k = 0; k < 9412; ++k) a.observe(dt, p_mmHg, 10.0, ejection((k + 0.5) * dt));
}

TEST(AfterloadCalibration, ThePeriodicPressureMatchesAnIndependentIntegration) {
  std::vector<double> bins(800);
  for (int k = 0; k < 800; ++k) bins[std::size_t(k)] = ejection(k + 0.5);
  for (const VesselParams& a : {arteries(800, 1.2), arteries(500, 2.0), arteries(1200, 0.8)}) {
    const PulseRange ours = periodic_arterial_pressure(bins, 1.0, a, 10.0);
    const PulseRange reference = runge_kutta_pressure(a);
    // Backward Euler on 1 ms bins against RK4 at 0.01 ms: within 1 % of the pulse pressure.
    const double pulse = reference.max_mmHg - reference.min_mmHg;
    EXPECT_NEAR(ours.max_mmHg, reference.max_mmHg, 0.01 * pulse) << a.resistance_mmHg_ms_per_mL;
    EXPECT_NEAR(ours.min_mmHg, reference.min_mmHg, 0.01 * pulse) << a.resistance_mmHg_ms_per_mL;
    // The periodic mean is p_VEN + R mean(Q): 10 + R 70 mL / 800 ms.
    std::printf("R %.2f mmHg s/mL, C %.1f mL/mmHg: %.2f/%.2f mmHg (RK4 %.2f/%.2f)\n",
                1e-3 * a.resistance_mmHg_ms_per_mL, a.compliance_mL_per_mmHg, ours.max_mmHg, ours.min_mmHg,
                reference.max_mmHg, reference.min_mmHg);
  }
}

TEST(AfterloadCalibration, FindsTheArteriesThatGiveTheTargetUnderTheMeasuredEjection) {
  const VesselParams truth = arteries(900, 1.5);
  const PulseRange target = runge_kutta_pressure(truth);
  AfterloadCalibration a({target.max_mmHg, target.min_mmHg, 1.0}, arteries(700, 1.2));
  EXPECT_EQ(a.next(1).compliance_mL_per_mmHg, 1.2);  // the first onset: nothing to measure yet
  EXPECT_TRUE(a.history().empty());
  observe_beat(a, 100.0);  // the beat's own pressure lags (the arteries fill over R C): not used
  const VesselParams found = a.next(2);
  ASSERT_EQ(a.history().size(), 1u);
  EXPECT_NEAR(a.history()[0].aortic_flow_mL_per_s, 70.0 / 0.8, 1e-4);  // the midpoint rule on 0.085 ms
  EXPECT_NEAR(found.resistance_mmHg_ms_per_mL, 900.0, 0.01 * 900.0);
  EXPECT_NEAR(found.compliance_mL_per_mmHg, 1.5, 0.02 * 1.5);
  EXPECT_EQ(found.inductance_mmHg_ms2_per_mL, 5e3);
  EXPECT_FALSE(a.reached());  // the beat's own 100/100 mmHg
  std::printf("target %.2f/%.2f mmHg: R %.4f mmHg s/mL (truth 0.9), C %.4f mL/mmHg (truth 1.5)\n", target.max_mmHg,
              target.min_mmHg, 1e-3 * found.resistance_mmHg_ms_per_mL, found.compliance_mL_per_mmHg);
  // At most a factor 2 a beat.
  AfterloadCalibration far({target.max_mmHg, target.min_mmHg, 1.0}, arteries(100, 10.0));
  far.next(1);
  observe_beat(far, 100.0);
  const VesselParams step = far.next(2);
  EXPECT_EQ(step.resistance_mmHg_ms_per_mL, 200.0);
  EXPECT_EQ(step.compliance_mL_per_mmHg, 5.0);
  EXPECT_THROW(a.observe(1.0, std::nan(""), 10, 0), Error);
  EXPECT_THROW(AfterloadCalibration({80, 120, 3}, arteries(800, 1.2)), Error);
}

TEST(AfterloadCalibration, ACheckpointContinuesTheSameSteps) {
  AfterloadCalibration straight({120, 80, 3}, arteries(800, 1.2));
  AfterloadCalibration first = straight;
  const auto beat = [](AfterloadCalibration& a, int k) {
    a.observe(0.5, 100 + 10 * k, 12, 0.01);  // mid-beat: the running sums are checkpointed too
    observe_beat(a, 110 + k);
    return a.next(k + 1);
  };
  straight.next(1), first.next(1);
  for (int k = 1; k <= 2; ++k) beat(straight, k), beat(first, k);
  straight.observe(0.5, 111, 12, 0.2);
  first.observe(0.5, 111, 12, 0.2);
  BinaryWriter w;
  first.save(w);
  AfterloadCalibration resumed({120, 80, 3}, arteries(1, 1));
  BinaryReader r(w.bytes(), "test checkpoint");
  resumed.restore(r);
  for (int k = 3; k <= 5; ++k) {
    const VesselParams s = beat(straight, k), c = beat(resumed, k);
    EXPECT_EQ(s.resistance_mmHg_ms_per_mL, c.resistance_mmHg_ms_per_mL) << k;
    EXPECT_EQ(s.compliance_mL_per_mmHg, c.compliance_mL_per_mmHg) << k;
  }
  EXPECT_EQ(resumed.history().size(), straight.history().size());
}

TEST(AfterloadCalibration, TheCalibratedLoopBeatsAtTheTargetPressures) {
  const ClosedLoopParams params = ClosedLoopParams::regazzoni2022();
  ClosedLoop free(params, ClosedLoopState::regazzoni2022(params));
  const PeriodicRun run = run_until_periodic(free, 1.0, 1e-4, 100);
  std::printf("paper model: aortic %.1f/%.1f mmHg\n", run.beats.back().aortic_systolic_mmHg,
              run.beats.back().aortic_diastolic_mmHg);
  for (const auto& [systolic, diastolic] : {std::pair{120.0, 80.0}, std::pair{105.0, 60.0}}) {
    ClosedLoop m(params, ClosedLoopState::regazzoni2022(params));
    AfterloadCalibration a({systolic, diastolic, 2.0}, params.systemic_arteries);
    const double blood0 = m.total_volume_mL();
    // As a beating heart with simulation.stop_when_periodic: beat after beat until the pressures are
    // on target at an onset and the LV's EDV changed by less than 0.1 % in the beat before.
    int beat = 1;
    for (double edv = 0, edv_change = 1; beat <= 40; ++beat) {
      const VesselParams p = a.next(beat);
      if (a.reached() && edv_change < 1e-3) break;
      m.set_systemic_arteries(p.resistance_mmHg_ms_per_mL, p.compliance_mL_per_mmHg);
      double beat_edv = 0;
      for (int k = 0; k < 800; ++k) {
        m.step(1.0);
        a.observe(1.0, m.pressure_mmHg(Compartment::systemic_arteries), m.pressure_mmHg(Compartment::systemic_veins),
                  m.valve_flow_mL_per_ms(Valve::aortic));
        beat_edv = std::max(beat_edv, m.volume_mL(Compartment::left_ventricle));
      }
      edv_change = std::abs(beat_edv - edv) / beat_edv;
      edv = beat_edv;
    }
    ASSERT_TRUE(a.reached()) << systolic << "/" << diastolic;
    EXPECT_LE(beat, 25);
    EXPECT_NEAR(m.total_volume_mL(), blood0, 1e-12 * blood0);
    // The loop left to itself with the found R and C (its own beat statistics) beats at the target.
    const PeriodicRun settled = run_until_periodic(m, 1.0, 1e-4, 100);
    EXPECT_NEAR(settled.beats.back().aortic_systolic_mmHg, systolic, 3.0);
    EXPECT_NEAR(settled.beats.back().aortic_diastolic_mmHg, diastolic, 3.0);
    std::printf("target %.0f/%.0f mmHg: reached at beat %d (R %.3f mmHg s/mL, C %.2f mL/mmHg); periodic %.1f/%.1f\n",
                systolic, diastolic, beat, 1e-3 * a.systemic_arteries().resistance_mmHg_ms_per_mL,
                a.systemic_arteries().compliance_mL_per_mmHg, settled.beats.back().aortic_systolic_mmHg,
                settled.beats.back().aortic_diastolic_mmHg);
  }
}

}  // namespace
}  // namespace cardio::circulation
