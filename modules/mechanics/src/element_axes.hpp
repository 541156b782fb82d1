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

}  // namespace cardio::mechanics::detail
