#include "cardio/meshing/boundary_fit.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <vector>

#include "cardio/core/error.hpp"
#include "cardio/core/parallel.hpp"

namespace cardio::meshing {
namespace {

using V3 = Eigen::Vector3d;

// Node neighbours along the 12 hexahedron edges (sorted, unique: deterministic sweeps).
std::vector<std::vector<std::int32_t>> edge_neighbours(const mechanics::HexMesh& mesh) {
  static constexpr int kEdges[12][2] = {{0, 1}, {1, 2}, {2, 3}, {3, 0}, {4, 5}, {5, 6},
                                        {6, 7}, {7, 4}, {0, 4}, {1, 5}, {2, 6}, {3, 7}};
  std::vector<std::vector<std::int32_t>> nb(std::size_t(mesh.n_nodes()));
  for (const auto& h : mesh.hexes)
    for (const auto& e : kEdges) {
      nb[std::size_t(h[e[0]])].push_back(h[e[1]]);
      nb[std::size_t(h[e[1]])].push_back(h[e[0]]);
    }
  for (auto& n : nb) {
    std::sort(n.begin(), n.end());
    n.erase(std::unique(n.begin(), n.end()), n.end());
  }
  return nb;
}

// kEdgeAdjacent[a][b]: local nodes a and b of a VTK hexahedron share an edge.
constexpr bool kEdgeAdjacent[8][8] = {{0, 1, 0, 1, 1, 0, 0, 0}, {1, 0, 1, 0, 0, 1, 0, 0}, {0, 1, 0, 1, 0, 0, 1, 0},
                                      {1, 0, 1, 0, 0, 0, 0, 1}, {1, 0, 0, 0, 0, 1, 0, 1}, {0, 1, 0, 0, 1, 0, 1, 0},
                                      {0, 0, 1, 0, 0, 1, 0, 1}, {0, 0, 0, 1, 1, 0, 1, 0}};

// Bit t set: the node lies on a boundary quad with tag t.
std::vector<std::uint32_t> node_tags(const VoxelMesh& m) {
  std::vector<std::uint32_t> tags(std::size_t(m.mesh.n_nodes()), 0);
  for (std::size_t q = 0; q < m.surface_quads.size(); ++q) {
    CARDIO_CHECK(m.surface_tag[q] < 32, "boundary fit: more than 32 surface tags");
    for (std::int32_t n : m.surface_quads[q]) tags[std::size_t(n)] |= 1u << m.surface_tag[q];
  }
  return tags;
}

// Spread the boundary displacement inwards: u_i = mean of the neighbours for nodes not on the
// boundary (Jacobi sweeps, so the result does not depend on the node order or thread count).
void relax_interior(Eigen::Matrix3Xd& u, const std::vector<std::uint32_t>& tags,
                    const std::vector<std::vector<std::int32_t>>& nb, int sweeps) {
  Eigen::Matrix3Xd next = u;
  for (int s = 0; s < sweeps; ++s) {
    parallel_for(u.cols(), [&](std::int64_t i) {
      if (tags[std::size_t(i)] != 0 || nb[std::size_t(i)].empty()) return;
      V3 sum = V3::Zero();
      for (std::int32_t j : nb[std::size_t(i)]) sum += u.col(j);
      next.col(i) = sum / double(nb[std::size_t(i)].size());
    });
    u = next;
  }
}

// The surfaces a fit moves nodes onto: per tag, its projector (or none) and which tags are fitted.
struct FitSurfaces {
  std::vector<const SurfaceProjector*> projector_of;
  std::uint32_t fitted = 0, base_bit = 0;
  V3 n_base;
};

FitSurfaces fit_surfaces(const VoxelMesh& m, const std::map<std::string, SurfaceProjector>& projectors) {
  FitSurfaces f;
  f.projector_of.assign(m.tag_names.size(), nullptr);
  for (std::size_t t = 0; t < m.tag_names.size(); ++t)
    if (const auto it = projectors.find(m.tag_names[t]); it != projectors.end()) {
      f.projector_of[t] = &it->second;
      f.fitted |= 1u << t;
    }
  const auto base_it = std::find(m.tag_names.begin(), m.tag_names.end(), "base");
  f.base_bit = base_it == m.tag_names.end() ? 0 : 1u << (base_it - m.tag_names.begin());
  f.n_base = m.axis.base_normal.normalized();
  return f;
}

// Boundary nodes onto their surface (one fitted tag only; the base keeps its plane): their moves,
// zero elsewhere. Counts fitted and skipped nodes into r.
Eigen::Matrix3Xd boundary_moves(const Eigen::Matrix3Xd& x, const std::vector<std::uint32_t>& tags, const FitSurfaces& f,
                                double max_move, BoundaryFitReport& r) {
  Eigen::Matrix3Xd u = Eigen::Matrix3Xd::Zero(3, x.cols());
  for (std::int64_t i = 0; i < x.cols(); ++i) {
    const std::uint32_t on = tags[std::size_t(i)] & f.fitted;
    if (on == 0) continue;
    if ((on & (on - 1)) != 0) {  // two fitted surfaces meet here (a one-voxel wall): leave it
      ++r.skipped_nodes;
      continue;
    }
    const V3 p = x.col(i);
    V3 d = (*f.projector_of[std::size_t(std::countr_zero(on))])(p)-p;
    if (tags[std::size_t(i)] & f.base_bit) d -= d.dot(f.n_base) * f.n_base;
    if (!d.allFinite() || d.norm() > max_move) {
      ++r.skipped_nodes;
      continue;
    }
    u.col(i) = d;
    ++r.fitted_nodes;
  }
  return u;
}

// Keep every element valid: halve the move of the node at the worst corner of every element whose
// smallest corner Jacobian falls below min_ratio of its voxel's, and repeat. Returns the elements
// limited; `ratio` receives every element's final corner-Jacobian ratio.
std::int64_t limit_to_valid(const mechanics::HexMesh& mesh, const Eigen::Matrix3Xd& x0,
                            const std::vector<double>& rest_jacobian, double min_ratio, Eigen::Matrix3Xd& u,
                            std::vector<double>& ratio) {
  std::vector<char> limited(mesh.hexes.size(), 0);
  ratio.resize(mesh.hexes.size());
  std::vector<int> worst(mesh.hexes.size());
  for (int round = 0;; ++round) {
    const Eigen::Matrix3Xd x = x0 + u;
    parallel_for(mesh.n_elements(), [&](std::int64_t e) {
      const auto k = std::size_t(e);
      ratio[k] = mechanics::min_corner_jacobian(mechanics::gather(x, mesh.hexes[k]), &worst[k]) / rest_jacobian[k];
    });
    std::vector<char> halve(std::size_t(mesh.n_nodes()), 0);
    bool any = false;
    for (std::size_t e = 0; e < ratio.size(); ++e)
      if (ratio[e] < min_ratio) {
        limited[e] = 1;
        any = true;
        // The corner Jacobian at node c depends on c and its three edge neighbours in the element;
        // after many rounds (a stubborn element) all eight nodes are scaled back.
        const int c = worst[e];
        for (int k = 0; k < 8; ++k)
          if (k == c || kEdgeAdjacent[c][k] || round >= 30) halve[std::size_t(mesh.hexes[e][std::size_t(k)])] = 1;
      }
    if (!any) return std::count(limited.begin(), limited.end(), 1);
    CARDIO_CHECK(round < 200, "boundary fit: could not keep every element valid");
    for (std::int64_t i = 0; i < mesh.n_nodes(); ++i)
      if (halve[std::size_t(i)]) u.col(i) *= 0.5;
  }
}

}  // namespace

BoundaryFitReport fit_boundary(VoxelMesh& m, const std::map<std::string, SurfaceProjector>& projectors, double density,
                               const BoundaryFitOptions& o) {
  mechanics::HexMesh& mesh = m.mesh;
  const std::vector<std::uint32_t> tags = node_tags(m);
  const FitSurfaces surfaces = fit_surfaces(m, projectors);
  const auto neighbours = edge_neighbours(mesh);
  const Eigen::Matrix3Xd original = mesh.rest;
  std::vector<double> rest_jacobian(mesh.hexes.size()), ratio;
  parallel_for(mesh.n_elements(), [&](std::int64_t e) {
    rest_jacobian[std::size_t(e)] =
        mechanics::min_corner_jacobian(mechanics::gather(mesh.rest, mesh.hexes[std::size_t(e)]));
  });
  BoundaryFitReport r;
  for (int pass = 0; pass < std::max(1, o.passes); ++pass) {
    BoundaryFitReport counts;
    Eigen::Matrix3Xd u =
        boundary_moves(mesh.rest, tags, surfaces, o.max_move_voxels * m.grid.spacing.minCoeff(), counts);
    if (pass == 0) r.fitted_nodes = counts.fitted_nodes, r.skipped_nodes = counts.skipped_nodes;
    relax_interior(u, tags, neighbours, o.relaxation_sweeps);
    r.limited_elements = limit_to_valid(mesh, mesh.rest, rest_jacobian, o.min_jacobian_ratio, u, ratio);
    mesh.rest += u;
  }
  double sum_sq = 0;
  for (std::int64_t i = 0; i < mesh.n_nodes(); ++i) {
    const double moved = (mesh.rest.col(i) - original.col(i)).norm();
    if (tags[std::size_t(i)] & surfaces.fitted) {
      r.max_move_mm = std::max(r.max_move_mm, moved);
      sum_sq += moved * moved;
    }
    r.relaxed_nodes += tags[std::size_t(i)] == 0 && moved > 0;
  }
  r.rms_move_mm = r.fitted_nodes ? std::sqrt(sum_sq / double(r.fitted_nodes)) : 0;
  r.min_jacobian_ratio = ratio.empty() ? 1.0 : *std::min_element(ratio.begin(), ratio.end());
  m.volume = mechanics::element_volumes(mesh, mesh.rest);
  m.mass = mechanics::lumped_masses(mesh, std::vector<double>(m.labels_used.size(), density));
  return r;
}

}  // namespace cardio::meshing
