// Global strain on the endocardium against closed forms: a tube (the LV's mid-wall in the small)
// deformed by maps whose strain along the wall's meridian and circumference is known:
//   axial scaling by s about the base plane   -> GLS = s - 1, GCS = 0,
//   radial scaling by s about the axis         -> GLS = 0,     GCS = s - 1,
//   a rigid motion                             -> GLS = GCS = 0,
// with the axis along z and along a tilted direction, from rest and from a deformed reference; and
// on the voxel LV phantom's endocardium (a real tagged surface): a uniform scaling by s stretches
// every tangent by s (GLS = GCS = s - 1), a rigid motion none.
#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>

#include "cardio/analysis/endocardial_strain.hpp"
#include "cardio/analysis/strain.hpp"
#include "cardio/core/error.hpp"
#include "land_lv_mesh.hpp"
#include "test_meshes.hpp"

namespace cardio::analysis {
namespace {

using testing::affine;
using testing::block;
using testing::land_lv_mesh;
using testing::tube;

constexpr double kInner = 20.0, kOuter = 28.0, kHeight = 60.0;

/// The boundary faces of the tube whose 4 nodes lie on the inner circle (the "endocardium").
std::vector<mechanics::Quad> inner_faces(const mechanics::HexMesh& m) {
  std::vector<mechanics::Quad> out;
  for (const mechanics::Quad& q : mechanics::boundary_faces(m)) {
    bool inner = true;
    for (const std::int32_t n : q) inner = inner && std::abs(m.rest.col(n).head<2>().norm() - kInner) < 1e-9;
    if (inner) out.push_back(q);
  }
  return out;
}

/// Scaling by s along the unit l (about the plane through `base` normal to l): A = I + (s - 1) l l^T.
Eigen::Matrix3d axial_scaling(const Eigen::Vector3d& l, double s) {
  return Eigen::Matrix3d::Identity() + (s - 1) * l * l.transpose();
}
/// Scaling by s orthogonal to the unit l: A = s I + (1 - s) l l^T.
Eigen::Matrix3d radial_scaling(const Eigen::Vector3d& l, double s) {
  return s * Eigen::Matrix3d::Identity() + (1 - s) * l * l.transpose();
}

/// GLS and GCS of positions x relative to x_ref (the rest positions when they are the mesh's).
EndocardialStrain measure(const mechanics::HexMesh& m, const std::vector<mechanics::Quad>& faces,
                          const Eigen::Matrix3Xd& x_ref, const Eigen::Matrix3Xd& x, const Eigen::Vector3d& l) {
  const EndocardialFrame frame = endocardial_frame(faces, face_owners(m, faces), x_ref, l);
  const ElementDirections dirs = rest_directions(m, CardiacAxis{Eigen::Vector3d::Zero(), l});
  const ElementStrains s = x_ref == m.rest ? strains(m, x, dirs) : strains_relative(m, x_ref, x, dirs);
  return endocardial_strain(frame, s);
}

TEST(EndocardialStrain, FaceOwnersAreTheElementsHoldingTheFace) {
  const mechanics::HexMesh m = block(3, 1.0);  // element i + 3 (j + 3 k)
  // The -x face of element (0, 1, 2) and the +z face of element (2, 2, 2).
  const auto& a = m.hexes[0 + 3 * (1 + 3 * 2)];
  const auto& b = m.hexes[2 + 3 * (2 + 3 * 2)];
  const std::vector<mechanics::Quad> faces{{a[0], a[4], a[7], a[3]}, {b[4], b[5], b[6], b[7]}};
  EXPECT_EQ(face_owners(m, faces), (std::vector<std::int64_t>{21, 26}));
  // An interior face (between elements 0 and 1) belongs to two elements: not a boundary face.
  const auto& c = m.hexes[0];
  EXPECT_THROW(face_owners(m, {{c[1], c[2], c[6], c[5]}}), Error);
}

TEST(EndocardialStrain, AxialScalingGivesGlsOnly) {
  const mechanics::HexMesh m = tube(kInner, kOuter, kHeight, 2, 48, 6);
  const auto faces = inner_faces(m);
  ASSERT_EQ(faces.size(), 48u * 6u);
  const Eigen::Vector3d l = Eigen::Vector3d::UnitZ(), base(0, 0, kHeight);
  for (const double s : {0.85, 0.9, 1.1}) {
    const Eigen::Matrix3d A = axial_scaling(l, s);
    const EndocardialStrain g = measure(m, faces, m.rest, affine(m.rest, A, base - A * base), l);
    EXPECT_NEAR(g.longitudinal, s - 1, 1e-12) << s;
    EXPECT_NEAR(g.circumferential, 0, 1e-12) << s;
  }
}

TEST(EndocardialStrain, RadialScalingGivesGcsOnly) {
  const mechanics::HexMesh m = tube(kInner, kOuter, kHeight, 2, 48, 6);
  const auto faces = inner_faces(m);
  const Eigen::Vector3d l = Eigen::Vector3d::UnitZ();
  for (const double s : {0.8, 1.05}) {
    const EndocardialStrain g = measure(m, faces, m.rest, affine(m.rest, radial_scaling(l, s), {1, -2, 3}), l);
    EXPECT_NEAR(g.longitudinal, 0, 1e-12) << s;
    EXPECT_NEAR(g.circumferential, s - 1, 1e-12) << s;
  }
}

TEST(EndocardialStrain, TiltedAxisAndRigidMotion) {
  const mechanics::HexMesh straight = tube(kInner, kOuter, kHeight, 2, 40, 5);
  const auto faces = inner_faces(straight);
  // The same tube turned so that its axis is l = Q z.
  const Eigen::Matrix3d Q = Eigen::AngleAxisd(0.7, Eigen::Vector3d(1, 2, -0.5).normalized()).toRotationMatrix();
  mechanics::HexMesh m = straight;
  m.rest = affine(straight.rest, Q, {5, 6, 7});
  const Eigen::Vector3d l = Q * Eigen::Vector3d::UnitZ();
  const EndocardialStrain a = measure(m, faces, m.rest, affine(m.rest, axial_scaling(l, 0.85), {0, 0, 0}), l);
  EXPECT_NEAR(a.longitudinal, -0.15, 1e-12);
  EXPECT_NEAR(a.circumferential, 0, 1e-12);
  // Shortening along the axis and narrowing together: each along its own tangent.
  const Eigen::Matrix3d both = axial_scaling(l, 0.88) * radial_scaling(l, 0.75);
  const EndocardialStrain b = measure(m, faces, m.rest, affine(m.rest, both, {0, 0, 0}), l);
  EXPECT_NEAR(b.longitudinal, -0.12, 1e-12);
  EXPECT_NEAR(b.circumferential, -0.25, 1e-12);
  // A rigid rotation and translation strains nothing.
  const Eigen::Matrix3d R = Eigen::AngleAxisd(1.1, Eigen::Vector3d(-0.3, 0.4, 1).normalized()).toRotationMatrix();
  const EndocardialStrain r = measure(m, faces, m.rest, affine(m.rest, R, {10, -4, 2}), l);
  EXPECT_NEAR(r.longitudinal, 0, 1e-12);
  EXPECT_NEAR(r.circumferential, 0, 1e-12);
}

TEST(EndocardialStrain, FromADeformedReference) {
  // End-diastole = the rest tube widened by 1.2 and lengthened by 1.1; then shortened by 0.85 from there.
  const mechanics::HexMesh m = tube(kInner, kOuter, kHeight, 2, 48, 6);
  const auto faces = inner_faces(m);
  const Eigen::Vector3d l = Eigen::Vector3d::UnitZ();
  const Eigen::Matrix3Xd x_ref = affine(m.rest, radial_scaling(l, 1.2) * axial_scaling(l, 1.1), {0, 0, 0});
  const EndocardialStrain g = measure(m, faces, x_ref, affine(x_ref, axial_scaling(l, 0.85), {0, 0, 0}), l);
  EXPECT_NEAR(g.longitudinal, -0.15, 1e-12);
  EXPECT_NEAR(g.circumferential, 0, 1e-12);
  // The reference itself: zero strain.
  const EndocardialStrain z = measure(m, faces, x_ref, x_ref, l);
  EXPECT_NEAR(z.longitudinal, 0, 1e-14);
  EXPECT_NEAR(z.circumferential, 0, 1e-14);
}

TEST(EndocardialStrain, WallNormalToTheAxisDoesNotCount) {
  // The top (+z) faces of a block have their normal along the axis: weight 0 (no meridian); the
  // side faces get their area (|t_l| = 1). Only top faces: an error, not a NaN.
  const mechanics::HexMesh m = block(2, 1.5);
  const auto all = mechanics::boundary_faces(m);
  const std::vector<std::int64_t> owners = face_owners(m, all);
  const EndocardialFrame f = endocardial_frame(all, owners, m.rest, Eigen::Vector3d::UnitZ());
  std::vector<mechanics::Quad> top;
  for (std::size_t q = 0; q < all.size(); ++q) {
    bool on_top = true, on_bottom = true;
    for (const std::int32_t n : all[q]) {
      on_top = on_top && m.rest(2, n) == 3.0;
      on_bottom = on_bottom && m.rest(2, n) == 0.0;
    }
    EXPECT_DOUBLE_EQ(f.weight[Eigen::Index(q)], on_top || on_bottom ? 0.0 : 1.5 * 1.5) << q;
    if (on_top) top.push_back(all[q]);
  }
  EXPECT_THROW(endocardial_frame(top, face_owners(m, top), m.rest, Eigen::Vector3d::UnitZ()), Error);
}

TEST(EndocardialStrain, VoxelLvPhantomEndocardium) {
  const meshing::VoxelMesh vm = land_lv_mesh(22.0 / 21.0);
  const auto lv_tag =
      std::uint8_t(std::find(vm.tag_names.begin(), vm.tag_names.end(), "endocardium_lv") - vm.tag_names.begin());
  ASSERT_LT(lv_tag, vm.tag_names.size());
  std::vector<mechanics::Quad> faces;
  for (std::size_t q = 0; q < vm.surface_quads.size(); ++q)
    if (vm.surface_tag[q] == lv_tag) faces.push_back(vm.surface_quads[q]);
  ASSERT_GT(faces.size(), 500u);
  const mechanics::HexMesh& m = vm.mesh;
  const Eigen::Vector3d l = Eigen::Vector3d::UnitZ(), apex(0, 0, -17);
  for (const double s : {0.8, 1.15}) {
    const Eigen::Matrix3d A = s * Eigen::Matrix3d::Identity();
    const EndocardialStrain g = measure(m, faces, m.rest, affine(m.rest, A, apex - A * apex), l);
    EXPECT_NEAR(g.longitudinal, s - 1, 1e-12) << s;
    EXPECT_NEAR(g.circumferential, s - 1, 1e-12) << s;
  }
  const Eigen::Matrix3d R = Eigen::AngleAxisd(0.4, Eigen::Vector3d(1, 1, 0).normalized()).toRotationMatrix();
  const EndocardialStrain r = measure(m, faces, m.rest, affine(m.rest, R, {3, 0, -1}), l);
  EXPECT_NEAR(r.longitudinal, 0, 1e-12);
  EXPECT_NEAR(r.circumferential, 0, 1e-12);
}

}  // namespace
}  // namespace cardio::analysis
