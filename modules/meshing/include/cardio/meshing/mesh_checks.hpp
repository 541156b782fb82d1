#pragma once
/// @file mesh_checks.hpp
/// Checks of the voxels about to be meshed, for the warnings of the mesh report: walls less than
/// two voxels thick between two blood pools or between a blood pool and the outside.
#include <Eigen/Core>
#include <cstdint>
#include <vector>

#include "cardio/imaging/volume.hpp"
#include "cardio/meshing/boundary.hpp"

namespace cardio::meshing {

/// Where a wall between two regions (role values: 0 outside, 2 + c cavity c) is thin.
struct ThinWall {
  std::uint8_t region_a = 0, region_b = 0;  ///< role values, region_a < region_b
  std::int64_t voxels = 0;                  ///< myocardium voxels one voxel across between the two
  std::int64_t direct_contacts = 0;         ///< faces where two cavities touch with no myocardium between
  Eigen::Vector3d position_mm{0, 0, 0};     ///< the site (voxel centre or face centre) nearest their centroid
  double spacing_mm = 0;                    ///< smallest grid spacing along the axes the wall is thin along
};

struct ThinWalls {
  std::vector<ThinWall> walls;  ///< one per pair of regions, in order of (region_a, region_b)
  std::int64_t voxels = 0;      ///< distinct myocardium voxels in a thin wall
  std::int64_t direct_contacts = 0;
};

/// A myocardium voxel is in a thin wall when, along some index axis, its two neighbours are not
/// myocardium and belong to different regions (so one element separates them; a 6-connected
/// diagonal wall is caught too). The grid border counts as outside. The rim of a cavity's opening
/// is not a wall: a neighbour across a face the boundary tags as base, or across a face looking
/// towards the base (normal within 60 degrees of the base normal) of a voxel within two voxels of
/// the base plane, is not counted as outside (when the boundary has base faces).
/// Two cavities whose voxels share a face have a wall of zero voxels (direct contacts).
ThinWalls find_thin_walls(const imaging::RoleVolume& roles, const BoundaryClassification& boundary);

}  // namespace cardio::meshing
