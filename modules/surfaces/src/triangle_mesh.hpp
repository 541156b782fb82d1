#pragma once
/// @file triangle_mesh.hpp
/// A triangle mesh with a patch class per triangle, on plain arrays (internal to surfaces): the
/// topology the surface checks need (edge uses, open loops, orientation) and the enclosed volumes,
/// computed here so that the errors can give exact counts and coordinates.
#include <Eigen/Core>
#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <unordered_map>
#include <vector>

namespace cardio::surfaces::detail {

using Vec3 = Eigen::Vector3d;
using Tri = std::array<std::int64_t, 3>;

/// Triangle of no patch (seam triangle with mixed point classes, or no class array).
constexpr int kNoPatch = std::numeric_limits<int>::min();

struct TriangleMesh {
  std::vector<Vec3> points;
  std::vector<Tri> tris;
  std::vector<int> patch;  ///< class of each triangle
};

/// How often an (undirected) edge is used, and by which triangles (the first two).
struct EdgeUse {
  int count = 0;
  std::int64_t t0 = -1, t1 = -1;
};
using EdgeMap = std::unordered_map<std::uint64_t, EdgeUse>;

std::uint64_t edge_key(std::int64_t a, std::int64_t b);
EdgeMap edge_uses(const std::vector<Tri>& tris);

/// A closed chain of boundary edges (edges in one triangle only), as its vertices in order.
struct OpenLoop {
  std::vector<std::int64_t> vertices;
  int patch = kNoPatch;  ///< class of the triangles along it (the first edge's)

  Vec3 centroid(const std::vector<Vec3>& points) const;
};

/// The open loops of `m` (chained without regard to direction, so the triangles need not be oriented
/// yet), in a deterministic order. Open edges that do not chain into a loop are left out.
std::vector<OpenLoop> open_loops(const TriangleMesh& m);

/// Counts of edges in one triangle (open) and in more than two (non-manifold), and the open edges by
/// the patch of their triangle.
struct EdgeCounts {
  std::int64_t open = 0, nonmanifold = 0;
  std::unordered_map<int, std::int64_t> open_by_patch;
};
EdgeCounts count_edges(const TriangleMesh& m, const EdgeMap& edges);

/// Orients each connected component of a closed manifold mesh consistently and outward; returns the
/// component of each triangle and each component's enclosed volume [mm³]. Throws cardio::Error
/// naming `source` when a component cannot be oriented (self-overlapping or duplicated triangles).
struct Components {
  std::vector<int> of_triangle;
  std::vector<double> volume;
};
Components orient_outward(TriangleMesh& m, const EdgeMap& edges, const Vec3& centre, const std::string& source);

/// 6 x the signed volume of the tetrahedron (o, triangle): summed over a closed surface, 6 x its volume.
double signed_volume6(const std::vector<Vec3>& p, const Tri& t, const Vec3& o);

/// Volume enclosed by the components by the even-odd rule (a component nested inside an odd number of
/// others is a hole).
double even_odd_volume(const TriangleMesh& m, const Components& c);

}  // namespace cardio::surfaces::detail
