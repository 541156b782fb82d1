#pragma once
/// @file guccione_terms.hpp (private)
/// The exponent of the Guccione law and its derivative, shared by the one-point element
/// (hyperelastic.cpp) and the sampled-axes element (sampled_axes.cpp).
#include <Eigen/Core>

#include "cardio/mechanics/hyperelastic.hpp"

namespace cardio::mechanics::detail {

/// Q of the Guccione law (Land et al. 2015, eq. for problem 1) for a symmetric E (material frame):
/// Q = b_f E_ff^2 + b_t (E_ss^2 + E_nn^2 + 2 E_sn^2) + 2 b_fs (E_fs^2 + E_fn^2).
inline double guccione_q(const GuccioneLaw& m, const Eigen::Matrix3d& E) {
  return m.b_f * E(0, 0) * E(0, 0) + m.b_t * (E(1, 1) * E(1, 1) + E(2, 2) * E(2, 2) + 2 * E(1, 2) * E(1, 2)) +
         2 * m.b_fs * (E(0, 1) * E(0, 1) + E(0, 2) * E(0, 2));
}

/// (1/2) dQ/dE as a symmetric tensor: the moduli of the exponent applied to E.
inline Eigen::Matrix3d half_dq(const GuccioneLaw& m, const Eigen::Matrix3d& E) {
  Eigen::Matrix3d H;
  H(0, 0) = m.b_f * E(0, 0);
  H(1, 1) = m.b_t * E(1, 1);
  H(2, 2) = m.b_t * E(2, 2);
  H(1, 2) = H(2, 1) = m.b_t * E(1, 2);
  H(0, 1) = H(1, 0) = m.b_fs * E(0, 1);
  H(0, 2) = H(2, 0) = m.b_fs * E(0, 2);
  return H;
}

}  // namespace cardio::mechanics::detail
