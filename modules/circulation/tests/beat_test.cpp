// The beat-phase state machine on prescribed synthetic volume / pressure sequences.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "cardio/circulation/beat.hpp"
#include "cardio/core/error.hpp"

namespace cardio::circulation {
namespace {

/// A synthetic "ventricle" answering the machine's commands with a prescribed PV behaviour:
/// filling raises V by 0.25 mL/ms up to edv; isovolumic phases hold the target and ramp the
/// pressure (+2 mmHg/ms in contraction, -3 mmHg/ms in relaxation); ejection lowers V by exactly
/// 0.25 mL/ms for eject_steps steps, then V rises by 0.25 (flow reversal).
struct SyntheticHeart {
  double edv = 120;
  int eject_steps = 280;
  double v = 100, p = 0;
  int ejected = 0;

  void step(const CavityCommand& c) {
    switch (c.phase) {
      case Phase::filling:
        ejected = 0;
        v = std::min(edv, v + 0.25);
        p = c.pressure_mmHg;
        break;
      case Phase::isovolumic_contraction:
        v = c.volume_mL;
        p += 2;
        break;
      case Phase::ejection:
        v = ejected++ < eject_steps ? v - 0.25 : v + 0.25;
        p = c.pressure_mmHg;
        break;
      case Phase::isovolumic_relaxation:
        v = c.volume_mL;
        p -= 3;
        break;
    }
  }
};

struct DriveLog {
  std::vector<Phase> sequence;  ///< phases in the order entered
  std::vector<double> onset_volumes;
};

DriveLog drive(BeatCycle& cycle, SyntheticHeart& heart, double t_end, double dt = 1.0,
               const std::vector<double>& edv_per_beat = {}) {
  DriveLog run;
  run.sequence.push_back(cycle.phase());
  for (long n = 0; n * dt < t_end; ++n) {
    const double t = n * dt;
    const int beat = cycle.beat_index();
    if (beat < int(edv_per_beat.size())) heart.edv = edv_per_beat[std::size_t(beat)];
    const CavityCommand c = cycle.command(t);
    EXPECT_EQ(c.phase, cycle.phase());
    heart.step(c);
    cycle.update(t + dt, heart.v, heart.p);
    if (cycle.phase() != run.sequence.back()) {
      run.sequence.push_back(cycle.phase());
      if (cycle.phase() == Phase::isovolumic_contraction) run.onset_volumes.push_back(heart.v);
    }
  }
  return run;
}

BeatParams params() {
  BeatParams b;
  b.end_diastolic_pressure_mmHg = 8;
  b.atrial_pressure_mmHg = 5;
  b.first_onset_ms = 200;
  b.period_ms = 800;
  b.filling_ramp_ms = 100;
  return b;
}

TEST(BeatCycle, GoesThroughTheFourPhasesInOrderWithExactVolumes) {
  BeatCycle cycle("lv", params(), WindkesselParams{}, 0.0, 100.0);
  SyntheticHeart heart;
  const DriveLog run = drive(cycle, heart, 200 + 3 * 800 + 1);
  const std::vector<Phase> one = {Phase::isovolumic_contraction, Phase::ejection, Phase::isovolumic_relaxation,
                                  Phase::filling};
  ASSERT_GE(run.sequence.size(), 1 + 3 * 4u);
  EXPECT_EQ(run.sequence[0], Phase::filling);
  for (std::size_t i = 1; i < run.sequence.size(); ++i)
    EXPECT_EQ(run.sequence[i], one[(i - 1) % 4]) << "transition " << i;
  // Three complete beats (onsets 200, 1000, 1800; the fourth at 2600 closes the third).
  ASSERT_EQ(cycle.beats().size(), 3u);
  for (const BeatStats& b : cycle.beats()) {
    EXPECT_EQ(b.edv_mL, 120.0);
    EXPECT_EQ(b.esv_mL, 120.0 - 280 * 0.25);
    EXPECT_EQ(b.sv_mL, 70.0);
    EXPECT_DOUBLE_EQ(b.ef, 70.0 / 120.0);
    EXPECT_EQ(b.onset_ms, 200.0 + 800.0 * (b.index - 1));
    EXPECT_GT(b.ejection_start_ms, b.onset_ms);
    EXPECT_GT(b.ejection_end_ms, b.ejection_start_ms + 280);
    EXPECT_GT(b.peak_pressure_mmHg, 60);
    EXPECT_GT(b.stroke_work_mmHg_mL, 0);
  }
  EXPECT_EQ(cycle.edv_change(), 0.0);
  EXPECT_TRUE(cycle.converged());
  EXPECT_EQ(cycle.beat_index(), 4);
}

TEST(BeatCycle, CommandsMatchThePhase) {
  BeatCycle cycle("lv", params(), WindkesselParams{}, 0.0, 100.0);
  // First filling: ramp from the initial pressure 0 to EDP = 8 over 100 ms, then held.
  EXPECT_EQ(cycle.command(0).mode, CavityCommand::Mode::pressure);
  EXPECT_DOUBLE_EQ(cycle.command(50).pressure_mmHg, 4.0);
  EXPECT_DOUBLE_EQ(cycle.command(150).pressure_mmHg, 8.0);
  SyntheticHeart heart;
  drive(cycle, heart, 201);  // through the onset at 200
  ASSERT_EQ(cycle.phase(), Phase::isovolumic_contraction);
  const CavityCommand c = cycle.command(201);
  EXPECT_EQ(c.mode, CavityCommand::Mode::volume);
  EXPECT_EQ(c.volume_mL, 120.0);
}

TEST(BeatCycle, EjectionCouplesToTheWindkessel) {
  WindkesselParams wk;
  wk.initial_pressure = 60;
  BeatCycle cycle("lv", params(), wk, 0.0, 100.0);
  SyntheticHeart heart;
  // Drive into ejection.
  double t = 0;
  while (cycle.phase() != Phase::ejection) {
    heart.step(cycle.command(t));
    cycle.update(t + 1, heart.v, heart.p);
    t += 1;
  }
  const double p_art = cycle.windkessel().pressure();
  // First ejection step: no outflow yet, so the cavity pressure is the arterial pressure.
  EXPECT_DOUBLE_EQ(cycle.command(t).pressure_mmHg, p_art);
  heart.step(cycle.command(t));
  cycle.update(t + 1, heart.v, heart.p);
  EXPECT_DOUBLE_EQ(cycle.outflow(), 0.25);
  // Next: P (advanced with Q = 0.25 mL/ms) + Z_c Q.
  const CavityCommand c = cycle.command(t + 1);
  EXPECT_EQ(c.mode, CavityCommand::Mode::windkessel);
  EXPECT_DOUBLE_EQ(c.pressure_mmHg, cycle.windkessel().pressure() + wk.characteristic_impedance * 0.25);
  EXPECT_GT(cycle.windkessel().pressure(), p_art * std::exp(-1.0 / 1500.0));  // filled by the outflow
}

TEST(BeatCycle, NotConvergedWhileEdvChanges) {
  BeatCycle cycle("lv", params(), WindkesselParams{}, 0.0, 100.0);
  SyntheticHeart heart;
  drive(cycle, heart, 200 + 2 * 800 + 1, 1.0, {120, 125, 125});
  ASSERT_EQ(cycle.beats().size(), 2u);
  EXPECT_EQ(cycle.beats()[1].edv_mL, 125.0);
  EXPECT_NEAR(cycle.edv_change(), 5.0 / 120.0, 1e-15);
  EXPECT_FALSE(cycle.converged());
}

TEST(BeatCycle, AnOnsetBeforeTheBeatEndsIsAnError) {
  BeatParams b = params();
  b.period_ms = 250;  // shorter than contraction + 280 ms of ejection
  BeatCycle cycle("lv", b, WindkesselParams{}, 0.0, 100.0);
  SyntheticHeart heart;
  try {
    drive(cycle, heart, 1000);
    ADD_FAILURE() << "expected an error";
  } catch (const BeatOverrun& e) {
    EXPECT_NE(std::string(e.what()).find("lv: beat 1"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("ejection"), std::string::npos) << e.what();
  }
}

// Issue 14, item 6: the last beat ends at the end of the simulation, not at a next onset.
TEST(BeatCycle, TheLastBeatEndsAtTheEndOfTheSimulation) {
  BeatParams b = params();
  b.period_ms = 400;  // the ejection ends about 300 ms after the onset; relaxation continues
  b.end_ms = 200 + 400;
  BeatCycle cycle("lv", b, WindkesselParams{}, 0.0, 100.0);
  SyntheticHeart heart;
  drive(cycle, heart, b.end_ms);  // ends at the would-be onset of beat 2: no onset, no overrun
  EXPECT_EQ(cycle.beat_index(), 1);
  EXPECT_TRUE(cycle.beats().empty());
  ASSERT_TRUE(cycle.finish());
  ASSERT_EQ(cycle.beats().size(), 1u);
  EXPECT_EQ(cycle.beats()[0].edv_mL, 120.0);
  EXPECT_EQ(cycle.beats()[0].sv_mL, 70.0);
  EXPECT_TRUE(cycle.finish()) << "a second finish has nothing to add";
  EXPECT_EQ(cycle.beats().size(), 1u);
}

TEST(BeatCycle, ABeatStillEjectingAtTheEndIsNotFinished) {
  BeatParams b = params();
  b.end_ms = 200 + 150;  // the ejection lasts 280 ms
  BeatCycle cycle("lv", b, WindkesselParams{}, 0.0, 100.0);
  SyntheticHeart heart;
  drive(cycle, heart, b.end_ms);
  EXPECT_EQ(cycle.phase(), Phase::ejection);
  EXPECT_FALSE(cycle.finish());
  EXPECT_TRUE(cycle.beats().empty());
}

TEST(BeatCycle, ParametersAreValidated) {
  const auto expect_error = [](BeatParams b, const std::string& key) {
    try {
      BeatCycle("lv", b, WindkesselParams{}, 0.0, 100.0);
      ADD_FAILURE() << "expected an error naming " << key;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("lv.beat." + key), std::string::npos) << e.what();
    }
  };
  BeatParams b = params();
  b.end_diastolic_pressure_mmHg = 45;
  expect_error(b, "end_diastolic_pressure");
  b = params();
  b.end_diastolic_pressure_mmHg = 0;
  expect_error(b, "end_diastolic_pressure");
  b = params();
  b.atrial_pressure_mmHg = 10;  // above EDP
  expect_error(b, "atrial_pressure");
  b = params();
  b.period_ms = -800;
  expect_error(b, "period");
  b = params();
  b.filling_ramp_ms = 0;
  expect_error(b, "filling_ramp");
  b = params();
  b.first_onset_ms = -5;  // before the start
  expect_error(b, "first_onset");
  b = params();
  b.convergence_tolerance = 2;
  expect_error(b, "convergence_tolerance");
  WindkesselParams wk;
  wk.peripheral_resistance = -1;
  try {
    BeatCycle("rv", params(), wk, 0.0, 100.0);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("rv.windkessel.peripheral_resistance"), std::string::npos) << e.what();
  }
  EXPECT_THROW(BeatCycle("lv", params(), WindkesselParams{}, 0.0, -1.0), Error);
}

// A checkpoint mid-ejection restored into a fresh cycle continues bit for bit.
TEST(BeatCycle, SaveAndRestoreContinueIdentically) {
  BeatCycle a("lv", params(), WindkesselParams{}, 0.0, 100.0);
  SyntheticHeart heart_a;
  // Mid-ejection of the second beat: drive() steps t = 0..1099 and ends at t = 1100.
  drive(a, heart_a, 1100);
  ASSERT_EQ(a.phase(), Phase::ejection);
  BinaryWriter w;
  a.save(w);
  BeatCycle b("lv", params(), WindkesselParams{}, 0.0, 100.0);
  BinaryReader r(w.bytes(), "test checkpoint");
  b.restore(r);
  r.expect_end();
  SyntheticHeart heart_b = heart_a;
  for (int n = 0; n < 2000; ++n) {
    const double t = 1100 + n;
    const CavityCommand ca = a.command(t), cb = b.command(t);
    ASSERT_EQ(ca.mode, cb.mode);
    ASSERT_EQ(ca.pressure_mmHg, cb.pressure_mmHg);
    ASSERT_EQ(ca.volume_mL, cb.volume_mL);
    heart_a.step(ca);
    heart_b.step(cb);
    a.update(t + 1, heart_a.v, heart_a.p);
    b.update(t + 1, heart_b.v, heart_b.p);
  }
  ASSERT_EQ(a.beats().size(), b.beats().size());
  ASSERT_GE(a.beats().size(), 3u);
  for (std::size_t k = 0; k < a.beats().size(); ++k) {
    EXPECT_EQ(a.beats()[k].edv_mL, b.beats()[k].edv_mL);
    EXPECT_EQ(a.beats()[k].stroke_work_mmHg_mL, b.beats()[k].stroke_work_mmHg_mL);
    EXPECT_EQ(a.beats()[k].ejection_end_ms, b.beats()[k].ejection_end_ms);
  }
  EXPECT_EQ(a.windkessel().pressure(), b.windkessel().pressure());
  // A checkpoint of another cavity is refused.
  BeatCycle rv("rv", params(), WindkesselParams{}, 0.0, 100.0);
  BinaryReader r2(w.bytes(), "test checkpoint");
  EXPECT_THROW(rv.restore(r2), Error);
}

}  // namespace
}  // namespace cardio::circulation
