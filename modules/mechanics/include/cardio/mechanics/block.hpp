#pragma once
/// @file block.hpp
/// Geometry for experiments: an nx x ny x nz block of cubic voxels of side h with a fibre field.
#include <Eigen/Core>
#include <cstdint>

#include "cardio/mechanics/mesh.hpp"

namespace cardio::mechanics {

/// Fibre field of a block.
struct FibreField {
  enum class Kind { uniform, rotating, random };
  Kind kind = Kind::uniform;
  Eigen::Vector3d direction{1, 0, 0};  ///< uniform fibre direction (and start of rotation)
  Eigen::Vector3d sheet{0, 1, 0};      ///< uniform: sheet hint, orthogonalised against f
  Eigen::Vector3d axis{0, 0, 1};       ///< rotating: the through-thickness axis
  double angle_start = 0.0;            ///< rotating: angle [rad] of f about `axis` at the low face
  double angle_end = 0.0;              ///< rotating: angle [rad] at the high face
  std::uint64_t seed = 1;              ///< random: seed of the per-voxel random frames
};

/// Block geometry: voxel counts, voxel side [mm] and the position of the (0,0,0) corner [mm].
struct BlockSpec {
  int nx = 1, ny = 1, nz = 1;
  double h = 1.0;
  Eigen::Vector3d origin = Eigen::Vector3d::Zero();
};

/// Build the block. Node (i,j,k) has index i + (nx+1)(j + (ny+1)k); element (i,j,k) has index
/// i + nx(j + ny k). Frames follow `fibres`; material index 0 everywhere.
HexMesh make_block(const BlockSpec& spec, const FibreField& fibres);

/// Index of lattice node (i,j,k) of a block.
inline std::int32_t block_node(const BlockSpec& s, int i, int j, int k) {
  return i + (s.nx + 1) * (j + (s.ny + 1) * k);
}

}  // namespace cardio::mechanics
