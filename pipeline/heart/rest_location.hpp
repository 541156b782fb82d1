#pragma once
/// @file rest_location.hpp
/// Points located in the rest shape of a voxel mesh, and fields interpolated there (probes,
/// the coarse-mesh start).
#include <Eigen/Core>
#include <cstdint>
#include <optional>
#include <vector>

#include "cardio/meshing/voxel_mesh.hpp"

namespace cardio::pipeline {

struct RestLocation {
  std::int64_t element = -1;
  Eigen::Vector3d xi = Eigen::Vector3d::Zero();  ///< local coordinates in the element, in [0, 1]
};

/// The elements of `m` whose voxels lie within `reach` voxels of p's voxel, in scan order.
std::vector<std::int64_t> elements_near(const meshing::VoxelMesh& m, const Eigen::Vector3d& p, int reach);

/// The element of `m` whose rest shape contains `p`, with p's local coordinates there, searched among
/// the voxels next to p's. The elements are taken as affine in p (voxel parallelepipeds; near a fitted
/// surface an approximation). nullopt if none of them holds p.
std::optional<RestLocation> containing_element(const meshing::VoxelMesh& m, const Eigen::Vector3d& p);

/// Local coordinates of p in the trilinear element `hex` with rest positions X (Newton's method on
/// x(xi) = p; exact in one step for a parallelepiped, a few for a fitted element). Beyond [0, 1]
/// when p lies outside.
Eigen::Vector3d local_coordinates(const Eigen::Matrix3Xd& X, const mechanics::Hex& hex, const Eigen::Vector3d& p);

/// The element among elements_near(m, p, reach) that holds p (its trilinear rest shape), or else the
/// one whose closest point (at p's clamped local coordinates) is nearest to p; xi clamped to
/// [0, 1]. element -1 if there is none. Ties: the first in scan order (deterministic).
RestLocation nearest_element(const meshing::VoxelMesh& m, const Eigen::Vector3d& p, int reach);

/// The trilinear interpolation of a nodal `field` (3 x nodes) in `element` at local coordinates xi.
Eigen::Vector3d interpolate_in_element(const meshing::VoxelMesh& m, std::int64_t element, const Eigen::Vector3d& xi,
                                       const Eigen::Matrix3Xd& field);

}  // namespace cardio::pipeline
