#pragma once
/// @file element_axes.hpp (private)
/// The Bourguignon-Cani element axes, shared by the linear/exponential element
/// (bourguignon_cani.cpp) and the Guccione element (hyperelastic.cpp).
#include <Eigen/Core>

#include "cardio/mechanics/mesh.hpp"

namespace cardio::mechanics::detail {

/// Axis vectors l_a = sum_j W(a, j) x_j, as the columns of a 3x3 matrix (Bourguignon & Cani 2000,
/// sec. 4: the axes through the element centre from the intersections with its faces).
/// Written out: faster than Eigen's small product here.
inline Eigen::Matrix3d element_axes(const Eigen::Matrix<double, 3, 8>& W, const NodeMatrix& x) {
  Eigen::Matrix3d A = Eigen::Matrix3d::Zero();
  for (int j = 0; j < 8; ++j) {
    const Eigen::Vector3d xj = x.col(j);
    A.col(0) += W(0, j) * xj;
    A.col(1) += W(1, j) * xj;
    A.col(2) += W(2, j) * xj;
  }
  return A;
}

/// The volume penalty kappa V0/2 (J - 1)^2 on J = det A / (r_0 r_1 r_2) (Bourguignon & Cani's
/// volume term; the Guccione law's near-incompressibility): its energy is added to `energy` and its
/// force on the axes, -dE/dA = -kappa V0 (J - 1) cof(A) / (r_0 r_1 r_2), to g. c_a = A.col(b) x A.col(c)
/// are the cofactor columns, inv_detL = 1 / (r_0 r_1 r_2).
inline void add_volume_penalty(double V0, double kappa, double J, double inv_detL, const Eigen::Vector3d& c0,
                               const Eigen::Vector3d& c1, const Eigen::Vector3d& c2, double& energy,
                               Eigen::Matrix3d& g) {
  energy += 0.5 * V0 * kappa * (J - 1) * (J - 1);
  const double s = V0 * kappa * (J - 1) * inv_detL;
  g.col(0) -= s * c0;
  g.col(1) -= s * c1;
  g.col(2) -= s * c2;
}

/// The axis forces g (column a: the force on the "+" point of axis a) to the 8 nodes with the rest
/// weights: f_j += sum_a W(a, j) g_a (the "-" points get -g through W).
inline void scatter_axis_forces(const Eigen::Matrix<double, 3, 8>& W, const Eigen::Matrix3d& g, NodeMatrix& f) {
  for (int j = 0; j < 8; ++j) f.col(j) += W(0, j) * g.col(0) + W(1, j) * g.col(1) + W(2, j) * g.col(2);
}

}  // namespace cardio::mechanics::detail
