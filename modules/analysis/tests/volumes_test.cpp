// Per-beat EDV/ESV/SV/EF and peaks from prescribed analytic curves; errors for bad series.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "cardio/analysis/volumes.hpp"
#include "cardio/core/error.hpp"

namespace cardio::analysis {
namespace {

/// Samples every `dt` ms on [0, t_end] of f.
template <class F>
std::pair<Eigen::VectorXd, Eigen::VectorXd> sample(double t_end, double dt, F&& f) {
  const auto n = Eigen::Index(std::llround(t_end / dt)) + 1;
  Eigen::VectorXd t(n), y(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    t(i) = double(i) * dt;
    y(i) = f(t(i));
  }
  return {t, y};
}

TEST(AnalysisVolumes, BeatIndicesOfAPrescribedVolumeCurveAreExact) {
  // Two beats of 800 ms: V = EDV_k - SV_k sin^2(pi t / 800), EDV 130 / 126 mL, SV 35 / 42 mL.
  const double edv[2] = {130, 126}, sv[2] = {35, 42};
  const auto [t, v] = sample(1600, 1.0, [&](double tt) {
    const int k = tt < 800 ? 0 : 1;
    const double s = std::sin(std::numbers::pi * tt / 800);
    return edv[k] - sv[k] * s * s;
  });
  const std::vector<BeatWindow> beats = beats_from_boundaries({0, 800, 1600});
  ASSERT_EQ(beats.size(), 2u);
  for (int k = 0; k < 2; ++k) {
    const BeatVolumes b = beat_volumes(t, v, beats[std::size_t(k)]);
    EXPECT_DOUBLE_EQ(b.edv, edv[k]) << k;
    EXPECT_DOUBLE_EQ(b.esv, edv[k] - sv[k]) << k;
    EXPECT_DOUBLE_EQ(b.sv, sv[k]) << k;
    EXPECT_DOUBLE_EQ(b.ef, sv[k] / edv[k]) << k;
    EXPECT_EQ(b.t_es_ms, 400 + 800 * k);
    EXPECT_EQ(b.t_ed_ms, 800 * k);
  }
}

TEST(AnalysisVolumes, EndDiastoleFromThePhasesIsTheVolumeAtIsovolumicContraction) {
  // Filling 100 -> 140 mL over [0, 300] ms (linear), isovolumic until 350, ejection to 60 mL at 600,
  // then still. With the phase time t_ed = 150.5 ms (not a sample) EDV is interpolated there,
  // not the maximum.
  auto V = [](double tt) {
    if (tt <= 300) return 100 + 40 * tt / 300;
    if (tt <= 350) return 140.0;
    if (tt <= 600) return 140 - 80 * (tt - 350) / 250;
    return 60.0;
  };
  const auto [t, v] = sample(800, 1.0, V);
  BeatWindow w{0, 800, 150.5};
  const BeatVolumes b = beat_volumes(t, v, w);
  EXPECT_NEAR(b.edv, V(150.5), 1e-12);
  EXPECT_EQ(b.t_ed_ms, 150.5);
  EXPECT_DOUBLE_EQ(b.esv, 60);
  EXPECT_NEAR(b.sv, V(150.5) - 60, 1e-12);
  w.t_end_diastole_ms = 300;  // at a sample: the isovolumic volume exactly
  EXPECT_DOUBLE_EQ(beat_volumes(t, v, w).edv, 140);
  EXPECT_DOUBLE_EQ(beat_volumes(t, v, w).ef, 80.0 / 140.0);
  w.t_end_diastole_ms = 900;  // outside the beat
  EXPECT_THROW(beat_volumes(t, v, w), cardio::Error);
}

TEST(AnalysisVolumes, PeaksOfStrainCurves) {
  // Circumferential strain: -0.2 sin^2(pi (t - 100) / 600) on [100, 700], 0 elsewhere; radial +0.35 x.
  auto Ecc = [](double tt) {
    if (tt < 100 || tt > 700) return 0.0;
    const double s = std::sin(std::numbers::pi * (tt - 100) / 600);
    return -0.2 * s * s;
  };
  const auto [t, ecc] = sample(1000, 0.5, Ecc);
  const Peak p = find_peak(t, ecc, PeakKind::minimum, 100, 900);
  EXPECT_DOUBLE_EQ(p.value, -0.2);
  EXPECT_EQ(p.time_ms, 400);
  EXPECT_EQ(p.time_to_peak_ms, 300);
  EXPECT_EQ(p.index, 800);
  const Eigen::VectorXd err = -1.75 * ecc;
  const Peak q = find_peak(t, err, PeakKind::maximum);
  EXPECT_DOUBLE_EQ(q.value, 0.35);
  EXPECT_EQ(q.time_to_peak_ms, 400);  // from the first sample (t = 0)
  // A window that excludes the extreme: the peak of what is inside.
  const Peak r = find_peak(t, ecc, PeakKind::minimum, 500, 1000);
  EXPECT_EQ(r.time_ms, 500);
  EXPECT_DOUBLE_EQ(r.value, Ecc(500));
}

TEST(AnalysisVolumes, BadSeriesThrow) {
  Eigen::VectorXd t(4), v(4);
  t << 0, 1, 1, 2;  // not increasing
  v << 1, 2, 3, 4;
  EXPECT_THROW(beat_volumes(t, v, {0, 2}), cardio::Error);
  EXPECT_THROW(find_peak(t, v, PeakKind::maximum), cardio::Error);
  t << 0, 1, 2, 3;
  EXPECT_THROW(beat_volumes(t, v, {5, 8}), cardio::Error);  // no sample in the beat
  EXPECT_THROW(find_peak(t, v.head(3), PeakKind::maximum), cardio::Error);
  v(2) = NAN;
  EXPECT_THROW(find_peak(t, v, PeakKind::maximum), cardio::Error);
  v << -1, -2, -3, -4;
  EXPECT_THROW(beat_volumes(t, v, {0, 3}), cardio::Error);  // EDV <= 0
  EXPECT_THROW(beats_from_boundaries({0}), cardio::Error);
  EXPECT_THROW(beats_from_boundaries({0, 800, 800}), cardio::Error);
}

}  // namespace
}  // namespace cardio::analysis
