// Twitch shapes and active tension.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "cardio/activation/twitch.hpp"
#include "cardio/core/error.hpp"
#include "cardio/core/parallel.hpp"

namespace cardio::activation {
namespace {

void expect_shape_properties(const Twitch& tw) {
  const TwitchParams& p = tw.params();
  const double t_act = 30, t0 = t_act + p.delay_ms, tp = tw.time_to_peak(), td = p.duration_ms;
  // Zero before activation (and at it), one at the peak, zero from the end of the twitch on.
  EXPECT_EQ(tw.activation(0.0, t_act), 0.0);
  EXPECT_EQ(tw.activation(t0 - 1e-9, t_act), 0.0);
  EXPECT_EQ(tw.activation(t0, t_act), 0.0);
  EXPECT_NEAR(tw.activation(t0 + tp, t_act), 1.0, 1e-12);
  EXPECT_EQ(tw.activation(t0 + td, t_act), 0.0);
  EXPECT_EQ(tw.activation(t0 + td + 500, t_act), 0.0);
  // Rises monotonically to the peak, decays monotonically after it, stays in [0, 1].
  double prev = 0;
  for (int i = 1; i <= 1000; ++i) {
    const double s = td * i / 1000.0;
    const double a = tw.shape(s);
    EXPECT_GE(a, 0.0);
    EXPECT_LE(a, 1.0);
    if (s < tp - 1e-9) {
      EXPECT_GE(a, prev) << s;
    }
    if (s > tp + 1e-9) {
      EXPECT_LE(a, prev) << s;
    }
    prev = a;
  }
}

TEST(Twitch, CosineShape) {
  TwitchParams p;
  p.delay_ms = 10;
  p.time_to_peak_ms = 100;
  p.duration_ms = 300;
  const Twitch tw(p);
  EXPECT_EQ(tw.time_to_peak(), 100.0);
  EXPECT_EQ(tw.shape(100.0), 1.0);
  expect_shape_properties(tw);
  EXPECT_NEAR(tw.shape(50.0), 0.5, 1e-15);   // sin^2(pi/4)
  EXPECT_NEAR(tw.shape(200.0), 0.5, 1e-15);  // cos^2(pi/4)
  // C^1: one-sided slopes vanish at 0, t_p and t_d.
  const double h = 1e-4;
  EXPECT_LT(tw.shape(h) / h, 1e-3);
  EXPECT_LT((1 - tw.shape(100 - h)) / h, 1e-3);
  EXPECT_LT((1 - tw.shape(100 + h)) / h, 1e-3);
  EXPECT_LT(tw.shape(300 - h) / h, 1e-3);
}

TEST(Twitch, Tanh2ShapeIsNormalisedToItsPeak) {
  TwitchParams p;
  p.shape = TwitchParams::Shape::tanh2;
  p.duration_ms = 300;
  p.tau_contraction_ms = 40;
  p.tau_relaxation_ms = 60;
  const Twitch tw(p);
  EXPECT_GT(tw.time_to_peak(), 0.0);
  EXPECT_LT(tw.time_to_peak(), 300.0);
  double peak = 0;
  for (int i = 0; i <= 30000; ++i) peak = std::max(peak, tw.shape(300.0 * i / 30000));
  EXPECT_NEAR(peak, 1.0, 1e-8);
  expect_shape_properties(tw);
  // Symmetric time constants put the peak at mid-duration.
  p.tau_relaxation_ms = 40;
  EXPECT_NEAR(Twitch(p).time_to_peak(), 150.0, 1e-5);  // a flat peak: argmax to ~sqrt(eps)
}

TEST(Twitch, PeriodicBeatsRepeat) {
  TwitchParams p;
  p.period_ms = 800;
  const Twitch tw(p);
  for (double t : {35.0, 120.0, 290.0, 500.0})
    EXPECT_NEAR(tw.activation(t + 1600, 20.0), tw.activation(t, 20.0), 1e-12);
  EXPECT_EQ(tw.activation(10.0, 20.0), 0.0);  // before the first activation
}

TEST(Twitch, ActiveTensionPerElementIsDeterministic) {
  TwitchParams p;
  p.peak_tension_kPa = 60;
  const Twitch tw(p);
  Eigen::VectorXd t_act(10000);
  for (Eigen::Index e = 0; e < t_act.size(); ++e) t_act[e] = 0.013 * double(e);
  Eigen::VectorXd ta1, ta4, a;
  set_thread_count(1);
  tw.active_tension(t_act, 100.0, ta1);
  set_thread_count(4);
  tw.active_tension(t_act, 100.0, ta4);
  tw.activation(t_act, 100.0, a);
  set_thread_count(1);
  EXPECT_TRUE((ta1.array() == ta4.array()).all());
  for (Eigen::Index e = 0; e < t_act.size(); e += 997) {
    EXPECT_EQ(ta1[e], 60.0 * tw.activation(100.0, t_act[e]));
    EXPECT_EQ(a[e], tw.activation(100.0, t_act[e]));
  }
  EXPECT_EQ(ta1[0], 60.0 * tw.shape(100.0));
}

/// active_tension() against the closed form in libm (sin^2 rise, cos^2 decay, the periodic wrap)
/// for every element of an odd count, before, during and after the twitch of several beats.
TEST(Twitch, ActiveTensionMatchesTheClosedFormForEveryElement) {
  TwitchParams p;
  p.peak_tension_kPa = 60;
  p.delay_ms = 5;
  p.period_ms = 800;
  const Twitch tw(p);
  const double tp = p.time_to_peak_ms, td = p.duration_ms, pi = std::numbers::pi;
  Eigen::VectorXd t_act(1001);
  for (Eigen::Index e = 0; e < t_act.size(); ++e) t_act[e] = 0.37 * double(e);
  for (double t : {3.0, 150.0, 420.0, 1234.5, 2000.0}) {
    Eigen::VectorXd ta;
    tw.active_tension(t_act, t, ta);
    ASSERT_EQ(ta.size(), t_act.size());
    for (Eigen::Index e = 0; e < t_act.size(); ++e) {
      double s = t - t_act[e] - p.delay_ms;
      if (s >= p.period_ms) s = std::fmod(s, p.period_ms);
      double a = 0;
      if (s > 0 && s <= tp) a = std::pow(std::sin(0.5 * pi * s / tp), 2);
      if (s > tp && s < td) a = std::pow(std::cos(0.5 * pi * (s - tp) / (td - tp)), 2);
      EXPECT_NEAR(ta[e], 60.0 * a, 1e-11) << "element " << e << " at t = " << t;
    }
  }
}

/// The cosine shape's polynomial sin^2 against libm's extended-precision sin, relative to the value
/// itself: a few ulp everywhere, including next to the onset and the end where the tension is tiny
/// (the reference takes the decay from its end, (td - s), as a double cos of (s - tp) cannot there).
TEST(Twitch, CosineShapeIsLibmsToAFewUlp) {
  TwitchParams p;
  p.time_to_peak_ms = 147;
  p.duration_ms = 402;
  const Twitch tw(p);
  const double tp = p.time_to_peak_ms, td = p.duration_ms;
  double worst = 0;
  const auto check = [&](double s) {
    const long double half_pi = std::numbers::pi_v<long double> / 2;
    const long double u = s <= tp ? (long double)s / tp : ((long double)td - s) / ((long double)td - tp);
    const long double r = std::sin(half_pi * u);
    const double expected = double(r * r);
    ASSERT_GT(expected, 0) << "s = " << s;
    worst = std::max(worst, std::abs(tw.shape(s) / expected - 1));
  };
  for (int i = 1; i < 100000; ++i) check(td * i / 100000.0);
  for (double s : {1e-9, 1e-6, 1e-3, tp - 1e-9, tp, tp + 1e-9, td - 1e-3, td - 1e-6}) check(s);
  EXPECT_LT(worst, 1e-14) << "worst relative difference " << worst;
  EXPECT_EQ(tw.shape(tp), 1.0);
  EXPECT_EQ(tw.shape(0.0), 0.0);
  EXPECT_EQ(tw.shape(td), 0.0);
}

TEST(Twitch, ParametersAreValidated) {
  const auto message = [](const TwitchParams& p) -> std::string {
    try {
      Twitch{p};
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  TwitchParams p;
  p.time_to_peak_ms = 400;  // beyond the duration
  EXPECT_NE(message(p).find("activation.twitch.time_to_peak = 400 ms: expected a value in (0, duration"),
            std::string::npos)
      << message(p);
  p = TwitchParams{};
  p.peak_tension_kPa = -5;
  EXPECT_NE(message(p).find("activation.twitch.peak_tension"), std::string::npos);
  p = TwitchParams{};
  p.period_ms = 200;  // shorter than the twitch
  EXPECT_NE(message(p).find("activation.twitch.period"), std::string::npos);
  p = TwitchParams{};
  p.shape = TwitchParams::Shape::tanh2;
  p.tau_relaxation_ms = 0;
  EXPECT_NE(message(p).find("activation.twitch.tau_relaxation"), std::string::npos);
}

}  // namespace
}  // namespace cardio::activation
