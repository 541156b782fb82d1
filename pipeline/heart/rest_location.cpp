#include "heart/rest_location.hpp"

#include <Eigen/LU>
#include <algorithm>
#include <cmath>

namespace cardio::pipeline {

namespace {

constexpr int kCorner[8][3] = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}, {0, 0, 1}, {1, 0, 1}, {1, 1, 1}, {0, 1, 1}};

Eigen::Vector3d trilinear(const Eigen::Matrix3Xd& field, const mechanics::Hex& hex, const Eigen::Vector3d& xi) {
  Eigen::Vector3d value = Eigen::Vector3d::Zero();
  for (int n = 0; n < 8; ++n) {
    double w = 1;
    for (int a = 0; a < 3; ++a) w *= kCorner[n][a] ? xi[a] : 1 - xi[a];
    value += w * field.col(hex[std::size_t(n)]);
  }
  return value;
}

}  // namespace

std::optional<RestLocation> containing_element(const meshing::VoxelMesh& m, const Eigen::Vector3d& p) {
  const imaging::Grid& g = m.grid;
  const Eigen::Vector3d ci = g.continuous_index(p);
  const double tol = 1e-9;
  for (int dk = -1; dk <= 1; ++dk)
    for (int dj = -1; dj <= 1; ++dj)
      for (int di = -1; di <= 1; ++di) {
        const std::int64_t i = std::llround(ci[0]) + di, j = std::llround(ci[1]) + dj, k = std::llround(ci[2]) + dk;
        if (!g.contains(i, j, k)) continue;
        const auto it = std::lower_bound(m.voxel.begin(), m.voxel.end(), g.linear(i, j, k));
        if (it == m.voxel.end() || *it != g.linear(i, j, k)) continue;
        const auto& hex = m.mesh.hexes[std::size_t(it - m.voxel.begin())];
        const Eigen::Vector3d X0 = m.mesh.rest.col(hex[0]);
        Eigen::Matrix3d J;  // VTK order: nodes 1, 3, 4 are the +xi, +eta, +zeta neighbours of node 0
        J << m.mesh.rest.col(hex[1]) - X0, m.mesh.rest.col(hex[3]) - X0, m.mesh.rest.col(hex[4]) - X0;
        const Eigen::Vector3d xi = J.partialPivLu().solve(p - X0);
        if ((xi.array() < -tol).any() || (xi.array() > 1 + tol).any()) continue;
        return RestLocation{std::int64_t(it - m.voxel.begin()), xi};
      }
  return std::nullopt;
}

Eigen::Vector3d interpolate_in_element(const meshing::VoxelMesh& m, std::int64_t element, const Eigen::Vector3d& xi,
                                       const Eigen::Matrix3Xd& field) {
  return trilinear(field, m.mesh.hexes[std::size_t(element)], xi);
}

}  // namespace cardio::pipeline
