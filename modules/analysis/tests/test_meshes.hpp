#pragma once
// Small hexahedral meshes for the analysis tests.
#include <Eigen/Core>
#include <cmath>
#include <cstdint>
#include <random>

#include "cardio/mechanics/mesh.hpp"

namespace cardio::analysis::testing {

/// The ni x nj x nk hexahedra of a structured lattice whose node (i, j, k) is id(i, j, k), VTK
/// order; fibre x, sheet y, material 0.
template <class NodeId>
void add_lattice_hexes(mechanics::HexMesh& m, int ni, int nj, int nk, NodeId id) {
  for (int k = 0; k < nk; ++k)
    for (int j = 0; j < nj; ++j)
      for (int i = 0; i < ni; ++i)
        m.hexes.push_back({id(i, j, k), id(i + 1, j, k), id(i + 1, j + 1, k), id(i, j + 1, k), id(i, j, k + 1),
                           id(i + 1, j, k + 1), id(i + 1, j + 1, k + 1), id(i, j + 1, k + 1)});
  m.fibre = Eigen::Vector3d::UnitX().replicate(1, Eigen::Index(m.hexes.size()));
  m.sheet = Eigen::Vector3d::UnitY().replicate(1, Eigen::Index(m.hexes.size()));
  m.material.assign(m.hexes.size(), 0);
}

/// n x n x n cubes of edge h from `origin`, shared nodes, VTK order; fibre x, sheet y.
/// With `jitter` > 0 every node moves by a seeded uniform offset in [-jitter, jitter]^3 (general,
/// non-planar-faced hexahedra; keep jitter < h/4 for valid elements).
inline mechanics::HexMesh block(int n, double h, const Eigen::Vector3d& origin = Eigen::Vector3d::Zero(),
                                double jitter = 0.0, unsigned seed = 7) {
  mechanics::HexMesh m;
  const int np = n + 1;
  m.rest.resize(3, np * np * np);
  auto id = [np](int i, int j, int k) { return std::int32_t(i + np * (j + np * k)); };
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-jitter, jitter);
  for (int k = 0; k < np; ++k)
    for (int j = 0; j < np; ++j)
      for (int i = 0; i < np; ++i) {
        m.rest.col(id(i, j, k)) = origin + h * Eigen::Vector3d(i, j, k);
        if (jitter > 0) m.rest.col(id(i, j, k)) += Eigen::Vector3d(u(rng), u(rng), u(rng));
      }
  add_lattice_hexes(m, n, n, n, id);
  return m;
}

/// A cylindrical tube about the z axis: radii [r_in, r_out], height [0, height], n_r x n_theta x n_z
/// hexahedra (the polygonal cross-section has n_theta sides; nodes on the circles), VTK order with
/// positive volume (local axes radial, circumferential, axial); fibre x, sheet y.
inline mechanics::HexMesh tube(double r_in, double r_out, double height, int n_r, int n_theta, int n_z) {
  mechanics::HexMesh m;
  const int nr = n_r + 1, nz = n_z + 1;
  m.rest.resize(3, nr * n_theta * nz);
  auto id = [&](int i, int j, int k) { return std::int32_t(i + nr * ((j % n_theta) + n_theta * k)); };
  for (int k = 0; k < nz; ++k)
    for (int j = 0; j < n_theta; ++j)
      for (int i = 0; i < nr; ++i) {
        const double r = r_in + (r_out - r_in) * i / n_r, a = 2 * 3.14159265358979323846 * j / n_theta;
        m.rest.col(id(i, j, k)) = Eigen::Vector3d(r * std::cos(a), r * std::sin(a), height * k / n_z);
      }
  add_lattice_hexes(m, n_r, n_theta, n_z, id);
  return m;
}

/// x = A X + b applied to every column.
inline Eigen::Matrix3Xd affine(const Eigen::Matrix3Xd& X, const Eigen::Matrix3d& A, const Eigen::Vector3d& b) {
  return (A * X).colwise() + b;
}

}  // namespace cardio::analysis::testing
