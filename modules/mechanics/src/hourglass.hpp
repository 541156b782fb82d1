#pragma once
// Rotation-invariant hourglass control shared by the element kernels (docs/calibration.md):
//   W = k/2 sum_i |x_i - xc - F (X_i - Xc)|^2,  F = A L^-1,
// where A holds the element's current axis vectors (linear in the nodes) and L their rest
// values. W vanishes for every affine motion, rigid rotations included, so it adds no stiffness
// to homogeneous deformations and leaves the calibration untouched.
#include <Eigen/Core>
#include <array>

namespace cardio::mechanics::detail {

/// Adds -k r_i to f, adds to g the forces on the axes' "+" points (k sum_i r_i c_i^T, with
/// c_i = L^-1 (X_i - Xc)) that the caller scatters with its axis weights, returns W.
inline double hourglass_forces(double k, const Eigen::Matrix3d& A, const Eigen::Matrix3d& L_inv,
                               const std::array<Eigen::Vector3d, 8>& x, const std::array<Eigen::Vector3d, 8>& X,
                               std::array<Eigen::Vector3d, 8>& f, Eigen::Matrix3d& g) {
  Eigen::Vector3d xc = Eigen::Vector3d::Zero(), Xc = Eigen::Vector3d::Zero();
  for (int i = 0; i < 8; ++i) xc += x[i] / 8.0, Xc += X[i] / 8.0;
  const Eigen::Matrix3d F = A * L_inv;
  Eigen::Matrix3d rc = Eigen::Matrix3d::Zero();
  double W = 0;
  for (int i = 0; i < 8; ++i) {
    const Eigen::Vector3d dX = X[i] - Xc;
    const Eigen::Vector3d r = x[i] - xc - F * dX;
    W += 0.5 * k * r.squaredNorm();
    f[i] -= k * r;
    rc += r * (L_inv * dX).transpose();
  }
  g += k * rc;
  return W;
}

}  // namespace cardio::mechanics::detail
