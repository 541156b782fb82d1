#pragma once
/// @file block_geometry.hpp
/// Node sets and lengths of a voxel block (mechanics/block.hpp's numbering), shared by the
/// experiments' set-up and their measurements (internal to pipeline/blocks).
#include <cstdint>
#include <vector>

#include "cardio/mechanics/block.hpp"
#include "cardio/mechanics/system.hpp"

namespace cardio::pipeline::block_geometry {

inline const char* const kAxisName[3] = {"x", "y", "z"};

/// Lattice index of node n of the block along each axis.
Eigen::Vector3i lattice(const mechanics::BlockSpec& b, std::int32_t n);
/// Elements along `axis`.
int count(const mechanics::BlockSpec& b, int axis);
/// The nodes of the face normal to `axis`, at its high or low end.
std::vector<std::int32_t> face_nodes(const mechanics::BlockSpec& b, int axis, bool high);
/// Mean displacement component `comp` of `nodes` [mm].
double mean_displacement(const mechanics::NodeState& s, const mechanics::HexMesh& mesh,
                         const std::vector<std::int32_t>& nodes, int comp);
/// The block's length along `axis` [mm].
double length(const mechanics::BlockSpec& b, int axis);
/// Voigt index of the symmetric pair (a, b): 0..2 normal, 3 = yz, 4 = xz, 5 = xy.
int voigt_index(int a, int b);

}  // namespace cardio::pipeline::block_geometry
