#pragma once
/// @file mesh.hpp
/// Hexahedral mesh with per-element material frames. Node coordinates are a 3 x n_nodes
/// matrix (each node's xyz contiguous, for the 8-node gathers of the element kernels).
/// Element connectivity follows VTK_HEXAHEDRON order:
///   0 (0,0,0)  1 (1,0,0)  2 (1,1,0)  3 (0,1,0)  4 (0,0,1)  5 (1,0,1)  6 (1,1,1)  7 (0,1,1)
/// in the element's local (i,j,k) lattice directions.
#include <Eigen/Core>
#include <Eigen/Geometry>
#include <array>
#include <cstdint>
#include <vector>

#include "cardio/core/parallel.hpp"

namespace cardio::mechanics {

using Hex = std::array<std::int32_t, 8>;

/// The 8 nodes of one element as a 3 x 8 matrix (node i in column i, VTK order).
using NodeMatrix = Eigen::Matrix<double, 3, 8>;

/// Gather the nodes of element h from a 3 x n matrix.
inline NodeMatrix gather(const Eigen::Matrix3Xd& x, const Hex& h) {
  NodeMatrix m;
  for (int i = 0; i < 8; ++i) m.col(i) = x.col(h[i]);
  return m;
}

/// Local node indices of the 6 faces of a VTK hexahedron, ordered so that the face normal
/// (right-hand rule) points out of the element. Face 2a is the -a side, 2a+1 the +a side.
inline constexpr std::array<std::array<int, 4>, 6> kHexFaces{{
    {0, 4, 7, 3},  // -x
    {1, 2, 6, 5},  // +x
    {0, 1, 5, 4},  // -y
    {3, 7, 6, 2},  // +y
    {0, 3, 2, 1},  // -z
    {4, 5, 6, 7},  // +z
}};

/// A hexahedral mesh in physical space [mm] with an orthonormal frame per element.
struct HexMesh {
  Eigen::Matrix3Xd rest;                ///< rest node positions [mm], 3 x n_nodes
  std::vector<Hex> hexes;               ///< connectivity, VTK order
  Eigen::Matrix3Xd fibre;               ///< per-element unit fibre direction f, 3 x n_elements
  Eigen::Matrix3Xd sheet;               ///< per-element unit sheet direction s (orthogonal to f)
  std::vector<std::uint16_t> material;  ///< per-element index into the material list
  /// Optional fibre frames at the 8 samples (2x2x2 Gauss points) of every element, for the
  /// sampled-axes element: column 8 e + g is sample g of element e (3 x 8 n_elements). Empty:
  /// every sample takes its element's frame.
  Eigen::Matrix3Xd sample_fibre, sample_sheet;

  std::int64_t n_nodes() const { return rest.cols(); }
  std::int64_t n_elements() const { return static_cast<std::int64_t>(hexes.size()); }
  /// Normal direction n = f x s of element e (right-handed frame).
  Eigen::Vector3d normal(std::int64_t e) const { return fibre.col(e).cross(sheet.col(e)); }
  /// Frame [f s n] of sample g of element e (the element frame when no sample frames are set).
  Eigen::Matrix3d sample_frame(std::int64_t e, int g) const;
};

/// A boundary quadrilateral: 4 node ids ordered with the outward normal by the right-hand rule.
using Quad = std::array<std::int32_t, 4>;

/// Volume of a hexahedron [mm^3] (divergence theorem over its 6 faces, each bilinear face split
/// along both diagonals and averaged: exact for planar faces).
double hex_volume(const NodeMatrix& x);

/// The element with the smallest det F over its 2x2x2 Gauss points at positions x (rest: the
/// mesh's), and that value. An element is inverted when it is <= 0. Deterministic (ties: lowest id).
struct WorstElement {
  std::int64_t element = -1;
  double J = 1;  ///< smallest sample det F
};
WorstElement worst_element(const HexMesh& mesh, const Eigen::Matrix3Xd& x);

/// Smallest corner Jacobian det(dx/dxi) of a hexahedron at its 8 nodes (xi in [-1, 1]^3: a cube of
/// side h gives h^3/8). Positive at every corner means the trilinear map is valid (not inverted).
/// `corner`, if given, receives the local node index (VTK order) where the minimum is.
double min_corner_jacobian(const NodeMatrix& x, int* corner = nullptr);

/// All faces that belong to exactly one element (the mesh boundary), outward oriented,
/// in a deterministic order (by element, then local face).
std::vector<Quad> boundary_faces(const HexMesh& mesh);

/// Rest volume of every element [mm^3] (exact trilinear hexahedron volume).
Eigen::VectorXd element_volumes(const HexMesh& mesh, const Eigen::Matrix3Xd& x);

/// Volume enclosed by a closed, outward-oriented quad surface at positions x [mm^3]
/// (divergence theorem with each bilinear quad split along both diagonals).
double enclosed_volume(const std::vector<Quad>& surface, const Eigen::Matrix3Xd& x);

/// Deterministic parallel schedule of the element loop: the elements are cut into chunks of
/// consecutive indices, and the chunks are coloured so that chunks of one colour share no node.
/// Chunks of a colour run in parallel, each chunk serially in element order, colours one after
/// the other. Every node therefore receives its element contributions in the same order for any
/// thread count (bit-identical sums, no atomics), and consecutive elements keep their shared
/// nodes in cache. The chunk size depends on the mesh only, never on the thread count.
struct ElementSchedule {
  std::vector<std::int32_t> chunk_begin;           ///< chunk c is [chunk_begin[c], chunk_begin[c+1])
  std::vector<std::vector<std::int32_t>> colours;  ///< chunk ids per colour
};
ElementSchedule schedule_elements(const HexMesh& mesh);

/// Run body(begin, end) over the schedule's chunks of elements [begin, end): race-free scatter
/// into node arrays. Chunks begin at multiples of 16 (SIMD blocks of elements never straddle two).
template <class Body>
void for_each_chunk(const ElementSchedule& s, Body&& body);

/// Run body(e) over all elements with the schedule, each chunk in element order.
template <class Body>
void for_each_element(const ElementSchedule& s, Body&& body);

/// Lumped nodal masses [mg]: each element's mass density * volume split equally on its nodes.
Eigen::VectorXd lumped_masses(const HexMesh& mesh, const std::vector<double>& density_per_material);

template <class Body>
void for_each_chunk(const ElementSchedule& s, Body&& body) {
  for (const auto& colour : s.colours)
    parallel_for_blocks(static_cast<std::int64_t>(colour.size()), [&](std::int64_t k) {
      const std::int32_t c = colour[static_cast<std::size_t>(k)];
      body(s.chunk_begin[c], s.chunk_begin[c + 1]);
    });
}

template <class Body>
void for_each_element(const ElementSchedule& s, Body&& body) {
  for_each_chunk(s, [&](std::int32_t begin, std::int32_t end) {
    for (std::int32_t e = begin; e < end; ++e) body(e);
  });
}

}  // namespace cardio::mechanics
