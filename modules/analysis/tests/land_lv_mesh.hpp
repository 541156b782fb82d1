#pragma once
// The Land et al. 2015 LV phantom (endocardium r_s 7, r_l 17; epicardium r_s 10, r_l 20; base z = 5)
// meshed with voxels of edge h (staircase boundary, base plane z = 5), for the analysis tests.
#include <Eigen/Core>

#include "cardio/imaging/volume.hpp"
#include "cardio/meshing/boundary.hpp"
#include "cardio/meshing/voxel_mesh.hpp"
#include "cardio/phantoms/phantoms.hpp"

namespace cardio::analysis::testing {

inline meshing::VoxelMesh land_lv_mesh(double h) {
  phantoms::PhantomSpec spec;
  spec.voxel_size = h;
  const phantoms::Phantom ph = phantoms::make_phantom(spec);
  imaging::RoleVolume roles;
  roles.role.grid = ph.labels.grid;
  roles.labels = ph.labels;
  roles.cavity_names = {"lv"};
  roles.role.values.resize(ph.labels.values.size());
  for (std::size_t v = 0; v < ph.labels.values.size(); ++v)
    roles.role.values[v] = ph.labels.values[v] == spec.labels.lv_myocardium ? imaging::RoleVolume::kMyocardium
                           : ph.labels.values[v] == spec.labels.lv_cavity   ? imaging::RoleVolume::cavity_role(0)
                                                                            : imaging::RoleVolume::kOutside;
  const meshing::BaseSpec base{meshing::BaseSpec::Mode::plane, Eigen::Vector3d(0, 0, 5), Eigen::Vector3d(0, 0, 1)};
  const meshing::BoundaryClassification boundary = meshing::classify_boundary(roles, base);
  imaging::VoxelFrames frames;
  frames.voxels = imaging::voxels_with_role(roles, imaging::RoleVolume::kMyocardium);
  frames.fibre = Eigen::Vector3d::UnitX().replicate(1, Eigen::Index(frames.voxels.size()));
  frames.sheet = Eigen::Vector3d::UnitY().replicate(1, Eigen::Index(frames.voxels.size()));
  return meshing::build_voxel_mesh(roles, boundary, frames, 1.06);
}

}  // namespace cardio::analysis::testing
