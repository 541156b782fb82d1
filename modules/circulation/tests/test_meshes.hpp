#pragma once
// Small voxel meshes with cavities for the circulation tests (as in modules/meshing/tests).
#include <Eigen/Geometry>
#include <functional>
#include <string>
#include <vector>

#include "cardio/meshing/boundary.hpp"
#include "cardio/meshing/voxel_mesh.hpp"

namespace cardio::circulation::testing {

using imaging::Grid;
using imaging::RoleVolume;

inline RoleVolume make_roles(const Grid& g, const std::function<std::uint8_t(long, long, long)>& role_of,
                             std::vector<std::string> cavities) {
  RoleVolume r;
  r.role.grid = g;
  r.labels.grid = g;
  r.role.values.resize(std::size_t(g.n_voxels()));
  r.labels.values.resize(std::size_t(g.n_voxels()));
  for (long k = 0; k < g.size[2]; ++k)
    for (long j = 0; j < g.size[1]; ++j)
      for (long i = 0; i < g.size[0]; ++i) {
        r.role.at(i, j, k) = role_of(i, j, k);
        r.labels.at(i, j, k) = r.role.at(i, j, k);
      }
  r.cavity_names = std::move(cavities);
  return r;
}

inline imaging::VoxelFrames uniform_frames(const RoleVolume& r) {
  imaging::VoxelFrames f;
  f.voxels = imaging::voxels_with_role(r, RoleVolume::kMyocardium);
  f.fibre = Eigen::Matrix3Xd::Zero(3, Eigen::Index(f.voxels.size()));
  f.sheet = f.fibre;
  f.fibre.row(0).setOnes();
  f.sheet.row(1).setOnes();
  return f;
}

/// An oblique grid far from the origin (tests the centroid-relative volume evaluation).
inline Grid oblique_grid(imaging::Index3 size, Eigen::Vector3d spacing) {
  Grid g;
  g.size = size;
  g.spacing = spacing;
  g.origin = Eigen::Vector3d(-120.5, 30.0, 400.25);
  g.direction = Eigen::AngleAxisd(0.7, Eigen::Vector3d(1, 2, 3).normalized()).toRotationMatrix();
  return g;
}

/// Open box ventricle: a one-voxel myocardium shell around a cavity, open at +k (closed by a lid).
inline meshing::VoxelMesh open_box_mesh(imaging::Index3 size = {8, 7, 6}, Eigen::Vector3d spacing = {1.0, 1.2, 0.8}) {
  const Grid g = oblique_grid(size, spacing);
  const RoleVolume roles =
      make_roles(g,
                 [&](long i, long j, long k) {
                   const bool wall = i == 1 || j == 1 || k == 1 || i == g.size[0] - 2 || j == g.size[1] - 2;
                   const bool inside = i >= 1 && j >= 1 && k >= 1 && i <= g.size[0] - 2 && j <= g.size[1] - 2;
                   if (!inside) return RoleVolume::kOutside;
                   return wall ? RoleVolume::kMyocardium : RoleVolume::cavity_role(0);
                 },
                 {"lv"});
  return meshing::build_voxel_mesh(roles, meshing::classify_boundary(roles, meshing::BaseSpec{}), uniform_frames(roles),
                                   1.06);
}

/// Two open boxes side by side (i < 7: "lv", i > 7: "rv") sharing the wall voxel layer i = 7.
inline meshing::VoxelMesh two_box_mesh() {
  const Grid g = oblique_grid({15, 7, 6}, {1.0, 1.0, 1.0});
  const RoleVolume roles = make_roles(g,
                                      [&](long i, long j, long k) {
                                        const bool inside = i >= 1 && j >= 1 && k >= 1 && i <= 13 && j <= 5;
                                        if (!inside) return RoleVolume::kOutside;
                                        const bool wall = i == 1 || i == 7 || i == 13 || j == 1 || j == 5 || k == 1;
                                        if (wall) return RoleVolume::kMyocardium;
                                        return i < 7 ? RoleVolume::cavity_role(0) : RoleVolume::cavity_role(1);
                                      },
                                      {"lv", "rv"});
  return meshing::build_voxel_mesh(roles, meshing::classify_boundary(roles, meshing::BaseSpec{}), uniform_frames(roles),
                                   1.06);
}

}  // namespace cardio::circulation::testing
