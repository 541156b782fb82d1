#pragma once
/// @file rest_location.hpp
/// Points located in the rest shape of a voxel mesh, and fields interpolated there (probes,
/// the coarse-mesh start).
#include <Eigen/Core>
#include <cstdint>
#include <optional>

#include "cardio/meshing/voxel_mesh.hpp"

namespace cardio::pipeline {

struct RestLocation {
  std::int64_t element = -1;
  Eigen::Vector3d xi = Eigen::Vector3d::Zero();  ///< local coordinates in the element, in [0, 1]
};

/// The element of `m` whose rest shape contains `p`, with p's local coordinates there, searched among
/// the voxels next to p's. The elements are taken as affine in p (voxel parallelepipeds; near a fitted
/// surface an approximation). nullopt if none of them holds p.
std::optional<RestLocation> containing_element(const meshing::VoxelMesh& m, const Eigen::Vector3d& p);

/// The trilinear interpolation of a nodal `field` (3 x nodes) in `element` at local coordinates xi.
Eigen::Vector3d interpolate_in_element(const meshing::VoxelMesh& m, std::int64_t element, const Eigen::Vector3d& xi,
                                       const Eigen::Matrix3Xd& field);

}  // namespace cardio::pipeline
