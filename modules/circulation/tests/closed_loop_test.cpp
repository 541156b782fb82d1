// Closed-loop circulation (Regazzoni et al. 2022): activation, validation, blood-volume conservation,
// periodic state, physiological ranges, step-size independence, the pressure-driven interface and
// its derivative, checkpoints.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <numbers>
#include <string>

#include "cardio/circulation/closed_loop.hpp"
#include "cardio/circulation/closed_loop_beats.hpp"
#include "cardio/core/error.hpp"

namespace cardio::circulation {
namespace {

ClosedLoop paper_model() {
  const ClosedLoopParams p = ClosedLoopParams::regazzoni2022();
  return ClosedLoop(p, ClosedLoopState::regazzoni2022(p));
}

std::string error_of(const ClosedLoopParams& p) {
  try {
    p.validate();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(ClosedLoop, ActivationFollowsTheRaisedCosineOfThePaper) {
  const ClosedLoopParams p = ClosedLoopParams::regazzoni2022();
  const ChamberParams& lv = p.left_ventricle;  // t_C = 0, T_C = 272 ms, T_R = 136 ms
  EXPECT_NEAR(chamber_activation(lv, 0.0, 800), 0.0, 1e-15);
  EXPECT_NEAR(chamber_activation(lv, 136.0, 800), 0.5, 1e-15);
  EXPECT_NEAR(chamber_activation(lv, 272.0, 800), 1.0, 1e-15);
  EXPECT_NEAR(chamber_activation(lv, 272.0 + 68.0, 800), 0.5, 1e-15);
  EXPECT_NEAR(chamber_activation(lv, 500.0, 800), 0.0, 1e-15);
  EXPECT_NEAR(chamber_activation(lv, 800.0 + 136.0, 800), 0.5, 1e-12);  // periodic
  // Left atrium: t_C = 640 ms, T_C = T_R = 136 ms; its relaxation wraps into the next beat.
  const ChamberParams& la = p.left_atrium;
  EXPECT_NEAR(chamber_activation(la, 640.0 + 68.0, 800), 0.5, 1e-15);
  EXPECT_NEAR(chamber_activation(la, 24.0, 800), 0.5 * (1 + std::cos(std::numbers::pi * 48.0 / 136.0)), 1e-14);
  EXPECT_NEAR(chamber_elastance(la, 776.0, 800), 0.09 + 0.07, 1e-15);  // E_B + E_A at the peak
}

TEST(ClosedLoop, BadParametersNameTheKeyAndTheRange) {
  ClosedLoopParams p = ClosedLoopParams::regazzoni2022();
  EXPECT_EQ(error_of(p), "");
  p.left_atrium.active_elastance_mmHg_per_mL = -1;
  EXPECT_NE(error_of(p).find("closed_loop.left_atrium.active_elastance_mmHg_per_mL = -1 mmHg/mL: expected a finite "
                             "value > 0"),
            std::string::npos)
      << error_of(p);
  p = ClosedLoopParams::regazzoni2022();
  p.right_ventricle.relaxation_ms = 600;
  EXPECT_NE(error_of(p).find("closed_loop.right_ventricle.relaxation_ms = 600 ms: contraction_ms + relaxation_ms"),
            std::string::npos)
      << error_of(p);
  p = ClosedLoopParams::regazzoni2022();
  p.valves.closed_resistance_mmHg_ms_per_mL = 1.0;
  EXPECT_NE(error_of(p).find("closed_loop.valves.closed_resistance_mmHg_ms_per_mL = 1 mmHg ms/mL: expected a finite "
                             "value > open_resistance_mmHg_ms_per_mL"),
            std::string::npos)
      << error_of(p);
  p = ClosedLoopParams::regazzoni2022();
  p.pulmonary_veins.compliance_mL_per_mmHg = std::nan("");
  EXPECT_NE(error_of(p).find("closed_loop.pulmonary_veins.compliance_mL_per_mmHg = nan"), std::string::npos)
      << error_of(p);
  p = ClosedLoopParams::regazzoni2022();
  p.period_ms = 50;
  EXPECT_NE(error_of(p).find("closed_loop.period_ms = 50 ms: expected a value in [200, 3000]"), std::string::npos);
  p = ClosedLoopParams::regazzoni2022();
  p.left_ventricle.contraction_onset_ms = 800;
  EXPECT_NE(error_of(p).find("closed_loop.left_ventricle.contraction_onset_ms = 800 ms: expected a value in [0, "
                             "period_ms = 800)"),
            std::string::npos);
  p = ClosedLoopParams::regazzoni2022();
  p.systemic_veins.inductance_mmHg_ms2_per_mL = -1;
  EXPECT_THROW(ClosedLoop(p, ClosedLoopState::regazzoni2022(ClosedLoopParams::regazzoni2022())), Error);
  ClosedLoopState s = ClosedLoopState::regazzoni2022(ClosedLoopParams::regazzoni2022());
  s.volume_mL[1] = -5;
  try {
    ClosedLoop(ClosedLoopParams::regazzoni2022(), s);
    ADD_FAILURE() << "a negative volume was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("left_ventricle = -5 mL"), std::string::npos) << e.what();
  }
  ClosedLoop m = paper_model();
  EXPECT_THROW(m.step(0.0), Error);
  EXPECT_THROW(m.step_with_pressures(1.0, {std::nan(""), 10.0}), Error);
}

TEST(ClosedLoop, TotalBloodVolumeIsConservedOverManyBeats) {
  ClosedLoop m = paper_model();
  const double v0 = m.total_volume_mL();
  EXPECT_NEAR(v0, 3025.0, 1e-9);  // the paper's initial state: 395 mL heart + 96 + 1800 + 350 + 384
  double worst = 0;
  for (int n = 0; n < 20 * 800; ++n) {  // 20 beats at 1 ms
    m.step(1.0);
    worst = std::max(worst, std::abs(m.total_volume_mL() - v0) / v0);
  }
  for (int n = 0; n < 2 * 8000; ++n) {  // and 2 at 0.1 ms
    m.step(0.1);
    worst = std::max(worst, std::abs(m.total_volume_mL() - v0) / v0);
  }
  EXPECT_LT(worst, 1e-9);
  // Ventricles driven by the caller (any pressures): the loop still neither gains nor loses blood.
  for (int n = 0; n < 4000; ++n) {
    const double t = m.time_ms() + 0.2;
    m.step_with_pressures(0.2, {60 + 60 * std::sin(2 * std::numbers::pi * t / 800), 15 + 15 * std::sin(t / 90)});
    worst = std::max(worst, std::abs(m.total_volume_mL() - v0) / v0);
  }
  EXPECT_LT(worst, 1e-9);
  std::printf("closed loop: worst relative blood-volume drift %.2e over 23 beats\n", worst);
}

TEST(ClosedLoop, ReachesAPeriodicStateWithinTenBeats) {
  std::array<ClosedLoopBeat, 2> limit;
  for (const bool perturbed : {false, true}) {
    const ClosedLoopParams p = ClosedLoopParams::regazzoni2022();
    ClosedLoopState s = ClosedLoopState::regazzoni2022(p);
    if (perturbed) {  // 300 mL moved from the systemic veins to the pulmonary veins
      s.volume_mL[5] -= 300;
      s.volume_mL[7] += 300;
    }
    ClosedLoop m(p, s);
    const PeriodicRun run = run_until_periodic(m, 1.0, 0.01, 40);
    ASSERT_TRUE(run.converged) << "EDV change " << run.edv_change;
    EXPECT_LT(run.edv_change, 0.01);
    EXPECT_LE(run.beats.size(), perturbed ? 20u : 10u);
    const ClosedLoopBeat last = run.beats.back();
    const ClosedLoopBeat next = run_beat(m, 1.0, last.index + 1);
    EXPECT_LT(std::abs(next.lv_edv_mL - last.lv_edv_mL) / last.lv_edv_mL, 0.01);
    EXPECT_LT(std::abs(next.rv_edv_mL - last.rv_edv_mL) / last.rv_edv_mL, 0.01);
    // The 1 % criterion stops while the loop still drifts slowly; the limit cycle itself is reached
    // with a tighter tolerance, and it is the same from both starting states.
    ClosedLoop tight(p, s);
    const PeriodicRun cycle = run_until_periodic(tight, 1.0, 1e-4, 100);
    ASSERT_TRUE(cycle.converged);
    EXPECT_LE(cycle.beats.size(), 60u);
    limit[perturbed] = cycle.beats.back();
    std::printf(
        "closed loop%s: EDV change < 1 %% after %zu beats (LV EDV %.1f mL), < 0.01 %% after %zu (LV EDV %.1f mL)\n",
        perturbed ? " (perturbed)" : "", run.beats.size(), last.lv_edv_mL, cycle.beats.size(),
        limit[perturbed].lv_edv_mL);
  }
  EXPECT_NEAR(limit[0].lv_edv_mL, limit[1].lv_edv_mL, 1e-3 * limit[0].lv_edv_mL);
  EXPECT_NEAR(limit[0].rv_esv_mL, limit[1].rv_esv_mL, 1e-3 * limit[0].rv_esv_mL);
  EXPECT_NEAR(limit[0].aortic_diastolic_mmHg, limit[1].aortic_diastolic_mmHg, 1e-3 * limit[0].aortic_diastolic_mmHg);
}

TEST(ClosedLoop, PaperParametersGiveANormalAdultLeftHeart) {
  ClosedLoop m = paper_model();
  const PeriodicRun run = run_until_periodic(m, 0.1, 1e-4, 100);  // the limit cycle
  ASSERT_TRUE(run.converged);
  const ClosedLoopBeat& b = run.beats.back();
  std::printf("LV EDV %.1f ESV %.1f mL EF %.1f %%, LV peak %.1f, aortic %.1f/%.1f mmHg, CO %.2f L/min\n", b.lv_edv_mL,
              b.lv_esv_mL, 100 * b.lv_ef, b.lv_peak_pressure_mmHg, b.aortic_systolic_mmHg, b.aortic_diastolic_mmHg,
              b.cardiac_output_L_per_min);
  std::printf("RV EDV %.1f ESV %.1f mL EF %.1f %%, RV peak %.1f, pulmonary %.1f/%.1f mmHg\n", b.rv_edv_mL, b.rv_esv_mL,
              100 * b.rv_ef, b.rv_peak_pressure_mmHg, b.pulmonary_systolic_mmHg, b.pulmonary_diastolic_mmHg);
  // Normal adult ranges: LV EF 50-70 % (issue 16; Lang et al. 2015, J Am Soc Echocardiogr 28:1,
  // 52-72 % men); LV EDV 62-150 mL and ESV 21-61 mL (Lang et al. 2015, 2-D echo, men); LV peak /
  // aortic systolic 105-140 mmHg and aortic diastolic 60-90 mmHg (issue 16).
  EXPECT_GE(b.lv_ef, 0.50);
  EXPECT_LE(b.lv_ef, 0.70);
  EXPECT_GE(b.lv_edv_mL, 62.0);
  EXPECT_LE(b.lv_edv_mL, 150.0);
  EXPECT_GE(b.lv_esv_mL, 21.0);
  EXPECT_LE(b.lv_esv_mL, 61.0);
  EXPECT_GE(b.lv_peak_pressure_mmHg, 105.0);
  EXPECT_LE(b.lv_peak_pressure_mmHg, 140.0);
  EXPECT_GE(b.aortic_systolic_mmHg, 105.0);
  EXPECT_LE(b.aortic_systolic_mmHg, 140.0);
  EXPECT_GE(b.aortic_diastolic_mmHg, 60.0);
  EXPECT_LE(b.aortic_diastolic_mmHg, 90.0);
  // The loop is closed: both ventricles eject the same stroke volume once periodic.
  EXPECT_NEAR(b.lv_edv_mL - b.lv_esv_mL, b.rv_edv_mL - b.rv_esv_mL, 0.01 * (b.lv_edv_mL - b.lv_esv_mL));
}

TEST(ClosedLoop, StableAndConsistentFromTenMicrosecondsToOneMillisecond) {
  ClosedLoop start = paper_model();
  run_until_periodic(start, 0.1, 0.01, 40);
  BinaryWriter snapshot;
  start.save(snapshot);
  std::array<ClosedLoopBeat, 3> beat;
  const std::array<double, 3> dts{1.0, 0.1, 0.01};
  for (int k = 0; k < 3; ++k) {
    ClosedLoop m = paper_model();
    BinaryReader in(snapshot.bytes(), "snapshot");
    m.restore(in);
    beat[k] = run_beat(m, dts[k], 1);
    ASSERT_TRUE(std::isfinite(beat[k].lv_edv_mL) && std::isfinite(beat[k].aortic_systolic_mmHg));
  }
  // Backward Euler is first order: the 1 ms beat is further from the 0.01 ms one than the 0.1 ms beat.
  const auto diff = [&](int k) { return std::abs(beat[k].lv_ef - beat[2].lv_ef); };
  EXPECT_LT(diff(1), diff(0));
  EXPECT_LT(diff(0), 0.01);  // one EF point at 1 ms
  EXPECT_LT(std::abs(beat[0].aortic_systolic_mmHg - beat[2].aortic_systolic_mmHg), 2.0);
  EXPECT_LT(std::abs(beat[1].lv_edv_mL - beat[2].lv_edv_mL) / beat[2].lv_edv_mL, 1e-3);
}

}  // namespace
}  // namespace cardio::circulation
