#include "heart/coarse_start.hpp"

#include <Eigen/LU>
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "cardio/core/error.hpp"
#include "cardio/core/parallel.hpp"
#include "cardio/mechanics/mesh.hpp"
#include "heart/guess_smoothing.hpp"
#include "heart/rest_location.hpp"
#include "mesh/mesh_stage.hpp"

namespace cardio::pipeline {

MeshConfig with_element_size(const MeshConfig& fine, double element_size) {
  MeshConfig c = fine;
  GeometryParams& g = c.geometry;
  switch (g.source) {
    case GeometrySource::phantom:
      g.phantom.voxel_size = element_size;
      break;
    case GeometrySource::box:
      g.box.voxel_size = element_size;
      break;
    case GeometrySource::surface:
      g.surface.voxel_size = element_size;
      break;
    case GeometrySource::image:
      g.element_size = element_size;
      break;
  }
  c.write_surfaces = false;
  c.draw_figures = false;
  return c;
}

namespace {

constexpr int kCorner[8][3] = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}, {0, 0, 1}, {1, 0, 1}, {1, 1, 1}, {0, 1, 1}};

/// Local coordinates of p in the trilinear element `hex` (rest positions X): Newton's method on
/// x(xi) = p from the element's centre (exact in one step for a box; fitted elements need a few).
Eigen::Vector3d local_coordinates(const Eigen::Matrix3Xd& X, const mechanics::Hex& hex, const Eigen::Vector3d& p) {
  Eigen::Vector3d xi = Eigen::Vector3d::Constant(0.5);
  for (int it = 0; it < 8; ++it) {
    Eigen::Vector3d x = Eigen::Vector3d::Zero();
    Eigen::Matrix3d J = Eigen::Matrix3d::Zero();  // dx/dxi
    for (int n = 0; n < 8; ++n) {
      Eigen::Vector3d dw = Eigen::Vector3d::Ones();
      double w = 1;
      for (int a = 0; a < 3; ++a) {
        const double f = kCorner[n][a] ? xi[a] : 1 - xi[a];
        w *= f;
        for (int b = 0; b < 3; ++b) dw[b] *= b == a ? (kCorner[n][a] ? 1.0 : -1.0) : f;
      }
      x += w * X.col(hex[std::size_t(n)]);
      J += X.col(hex[std::size_t(n)]) * dw.transpose();
    }
    const Eigen::Vector3d step = J.partialPivLu().solve(p - x);
    xi += step;
    if (!(step.norm() > 1e-12)) break;
  }
  return xi;
}

/// The element of `m` near p (within two voxels of p's) that holds p, or else the one whose
/// nearest point (at the clamped local coordinates) is closest to p; with p's clamped local
/// coordinates there. -1 if none. Ties: the first in scan order, deterministic.
std::pair<std::int64_t, Eigen::Vector3d> nearest_element(const meshing::VoxelMesh& m, const Eigen::Vector3d& p) {
  const Eigen::Vector3d ci = m.grid.continuous_index(p);
  std::pair<std::int64_t, Eigen::Vector3d> best{-1, Eigen::Vector3d::Zero()};
  double best_distance = std::numeric_limits<double>::infinity();
  for (int dk = -2; dk <= 2; ++dk)
    for (int dj = -2; dj <= 2; ++dj)
      for (int di = -2; di <= 2; ++di) {
        const std::int64_t i = std::llround(ci[0]) + di, j = std::llround(ci[1]) + dj, k = std::llround(ci[2]) + dk;
        if (!m.grid.contains(i, j, k)) continue;
        const auto it = std::lower_bound(m.voxel.begin(), m.voxel.end(), m.grid.linear(i, j, k));
        if (it == m.voxel.end() || *it != m.grid.linear(i, j, k)) continue;
        const std::int64_t e = it - m.voxel.begin();
        const Eigen::Vector3d xi = local_coordinates(m.mesh.rest, m.mesh.hexes[std::size_t(e)], p);
        const Eigen::Vector3d clamped = xi.cwiseMax(0.0).cwiseMin(1.0);
        const double distance =
            (xi - clamped).isZero(1e-9) ? 0.0 : (interpolate_in_element(m, e, clamped, m.mesh.rest) - p).norm();
        if (distance < best_distance) {
          best_distance = distance;
          best = {e, clamped};
        }
      }
  return best;
}

}  // namespace

Eigen::Matrix3Xd interpolate_displacement(const meshing::VoxelMesh& coarse, const Eigen::Matrix3Xd& u_coarse,
                                          const meshing::VoxelMesh& fine) {
  Eigen::Matrix3Xd u = Eigen::Matrix3Xd::Zero(3, fine.mesh.n_nodes());
  parallel_for(fine.mesh.n_nodes(), [&](std::int64_t n) {
    const auto [element, xi] = nearest_element(coarse, fine.mesh.rest.col(n));
    if (element >= 0) u.col(n) = interpolate_in_element(coarse, element, xi, u_coarse);
  });
  unfold_inverted_elements(fine.mesh, u);
  return u;
}

HeartRunResult solve_with_coarse_start(const HeartSimulation& sim, const MeshConfig& mesh_config,
                                       const meshing::VoxelMesh& fine, std::ostream* log) {
  const double coarse_size = 2 * fine.grid.spacing.maxCoeff();
  if (log) *log << "coarse-mesh start: meshing and solving at " << coarse_size << " mm first" << std::endl;
  std::optional<MeshStageResult> coarse;
  std::optional<HeartRunResult> c;
  try {
    coarse = run_mesh_stages(with_element_size(mesh_config, coarse_size), nullptr);
    c = run_heart_simulation(sim, coarse->mesh, log);
  } catch (const Error& e) {  // e.g. walls too thin for the coarse voxels: the start is only an aid
    if (log) *log << "coarse-mesh start: not available (" << e.what() << "); solving from rest" << std::endl;
    HeartRunResult out = run_heart_simulation(sim, fine, log);
    out.summary["coarse_start"] = {{"element_size_mm", coarse_size}, {"used", false}};
    return out;
  }
  const Eigen::Matrix3Xd guess =
      fine.mesh.rest + interpolate_displacement(coarse->mesh, c->state.x - coarse->mesh.mesh.rest, fine);
  if (log) *log << "coarse-mesh start: solving at " << fine.grid.spacing.maxCoeff() << " mm" << std::endl;
  HeartRunResult out = run_heart_simulation(sim, fine, log, &guess);
  out.summary["coarse_start"] = {{"element_size_mm", coarse_size},
                                 {"used", true},
                                 {"element_count", coarse->mesh.mesh.n_elements()},
                                 {"iterations", c->summary["iterations"]},
                                 {"seconds", c->summary["simulate_time_s"]}};
  return out;
}

HeartRunResult run_quasi_static(const HeartSimulation& sim, const MeshConfig& mesh_config,
                                const meshing::VoxelMesh& mesh, std::ostream* log) {
  return sim.coarse_start ? solve_with_coarse_start(sim, mesh_config, mesh, log) : run_heart_simulation(sim, mesh, log);
}

}  // namespace cardio::pipeline
