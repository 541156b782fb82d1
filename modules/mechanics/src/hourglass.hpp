#pragma once
// Rotation-invariant hourglass control shared by the element kernels (docs/calibration.md).
// For a parallelepiped element (every voxel) the four hourglass vectors gamma_xy, gamma_yz,
// gamma_xz, gamma_xyz (products of the corners' local sign coordinates) are orthogonal to every
// affine nodal field, so
//   W = k/16 sum_a |q_a|^2,  q_a = sum_i gamma_a,i x_i
// vanishes for all affine motions, rigid rotations included, adds no stiffness to homogeneous
// deformations (the calibration is untouched), and |q_a| is invariant under rotations.
// k = E h / 6 gives a cube in its x-z hourglass mode u_x = kappa x z the bending energy of
// the continuum, E kappa^2 h^5 / 24. This isotropic control (hourglass_forces) serves the
// Bourguignon-Cani element and Baudet's cube. The Guccione element uses the physical control
// (hyperelastic.cpp, docs/calibration.md G.7), built on walsh_coefficients / hourglass_q and
// subtract_hourglass_gradient below.
#include <Eigen/Core>

namespace cardio::mechanics::detail {

using Mat38 = Eigen::Matrix<double, 3, 8>;

/// Hourglass vectors in VTK corner order (columns: xy, yz, xz, xyz).
inline const Eigen::Matrix<double, 8, 4>& hourglass_vectors() {
  static const Eigen::Matrix<double, 8, 4> g = [] {
    Eigen::Matrix<double, 8, 4> m;
    const int s[8][3] = {{-1, -1, -1}, {1, -1, -1}, {1, 1, -1}, {-1, 1, -1},
                         {-1, -1, 1},  {1, -1, 1},  {1, 1, 1},  {-1, 1, 1}};
    for (int i = 0; i < 8; ++i) {
      m(i, 0) = s[i][0] * s[i][1];
      m(i, 1) = s[i][1] * s[i][2];
      m(i, 2) = s[i][0] * s[i][2];
      m(i, 3) = s[i][0] * s[i][1] * s[i][2];
    }
    return m;
  }();
  return g;
}

/// Adds the hourglass forces of stiffness k [mN/mm] to f and returns the energy [mN mm].
/// Computed with a fast Walsh-Hadamard butterfly (72 additions instead of a 3x8x4 product):
/// nodes reordered by their sign bits, coefficient m = sum_i prod_{k in m} s_k(i) x_i.
inline double hourglass_forces(double k, const Mat38& x, Mat38& f) {
  constexpr int perm[8] = {0, 1, 3, 2, 4, 5, 7, 6};  // binary corner index -> VTK node
  Mat38 c;
  for (int b = 0; b < 8; ++b) c.col(b) = x.col(perm[b]);
  for (int bit = 1; bit < 8; bit <<= 1)
    for (int b = 0; b < 8; ++b)
      if (!(b & bit)) {
        const Eigen::Vector3d lo = c.col(b), hi = c.col(b | bit);
        c.col(b) = lo + hi;
        c.col(b | bit) = hi - lo;
      }
  // Keep the hourglass coefficients xy (3), xz (5), yz (6), xyz (7); transform back.
  const double energy =
      k / 16.0 * (c.col(3).squaredNorm() + c.col(5).squaredNorm() + c.col(6).squaredNorm() + c.col(7).squaredNorm());
  c.col(0).setZero(), c.col(1).setZero(), c.col(2).setZero(), c.col(4).setZero();
  for (int bit = 1; bit < 8; bit <<= 1)
    for (int b = 0; b < 8; ++b)
      if (!(b & bit)) {
        const Eigen::Vector3d lo = c.col(b), hi = c.col(b | bit);
        c.col(b) = lo - hi;
        c.col(b | bit) = lo + hi;
      }
  for (int b = 0; b < 8; ++b) f.col(perm[b]) -= (k / 8.0) * c.col(b);
  return energy;
}

/// Walsh coefficients of the 8 nodes (binary corner index b = sign bits x, y, z; VTK order in).
/// Column b is sum_i prod_{k in b} s_k(i) x_i: 0 the sum, 1/2/4 the lattice vectors (8 times the
/// half edges on a parallelepiped), 3 xy, 5 xz, 6 yz, 7 xyz (the hourglass vectors q).
inline void walsh_coefficients(const Mat38& x, double c[8][3]) {
  constexpr int perm[8] = {0, 1, 3, 2, 4, 5, 7, 6};  // binary corner index -> VTK node
  for (int b = 0; b < 8; ++b)
    for (int d = 0; d < 3; ++d) c[b][d] = x(d, perm[b]);
  for (int bit = 1; bit < 8; bit <<= 1)
    for (int b = 0; b < 8; ++b)
      if (!(b & bit))
        for (int d = 0; d < 3; ++d) {
          const double lo = c[b][d], hi = c[b | bit][d];
          c[b][d] = lo + hi;
          c[b | bit][d] = hi - lo;
        }
}

/// Hourglass vectors q[a] (a = xy, xz, yz, xyz in this order) of the nodes x.
inline void hourglass_q(const Mat38& x, double q[4][3]) {
  double c[8][3];
  walsh_coefficients(x, c);
  constexpr int idx[4] = {3, 5, 6, 7};
  for (int a = 0; a < 4; ++a)
    for (int d = 0; d < 3; ++d) q[a][d] = c[idx[a]][d];
}

/// Subtracts the gradient of an energy U(q) from the nodal forces: f_i -= sum_a Gamma_a,i dU/dq_a,
/// with g[a] = dU/dq_a (a = xy, xz, yz, xyz; inverse Walsh butterfly).
inline void subtract_hourglass_gradient(const double g[4][3], Mat38& f) {
  constexpr int perm[8] = {0, 1, 3, 2, 4, 5, 7, 6};
  double c[8][3] = {};
  constexpr int idx[4] = {3, 5, 6, 7};
  for (int a = 0; a < 4; ++a)
    for (int d = 0; d < 3; ++d) c[idx[a]][d] = g[a][d];
  for (int bit = 1; bit < 8; bit <<= 1)
    for (int b = 0; b < 8; ++b)
      if (!(b & bit))
        for (int d = 0; d < 3; ++d) {
          const double lo = c[b][d], hi = c[b | bit][d];
          c[b][d] = lo - hi;
          c[b | bit][d] = lo + hi;
        }
  for (int b = 0; b < 8; ++b)
    for (int d = 0; d < 3; ++d) f(d, perm[b]) -= c[b][d];
}

/// Largest |q_a| of the rest nodes relative to the element size: zero for a parallelepiped.
inline double hourglass_defect(const Mat38& X) {
  const Eigen::Matrix<double, 3, 4> q = X * hourglass_vectors();
  const double size = (X.col(6) - X.col(0)).norm();
  return q.cwiseAbs().maxCoeff() / size;
}

}  // namespace cardio::mechanics::detail
