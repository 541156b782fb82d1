// AHA 17-segment assignment: the numbering on explicit points, the options and errors, and the
// segment volumes of the Land et al. 2015 LV phantom against the closed-form partition of the
// truncated ellipsoidal shell.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <numbers>

#include "cardio/analysis/aha.hpp"
#include "cardio/core/error.hpp"
#include "cardio/meshing/boundary.hpp"
#include "cardio/meshing/voxel_mesh.hpp"
#include "cardio/phantoms/phantoms.hpp"
#include "land_lv_mesh.hpp"
#include "test_meshes.hpp"

namespace cardio::analysis {
namespace {

using testing::land_lv_mesh;

constexpr double kDeg = std::numbers::pi / 180;

/// Axis z through the origin, base plane z = 0, endocardial apex at z = -9 (thirds at -3 and -6),
/// anterior RV insertion towards +x.
AhaSpec simple_spec() {
  AhaSpec s;
  s.axis = CardiacAxis{Eigen::Vector3d::Zero(), Eigen::Vector3d(0, 0, 1)};
  s.base_point = Eigen::Vector3d(3, -2, 0);  // any point of the plane
  s.endocardial_apex = Eigen::Vector3d(0, 0, -9);
  s.anterior_rv_insertion = Eigen::Vector3d(2, 0, 0.7);  // not orthogonal to the axis: projected
  return s;
}

/// A point at height z, radius 8 and angle theta clockwise seen from the base (from +z): towards -y.
Eigen::Vector3d at(double theta_deg, double z) {
  return {8 * std::cos(theta_deg * kDeg), -8 * std::sin(theta_deg * kDeg), z};
}

TEST(AnalysisAha, PointsGetTheStandardSegmentNumbers) {
  const AhaSpec s = simple_spec();
  // Basal (z in [-3, 0] and above the base): from the anterior RV insertion, 60 deg each.
  const int basal[6] = {2, 3, 4, 5, 6, 1};
  for (int k = 0; k < 6; ++k) {
    EXPECT_EQ(aha_segment_of(at(30 + 60 * k, -1), s), basal[k]) << k;
    EXPECT_EQ(aha_segment_of(at(30 + 60 * k, 2), s), basal[k]) << k;         // above the base plane
    EXPECT_EQ(aha_segment_of(at(30 + 60 * k, -4.5), s), basal[k] + 6) << k;  // mid
  }
  // Apical (z in [-9, -6)): 90 deg sectors from theta = 15: septal, inferior, lateral, anterior.
  EXPECT_EQ(aha_segment_of(at(60, -7), s), 14);
  EXPECT_EQ(aha_segment_of(at(150, -7), s), 15);
  EXPECT_EQ(aha_segment_of(at(240, -7), s), 16);
  EXPECT_EQ(aha_segment_of(at(330, -7), s), 13);
  EXPECT_EQ(aha_segment_of(at(10, -7), s), 13);
  EXPECT_EQ(aha_segment_of(at(20, -7), s), 14);
  // Below the endocardial apex: the apical cap.
  EXPECT_EQ(aha_segment_of(at(100, -9.5), s), 17);
  // Ring boundaries belong to the ring above; the apex height itself is apical, not 17.
  EXPECT_EQ(aha_segment_of(at(30, -3), s), 2);
  EXPECT_EQ(aha_segment_of(at(30, -6), s), 8);
  EXPECT_EQ(aha_segment_of(at(60, -9), s), 14);
}

TEST(AnalysisAha, CounterclockwiseOrderMirrorsTheSectors) {
  AhaSpec s = simple_spec();
  s.clockwise_from_base = false;
  const Eigen::Vector3d mirror(1, -1, 1);
  for (int k = 0; k < 12; ++k) {
    const Eigen::Vector3d p = at(15 + 30 * k, -1.0 - 0.7 * k);
    EXPECT_EQ(aha_segment_of(p.cwiseProduct(mirror), s), aha_segment_of(p, simple_spec())) << k;
  }
}

TEST(AnalysisAha, BadSpecificationsThrow) {
  AhaSpec s = simple_spec();
  s.axis.direction.setZero();
  EXPECT_THROW(aha_segment_of(at(0, -1), s), cardio::Error);
  s = simple_spec();
  s.anterior_rv_insertion.setZero();
  EXPECT_THROW(aha_segment_of(at(0, -1), s), cardio::Error);
  s.anterior_rv_insertion = Eigen::Vector3d(0, 0, -3);  // parallel to the axis
  EXPECT_THROW(aha_segment_of(at(0, -1), s), cardio::Error);
  s = simple_spec();
  s.endocardial_apex = Eigen::Vector3d(0, 0, 1);  // above the base plane
  EXPECT_THROW(aha_segment_of(at(0, -1), s), cardio::Error);
  s = simple_spec();
  s.lv_labels = {1};
  const mechanics::HexMesh m = testing::block(2, 1.0);
  EXPECT_THROW(aha_segments(m, {1, 1}, s), cardio::Error);  // 2 labels for 8 elements
}

TEST(AnalysisAha, LabelFilterAndSegmentMeans) {
  AhaSpec s = simple_spec();
  s.lv_labels = {1, 4};
  const mechanics::HexMesh m = testing::block(2, 1.0, Eigen::Vector3d(5, -1, -2));  // centres z = -1.5, -0.5: basal
  const std::vector<std::int32_t> labels{1, 2, 4, 1, 3, 1, 1, 4};
  const std::vector<std::uint8_t> seg = aha_segments(m, labels, s);
  for (std::size_t e = 0; e < seg.size(); ++e) {
    if (labels[e] == 2 || labels[e] == 3)
      EXPECT_EQ(seg[e], 0) << e;
    else
      EXPECT_EQ(seg[e], aha_segment_of(m.rest(Eigen::all, m.hexes[e]).rowwise().mean(), s)) << e;
  }
  // Means: weights 1..8, value = element index; per segment sum(w v) / sum(w) by hand.
  Eigen::VectorXd v(8), w(8);
  for (int e = 0; e < 8; ++e) v(e) = e, w(e) = e + 1;
  const auto mean = segment_means(v, w, seg);
  for (int sid = 0; sid <= kAhaSegments; ++sid) {
    double sw = 0, swv = 0;
    for (int e = 0; e < 8; ++e)
      if (seg[std::size_t(e)] == sid) sw += w(e), swv += w(e) * v(e);
    if (sw > 0)
      EXPECT_DOUBLE_EQ(mean[std::size_t(sid)], swv / sw) << sid;
    else
      EXPECT_TRUE(std::isnan(mean[std::size_t(sid)])) << sid;
  }
  const auto vol = segment_volumes(m, m.rest, seg);
  double total = 0;
  for (double x : vol) total += x;
  EXPECT_NEAR(total, 8.0, 1e-13);
  EXPECT_NEAR(vol[0], 2.0, 1e-14);  // the two elements with labels 2 and 3
}

/// pi * integral over [z1, z2] of r^2 (1 - z^2 / L^2) dz (a disc of the ellipsoid of semi-axes r, r, L).
double ellipsoid_slab(double r, double L, double z1, double z2) {
  auto F = [&](double z) { return r * r * (z - z * z * z / (3 * L * L)); };
  return std::numbers::pi * (F(z2) - F(z1));
}

/// Closed-form volume of the benchmark shell (endocardium 7/17, epicardium 10/20) between heights
/// z1 < z2: the epicardial ellipsoid minus the endocardial one where it exists (z >= -17).
double shell_slab(double z1, double z2) {
  double v = ellipsoid_slab(10, 20, z1, z2);
  if (z2 > -17) v -= ellipsoid_slab(7, 17, std::max(z1, -17.0), z2);
  return v;
}

TEST(AnalysisAha, LandLvPhantomSegmentVolumesMatchTheAnalyticPartition) {
  // Element sizes 22/21 mm (about 1 mm) and 11/21 mm: the voxel faces then fall on the rule's cuts
  // (base z = 5, thirds at 5 - 22/3 and 5 - 44/3, endocardial apex z = -17), so the comparison
  // measures the rule and the voxel staircase, not half-voxel quantisation of the cut heights.
  // At ~1 mm the wall is 3 elements thick and the apical cap a 3-layer dome: the staircase error
  // per segment reaches ~6 % there (measured 6.2 %, cap), so the 5 % criterion is asserted on the
  // 0.5 mm mesh (measured 1.1 %) and ~1 mm gets 7 % plus convergence.
  double worst_at[2] = {0, 0};
  const double sizes[2] = {22.0 / 21.0, 11.0 / 21.0};
  for (int level = 0; level < 2; ++level) {
    const double h = sizes[level];
    const meshing::VoxelMesh vm = land_lv_mesh(h);
    ASSERT_EQ(vm.cavities.size(), 1u);
    const mechanics::HexMesh& m = vm.mesh;
    AhaSpec spec;
    spec.axis = cardiac_axis(vm.axis, vm.cavities[0], m.rest);
    spec.base_point = vm.axis.base_point;
    spec.endocardial_apex = endocardial_apex(vm.cavities[0], m.rest, spec.axis.direction);
    spec.anterior_rv_insertion = Eigen::Vector3d(1, 0.3, 0);  // generic: sector edges not on grid planes
    spec.lv_labels = {1};
    // The mesh is symmetric about the z axis: the cavity centroid lies on it; its lowest node at z = -17.
    EXPECT_LT(spec.axis.point.head<2>().norm(), 1e-9);
    EXPECT_LT((spec.axis.direction - Eigen::Vector3d(0, 0, 1)).norm(), 1e-12);
    EXPECT_NEAR(spec.endocardial_apex.z(), -17.0, 1e-9);
    EXPECT_NEAR(spec.base_point.z(), 5.0, 1e-9);

    const std::vector<std::uint8_t> seg = aha_segments(m, vm.label, spec);
    const auto vol = segment_volumes(m, m.rest, seg);
    // Analytic partition: thirds of [-17, 5]; sectors are exact fractions of the axisymmetric shell.
    const double z0 = -17, z3 = 5, d = (z3 - z0) / 3;
    const double ring[3] = {shell_slab(z3 - d, z3), shell_slab(z3 - 2 * d, z3 - d), shell_slab(z0, z3 - 2 * d)};
    const double tolerance = level == 0 ? 0.07 : 0.05;
    for (int s = 1; s <= kAhaSegments; ++s) {
      const double exact = s <= 6 ? ring[0] / 6 : s <= 12 ? ring[1] / 6 : s <= 16 ? ring[2] / 4 : shell_slab(-20, z0);
      const double err = (vol[std::size_t(s)] - exact) / exact;
      std::cout << "h " << h << " segment " << s << ": " << vol[std::size_t(s)] << " mm^3, analytic " << exact << " ("
                << 100 * err << " %)\n";
      EXPECT_GT(vol[std::size_t(s)], 0) << s;
      EXPECT_LT(std::abs(err), tolerance) << "h " << h << " segment " << s;
      worst_at[level] = std::max(worst_at[level], std::abs(err));
    }
    EXPECT_EQ(vol[0], 0.0);  // every element is LV myocardium
    std::cout << "h " << h << ": worst segment error " << 100 * worst_at[level] << " %\n";
  }
  EXPECT_LT(worst_at[1], worst_at[0] / 2);
}

}  // namespace
}  // namespace cardio::analysis
