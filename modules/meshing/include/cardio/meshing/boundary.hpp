#pragma once
/// @file boundary.hpp
/// Classification of the myocardium's boundary at voxel-face level: endocardium of each cavity
/// (the face touches that cavity's blood pool), base (faces on the valve plane), epicardium (the
/// rest), and the long axis of the heart (base plane normal through the apex).
#include <Eigen/Core>
#include <cstdint>
#include <string>
#include <vector>

#include "cardio/imaging/volume.hpp"

namespace cardio::meshing {

/// Side of a voxel: 0 -i, 1 +i, 2 -j, 3 +j, 4 -k, 5 +k (the index axes of the grid).
using VoxelSide = std::uint8_t;

/// Surface tags: 0 epicardium, 1 base, 2 + c endocardium of cavity c.
struct SurfaceTag {
  static constexpr std::uint8_t kEpicardium = 0;
  static constexpr std::uint8_t kBase = 1;
  static constexpr std::uint8_t kFirstEndocardium = 2;
  static std::uint8_t endocardium(std::size_t cavity) { return static_cast<std::uint8_t>(kFirstEndocardium + cavity); }
};

/// One boundary face of a myocardium voxel.
struct VoxelFace {
  std::int64_t voxel;  ///< linear index of the myocardium voxel
  VoxelSide side;
  std::uint8_t tag;  ///< SurfaceTag value
};

/// How to find the base (valve plane). automatic: the plane through the centroid of the cavities'
/// openings (cavity voxel faces that touch the outside), normal = their mean outward normal;
/// plane: given by a point and a normal pointing from apex to base; none: no base faces.
/// A myocardium face touching the outside is base if its centre lies within `tolerance` of the
/// plane and its outward normal has a positive component along the plane normal.
struct BaseSpec {
  enum class Mode { automatic, plane, none };
  Mode mode = Mode::automatic;
  Eigen::Vector3d point{0, 0, 0};   ///< [mm] (plane mode)
  Eigen::Vector3d normal{0, 0, 1};  ///< apex -> base (plane mode)
  double tolerance = 0.0;           ///< [mm]; 0 = 3/4 of the largest voxel spacing
};

/// Long axis: unit normal of the base plane (apex to base), a point on the base plane, and the apex
/// (centre of the myocardium voxel farthest from the base plane, ties to the one nearest the axis).
struct LongAxis {
  Eigen::Vector3d base_point{0, 0, 0};
  Eigen::Vector3d base_normal{0, 0, 1};
  Eigen::Vector3d apex{0, 0, 0};
  std::int64_t apex_voxel = -1;
};

struct BoundaryClassification {
  std::vector<VoxelFace> faces;  ///< by voxel (ascending), then side
  LongAxis axis;
  std::vector<std::string> tag_names;  ///< index = tag: "epicardium", "base", "endocardium_<cavity>"
};

/// Classify every myocardium face that does not touch another myocardium voxel. Faces on the
/// grid border count as touching the outside. Throws cardio::Error if no myocardium voxel exists.
BoundaryClassification classify_boundary(const imaging::RoleVolume& roles, const BaseSpec& base);

/// Outward unit normal of a voxel side in physical space.
Eigen::Vector3d side_normal(const imaging::Grid& grid, VoxelSide side);

}  // namespace cardio::meshing
