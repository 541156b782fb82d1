// Wall thickness against closed forms: a voxelised spherical shell (r = 6 to 10 mm) with its
// boundary nodes put on the spheres, at rest and after an incompressible radial motion.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>

#include "cardio/analysis/wall.hpp"
#include "cardio/core/error.hpp"
#include "cardio/meshing/boundary.hpp"

using namespace cardio;
using Vec3 = Eigen::Vector3d;

namespace {

constexpr double kInner = 6, kOuter = 10;

/// Myocardium for kInner <= |x| < kOuter (cavity "lv" inside), voxel size h, no base.
meshing::VoxelMesh shell(double h) {
  imaging::RoleVolume roles;
  const auto n = std::int64_t(std::ceil(2 * (kOuter + 2 * h) / h));
  roles.role.grid.size = {n, n, n};
  roles.role.grid.spacing = Vec3::Constant(h);
  roles.role.grid.origin = Vec3::Constant(-h * double(n - 1) / 2);
  roles.cavity_names = {"lv"};
  roles.role.values.assign(std::size_t(roles.role.grid.n_voxels()), imaging::RoleVolume::kOutside);
  for (std::int64_t v = 0; v < roles.role.grid.n_voxels(); ++v) {
    const auto [i, j, k] = roles.role.grid.index(v);
    const double r = roles.role.grid.point(i, j, k).norm();
    if (r < kInner)
      roles.role.values[std::size_t(v)] = imaging::RoleVolume::cavity_role(0);
    else if (r < kOuter)
      roles.role.values[std::size_t(v)] = imaging::RoleVolume::kMyocardium;
  }
  roles.labels.grid = roles.role.grid;
  roles.labels.values.assign(roles.role.values.begin(), roles.role.values.end());
  const meshing::BoundaryClassification boundary =
      meshing::classify_boundary(roles, meshing::BaseSpec{meshing::BaseSpec::Mode::none});
  imaging::VoxelFrames frames;
  frames.voxels = imaging::voxels_with_role(roles, imaging::RoleVolume::kMyocardium);
  frames.fibre = Vec3::UnitX().replicate(1, Eigen::Index(frames.voxels.size()));
  frames.sheet = Vec3::UnitY().replicate(1, Eigen::Index(frames.voxels.size()));
  return meshing::build_voxel_mesh(roles, boundary, frames, 1.06);
}

/// Node positions with the epicardial nodes at radius `outer` and the endocardial ones at `inner`
/// (along their ray from the centre); other nodes stay.
Eigen::Matrix3Xd on_spheres(const meshing::VoxelMesh& m, double inner, double outer) {
  Eigen::Matrix3Xd x = m.mesh.rest;
  for (std::size_t q = 0; q < m.surface_quads.size(); ++q) {
    const double r = m.surface_tag[q] == meshing::SurfaceTag::kEpicardium ? outer : inner;
    for (std::int32_t n : m.surface_quads[q]) x.col(n) = r * m.mesh.rest.col(n).normalized();
  }
  return x;
}

}  // namespace

TEST(WallThickness, SphericalShellAtRestAndAfterAnIncompressibleRadialMotion) {
  const meshing::VoxelMesh m = shell(0.5);
  // Distances from the vertices of one sphere to the triangulated other one: exact up to the chord
  // error of quads about 0.5 mm wide on radius 6 (about 0.005 mm).
  EXPECT_NEAR(analysis::mean_wall_thickness(m, on_spheres(m, kInner, kOuter)), kOuter - kInner, 0.02);
  // Systole-like: the cavity radius 6 -> 5 mm at constant wall volume, r_out^3 = 10^3 - 6^3 + 5^3.
  const double outer = std::cbrt(kOuter * kOuter * kOuter - kInner * kInner * kInner + 125.0);
  EXPECT_NEAR(analysis::mean_wall_thickness(m, on_spheres(m, 5.0, outer)), outer - 5.0, 0.02);
}

TEST(WallThickness, StaircaseSurfacesBiasItLessThanVolumeOverArea) {
  // The staircase (rest nodes) has about 1.5x the area of the spheres. Tissue volume over the mean
  // of the endo- and epicardial areas (the summary's measure before) then reads far too thin; the
  // distance measure stays within about half a voxel of the true 4 mm (corners are nearer).
  const meshing::VoxelMesh m = shell(0.5);
  const Eigen::Matrix3Xd& x = m.mesh.rest;
  double endo = 0, epi = 0;
  for (std::size_t q = 0; q < m.surface_quads.size(); ++q) {
    const auto& v = m.surface_quads[q];
    const double a = 0.5 * (x.col(v[2]) - x.col(v[0])).cross(x.col(v[3]) - x.col(v[1])).norm();
    (m.surface_tag[q] == meshing::SurfaceTag::kEpicardium ? epi : endo) += a;
  }
  const double volume_over_area = m.volume.sum() / (0.5 * (endo + epi));
  const double distance = analysis::mean_wall_thickness(m, x);
  std::cout << "staircase shell, true 4 mm: distance " << distance << " mm, volume / area " << volume_over_area
            << " mm\n";
  EXPECT_NEAR(distance, kOuter - kInner, 0.3);
  EXPECT_LT(std::abs(distance - 4), 0.5 * std::abs(volume_over_area - 4));
}

TEST(WallThickness, NeedsBothWalls) {
  meshing::VoxelMesh m = shell(1.0);
  for (auto& t : m.surface_tag) t = meshing::SurfaceTag::kEpicardium;
  EXPECT_THROW(analysis::mean_wall_thickness(m, m.mesh.rest), Error);
}
