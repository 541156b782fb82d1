// The clinical measures against closed forms: engineering strain from a homogeneous stretch, the
// rotation of slices of a mesh turned rigidly by a known angle per slice (twist), and dP/dt of
// sampled curves whose derivative is known (a quadratic: exact; a sine: the central difference's
// closed form).
#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <cmath>
#include <numbers>

#include "cardio/analysis/clinical.hpp"
#include "cardio/analysis/strain.hpp"
#include "cardio/core/error.hpp"
#include "test_meshes.hpp"

namespace cardio::analysis {
namespace {

using testing::affine;
using testing::block;

constexpr double kDeg = std::numbers::pi / 180.0;

TEST(AnalysisClinical, EngineeringStrainIsTheStretchMinusOne) {
  // A stretch lambda along a direction: E = (lambda^2 - 1) / 2, e = lambda - 1.
  for (const double lambda : {0.7, 0.85, 1.0, 1.22, 1.6})
    EXPECT_NEAR(engineering_strain((lambda * lambda - 1) / 2), lambda - 1, 1e-15) << lambda;
  EXPECT_TRUE(std::isnan(engineering_strain(-0.6)));  // 1 + 2E < 0: no real stretch
  EXPECT_TRUE(std::isnan(engineering_strain(std::numeric_limits<double>::quiet_NaN())));
  EXPECT_EQ(engineering_strain(-0.5), -1.0);  // a line collapsed to a point

  // Through the element strains: x = diag(a, b, c) X, so e_ff = a - 1, e_ss = b - 1, e_nn = c - 1.
  const mechanics::HexMesh m = block(2, 1.0);
  const double a = 0.82, b = 1.1, c = 1.3;
  const ElementStrains s = strains(m, affine(m.rest, Eigen::Vector3d(a, b, c).asDiagonal(), Eigen::Vector3d::Zero()),
                                   rest_directions(m, CardiacAxis{}));
  const Eigen::VectorXd e_ff = engineering_strain(s.E_ff), e_ss = engineering_strain(s.E_ss);
  const Eigen::VectorXd e_nn = engineering_strain(s.E_nn);
  for (Eigen::Index e = 0; e < m.n_elements(); ++e) {
    EXPECT_NEAR(e_ff[e], a - 1, 1e-14);
    EXPECT_NEAR(e_ss[e], b - 1, 1e-14);
    EXPECT_NEAR(e_nn[e], c - 1, 1e-14);
  }
}

/// Every node of `X` turned about the line through `centre` along l by theta(height) (a right-handed
/// rotation about -l, i.e. counterclockwise seen from the apex), then moved by `shift`.
Eigen::Matrix3Xd twisted(const Eigen::Matrix3Xd& X, const Eigen::Vector3d& centre, const Eigen::Vector3d& l,
                         double (*theta_deg)(double), const Eigen::Vector3d& shift) {
  Eigen::Matrix3Xd x(3, X.cols());
  for (Eigen::Index i = 0; i < X.cols(); ++i) {
    const double h = (X.col(i) - centre).dot(l);
    x.col(i) = centre + Eigen::AngleAxisd(theta_deg(h) * kDeg, -l) * (X.col(i) - centre) + shift;
  }
  return x;
}

TEST(AnalysisClinical, SliceRotationsOfARigidlyTurnedMeshGiveTheTwist) {
  // A 6 x 6 x 8 block (nodes at heights 0..8 mm along l = z); the slice below h = 3 mm turns by +7
  // deg, the slice above h = 5 mm by -4 deg, each rigidly, about an axis parallel to z off the
  // block's centre, and the whole mesh moves: twist = apical - basal rotation = 11 deg.
  mechanics::HexMesh m = block(8, 1.0, Eigen::Vector3d(-3, -2, 0));
  const Eigen::Vector3d l(0, 0, 1), centre(0.4, -0.3, 0.0), shift(0.2, -0.7, 1.3);
  const auto theta = [](double h) { return h < 3 ? 7.0 : (h > 5 ? -4.0 : 0.0); };
  const Eigen::Matrix3Xd x = twisted(m.rest, centre, l, +theta, shift);
  std::vector<std::int32_t> all(std::size_t(m.n_nodes()));
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = std::int32_t(i);
  const auto apical = slice_nodes(m.rest, all, centre, l, 1.0, 1.0);  // heights 0, 1, 2
  const auto basal = slice_nodes(m.rest, all, centre, l, 7.0, 1.0);   // heights 6, 7, 8
  EXPECT_EQ(apical.size(), 3u * 9 * 9);
  EXPECT_EQ(basal.size(), 3u * 9 * 9);
  const double apical_rotation = slice_rotation_deg(m.rest, x, apical, l);
  const double basal_rotation = slice_rotation_deg(m.rest, x, basal, l);
  EXPECT_NEAR(apical_rotation, 7.0, 1e-12);
  EXPECT_NEAR(basal_rotation, -4.0, 1e-12);
  EXPECT_NEAR(apical_rotation - basal_rotation, 11.0, 1e-12);
  // The sign follows the axis: seen from the other end the same motion turns the other way.
  EXPECT_NEAR(slice_rotation_deg(m.rest, x, apical, -l), -7.0, 1e-12);
}

TEST(AnalysisClinical, SliceRotationOfALinearTwistIsTheRotationAtTheSliceHeight) {
  // theta(h) = 2.5 deg/mm h about a tilted axis: two rings of nodes (radii 3-5 mm) at heights 2 and
  // 7 mm each turn rigidly by theta(h): twist -12.5 deg, torsion -2.5 deg/mm.
  const Eigen::Vector3d l = Eigen::Vector3d(0.2, -0.1, 1).normalized(), centre(1.0, -2.0, 0.5);
  const Eigen::Vector3d u = l.unitOrthogonal(), v = l.cross(u);
  Eigen::Matrix3Xd ring(3, 24);
  for (int k = 0; k < 12; ++k)
    for (int s = 0; s < 2; ++s) {
      const double phi = 2 * std::numbers::pi * k / 12, r = 3.0 + k % 3;
      ring.col(12 * s + k) = centre + (s == 0 ? 2.0 : 7.0) * l + r * (std::cos(phi) * u + std::sin(phi) * v);
    }
  const auto theta = [](double h) { return 2.5 * h; };
  const Eigen::Matrix3Xd ring_x = twisted(ring, centre, l, +theta, Eigen::Vector3d(1, 1, 1));
  std::vector<std::int32_t> ids(24);
  for (int i = 0; i < 24; ++i) ids[std::size_t(i)] = i;
  const auto apical = slice_nodes(ring, ids, centre, l, 2.0, 0.5), basal = slice_nodes(ring, ids, centre, l, 7.0, 0.5);
  ASSERT_EQ(apical.size(), 12u);
  ASSERT_EQ(basal.size(), 12u);
  const double twist = slice_rotation_deg(ring, ring_x, apical, l) - slice_rotation_deg(ring, ring_x, basal, l);
  EXPECT_NEAR(twist, 2.5 * (2.0 - 7.0), 1e-11);
  EXPECT_NEAR(twist / (7.0 - 2.0), -2.5, 1e-12);
}

TEST(AnalysisClinical, SliceRotationRejectsAnEmptySliceAndBadNodes) {
  const Eigen::Matrix3Xd x = Eigen::Matrix3Xd::Random(3, 5);
  EXPECT_THROW(slice_rotation_deg(x, x, {}, Eigen::Vector3d::UnitZ()), Error);
  EXPECT_THROW(slice_rotation_deg(x, x, {0, 7}, Eigen::Vector3d::UnitZ()), Error);
  EXPECT_THROW(slice_rotation_deg(x, x, {0, 1}, Eigen::Vector3d::Zero()), Error);
}

TEST(AnalysisClinical, RateExtremesOfAQuadraticAreExact) {
  // y = 3 t^2 - 2 t on t = 0, 0.5, ..., 10 ms: dy/dt = 6 t - 2; within [2, 6] the interior samples
  // with both neighbours inside are t = 2.5 .. 5.5: max 31 at 5.5, min 13 at 2.5.
  Eigen::VectorXd t = Eigen::VectorXd::LinSpaced(21, 0.0, 10.0);
  const Eigen::VectorXd y = 3 * t.array().square() - 2 * t.array();
  const RateExtremes r = rate_extremes(t, y, 2.0, 6.0);
  EXPECT_NEAR(r.max, 6 * 5.5 - 2, 1e-12);
  EXPECT_NEAR(r.min, 6 * 2.5 - 2, 1e-12);
  EXPECT_EQ(r.t_max_ms, 5.5);
  EXPECT_EQ(r.t_min_ms, 2.5);
}

TEST(AnalysisClinical, RateExtremesOfASineAreTheCentralDifferencesClosedForm) {
  // p = A sin(w t) sampled every h = 1 ms: the central difference at a sample is
  // A cos(w t) sin(w h) / h, extreme +- A sin(w h) / h at t = 0 and pi / w (both samples here).
  const double A = 120.0, h = 1.0, period = 400.0, w = 2 * std::numbers::pi / period;
  Eigen::VectorXd t = Eigen::VectorXd::LinSpaced(801, -200.0, 600.0);
  const Eigen::VectorXd p = A * (w * t.array()).sin();
  const RateExtremes r = rate_extremes(t, p, -100.0, 300.0);
  const double expected = A * std::sin(w * h) / h;
  EXPECT_NEAR(r.max, expected, 1e-12 * expected);
  EXPECT_NEAR(r.min, -expected, 1e-12 * expected);
  EXPECT_NEAR(r.t_max_ms, 0.0, 1e-12);
  EXPECT_NEAR(r.t_min_ms, 200.0, 1e-12);
  // x 1000: [mmHg/ms] -> [mmHg/s]; within 1e-4 relative of the exact A w for a 1 ms step.
  EXPECT_NEAR(r.max / (A * w), 1.0, 1e-4);
}

TEST(AnalysisClinical, RateExtremesRejectsBadSamples) {
  Eigen::VectorXd t(4), y(4);
  t << 0, 1, 1, 2;
  y << 0, 1, 2, 3;
  EXPECT_THROW(rate_extremes(t, y, 0, 2), Error);  // t not increasing
  t << 0, 1, 2, 3;
  EXPECT_THROW(rate_extremes(t, y, 0, 1), Error);  // 2 samples in the window
  y[1] = std::nan("");
  EXPECT_THROW(rate_extremes(t, y, 0, 3), Error);  // non-finite in the window
  EXPECT_THROW(rate_extremes(t, Eigen::VectorXd(3), 0, 3), Error);
}

}  // namespace
}  // namespace cardio::analysis
