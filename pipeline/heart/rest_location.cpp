#include "heart/rest_location.hpp"

#include <Eigen/LU>
#include <algorithm>
#include <cmath>
#include <limits>

#include "cardio/mechanics/trilinear.hpp"

namespace cardio::pipeline {

namespace {

/// This file's local coordinates are in [0, 1]^3; trilinear.hpp's are in [-1, 1]^3.
Eigen::Vector3d unit_to_signed(const Eigen::Vector3d& xi) { return (2 * xi).array() - 1.0; }

}  // namespace

std::vector<std::int64_t> elements_near(const meshing::VoxelMesh& m, const Eigen::Vector3d& p, int reach) {
  const imaging::Grid& g = m.grid;
  const Eigen::Vector3d ci = g.continuous_index(p);
  std::vector<std::int64_t> out;
  for (int dk = -reach; dk <= reach; ++dk)
    for (int dj = -reach; dj <= reach; ++dj)
      for (int di = -reach; di <= reach; ++di) {
        const std::int64_t i = std::llround(ci[0]) + di, j = std::llround(ci[1]) + dj, k = std::llround(ci[2]) + dk;
        if (!g.contains(i, j, k)) continue;
        const auto it = std::lower_bound(m.voxel.begin(), m.voxel.end(), g.linear(i, j, k));
        if (it != m.voxel.end() && *it == g.linear(i, j, k)) out.push_back(it - m.voxel.begin());
      }
  return out;
}

std::optional<RestLocation> containing_element(const meshing::VoxelMesh& m, const Eigen::Vector3d& p) {
  const double tol = 1e-9;
  for (std::int64_t e : elements_near(m, p, 1)) {
    const auto& hex = m.mesh.hexes[std::size_t(e)];
    const Eigen::Vector3d X0 = m.mesh.rest.col(hex[0]);
    Eigen::Matrix3d J;  // VTK order: nodes 1, 3, 4 are the +xi, +eta, +zeta neighbours of node 0
    J << m.mesh.rest.col(hex[1]) - X0, m.mesh.rest.col(hex[3]) - X0, m.mesh.rest.col(hex[4]) - X0;
    const Eigen::Vector3d xi = J.partialPivLu().solve(p - X0);
    if ((xi.array() < -tol).any() || (xi.array() > 1 + tol).any()) continue;
    return RestLocation{e, xi};
  }
  return std::nullopt;
}

/// Local coordinates of p in the trilinear element `hex` (rest positions X): Newton's method on
/// x(xi) = p from the element's centre (exact in one step for a box; fitted elements need a few).
Eigen::Vector3d local_coordinates(const Eigen::Matrix3Xd& X, const mechanics::Hex& hex, const Eigen::Vector3d& p) {
  const mechanics::NodeMatrix Xe = mechanics::gather(X, hex);
  Eigen::Vector3d xi = Eigen::Vector3d::Constant(0.5);
  for (int it = 0; it < 8; ++it) {
    const Eigen::Vector3d s = unit_to_signed(xi);
    const Eigen::Vector3d x = Xe * mechanics::hex_shape_values(s).transpose();
    const Eigen::Matrix3d J = 2 * Xe * mechanics::hex_shape_derivatives(s);  // dx/dxi, xi in [0, 1]
    const Eigen::Vector3d step = J.partialPivLu().solve(p - x);
    xi += step;
    if (!(step.norm() > 1e-12)) break;
  }
  return xi;
}

RestLocation nearest_element(const meshing::VoxelMesh& m, const Eigen::Vector3d& p, int reach) {
  RestLocation best;
  double best_distance = std::numeric_limits<double>::infinity();
  for (std::int64_t e : elements_near(m, p, reach)) {
    const Eigen::Vector3d xi = local_coordinates(m.mesh.rest, m.mesh.hexes[std::size_t(e)], p);
    const Eigen::Vector3d clamped = xi.cwiseMax(0.0).cwiseMin(1.0);
    const double distance =
        (xi - clamped).isZero(1e-9) ? 0.0 : (interpolate_in_element(m, e, clamped, m.mesh.rest) - p).norm();
    if (distance < best_distance) {  // ties: the first in scan order, deterministic
      best_distance = distance;
      best = {e, clamped};
    }
  }
  return best;
}

Eigen::Vector3d interpolate_in_element(const meshing::VoxelMesh& m, std::int64_t element, const Eigen::Vector3d& xi,
                                       const Eigen::Matrix3Xd& field) {
  return mechanics::gather(field, m.mesh.hexes[std::size_t(element)]) *
         mechanics::hex_shape_values(unit_to_signed(xi)).transpose();
}

}  // namespace cardio::pipeline
