// The beat-by-beat calibration of the peak active tension (pipeline/heart/tension_calibration.hpp)
// against a monotonic stand-in for a heart, EF(Ta) = 0.7 Ta / (Ta + 50 kPa), whose tension for
// EF = 0.6 is 0.6 * 50 / (0.7 - 0.6) = 300 kPa in closed form.
#include <gtest/gtest.h>

#include "heart/tension_calibration.hpp"

using namespace cardio;
using pipeline::TensionCalibration;
using pipeline::TensionTarget;

namespace {

double stand_in_ef(double tension_kPa) { return 0.7 * tension_kPa / (tension_kPa + 50.0); }

TEST(TensionCalibration, ReachesTheTargetEjectionFractionInAFewBeats) {
  TensionTarget target;
  target.value = 0.6;
  target.tolerance = 0.005;
  TensionCalibration c(target, 60.0);
  int beats = 0;
  while (!c.reached() && beats < 12) {
    c.next(stand_in_ef(c.peak_tension_kPa()));
    ++beats;
  }
  EXPECT_TRUE(c.reached());
  EXPECT_LE(beats, 8);
  EXPECT_NEAR(c.peak_tension_kPa(), 300.0, 0.06 * 300.0);  // EF within 0.5 % of 0.6 <=> Ta within ~6 %
  // Each step stays within a factor 2 of the last.
  for (std::size_t k = 1; k < c.history().size(); ++k) {
    EXPECT_LE(c.history()[k].first, 2.0 * c.history()[k - 1].first + 1e-9);
    EXPECT_GE(c.history()[k].first, 0.5 * c.history()[k - 1].first - 1e-9);
  }
}

TEST(TensionCalibration, KeepsTheTensionOnceReachedAndRestoresFromACheckpoint) {
  TensionTarget target;
  target.quantity = TensionTarget::Quantity::peak_pressure;
  target.value = 120;  // mmHg; stand-in: p = 1.2 Ta (a linear heart), so 100 kPa
  TensionCalibration c(target, 80.0);
  EXPECT_DOUBLE_EQ(c.next(1.2 * 80.0), 100.0);  // the first step is proportional: exact for a linear heart
  EXPECT_DOUBLE_EQ(c.next(1.2 * 100.0), 100.0);
  EXPECT_TRUE(c.reached());
  BinaryWriter w;
  c.save(w);
  TensionCalibration d(target, 1.0);
  BinaryReader r(w.bytes(), "test");
  d.restore(r);
  EXPECT_EQ(d.peak_tension_kPa(), 100.0);
  EXPECT_EQ(d.history(), c.history());
}

TEST(TensionCalibration, ASecantThatTheLoadHidTakesTheProportionalStep) {
  TensionTarget target;
  target.value = 0.6;
  TensionCalibration c(target, 200.0);
  EXPECT_NEAR(c.next(0.702), 200.0 * 0.6 / 0.702, 1e-9);  // the first step is proportional
  // The afterload fell between the beats: EF barely moved for 15 % less tension. Its secant would ask
  // for about 0 kPa (clamped to half); the proportional step is taken instead.
  const double t1 = c.peak_tension_kPa();
  EXPECT_NEAR(c.next(0.697), t1 * 0.6 / 0.697, 1e-9);
  // A secant of a plausible slope is taken: EF 0.697 -> 0.65 over the last step.
  const double t2 = c.peak_tension_kPa();
  const double slope = (0.65 - 0.697) / (t2 - t1);
  EXPECT_NEAR(c.next(0.65), t2 + (0.6 - 0.65) / slope, 1e-9);
}

}  // namespace
