#pragma once
/// @file trilinear.hpp
/// Trilinear shape functions of the VTK hexahedron (mesh.hpp node order, xi in [-1, 1]^3) and its
/// 2x2x2 Gauss points, shared by the sampled-axes element, the mesh checks and the points located
/// in a rest mesh (probes, the coarse-mesh start).
#include <Eigen/Core>
#include <cmath>

namespace cardio::mechanics {

/// Node i of the VTK hexahedron sits at xi = kHexCorner[i] in [-1, 1]^3.
inline constexpr int kHexCorner[8][3] = {{-1, -1, -1}, {1, -1, -1}, {1, 1, -1}, {-1, 1, -1},
                                         {-1, -1, 1},  {1, -1, 1},  {1, 1, 1},  {-1, 1, 1}};

/// Gauss point g of the 2x2x2 rule (+-1/sqrt(3), weight 1), in node order: nearest node g.
inline Eigen::Vector3d hex_gauss_xi(int g) {
  const double a = 1.0 / std::sqrt(3.0);
  return {kHexCorner[g][0] * a, kHexCorner[g][1] * a, kHexCorner[g][2] * a};
}

/// dN_i/dxi_a of N_i = prod_a (1 + xi_a xi_ia) / 8 (rows i).
inline Eigen::Matrix<double, 8, 3> hex_shape_derivatives(const Eigen::Vector3d& xi) {
  Eigen::Matrix<double, 8, 3> d;
  for (int i = 0; i < 8; ++i) {
    const double s[3] = {1 + kHexCorner[i][0] * xi[0], 1 + kHexCorner[i][1] * xi[1], 1 + kHexCorner[i][2] * xi[2]};
    d(i, 0) = kHexCorner[i][0] * s[1] * s[2] / 8;
    d(i, 1) = kHexCorner[i][1] * s[0] * s[2] / 8;
    d(i, 2) = kHexCorner[i][2] * s[0] * s[1] / 8;
  }
  return d;
}

/// N_i(xi) as a row vector.
inline Eigen::Matrix<double, 1, 8> hex_shape_values(const Eigen::Vector3d& xi) {
  Eigen::Matrix<double, 1, 8> n;
  for (int i = 0; i < 8; ++i)
    n[i] = (1 + kHexCorner[i][0] * xi[0]) * (1 + kHexCorner[i][1] * xi[1]) * (1 + kHexCorner[i][2] * xi[2]) / 8;
  return n;
}

}  // namespace cardio::mechanics
