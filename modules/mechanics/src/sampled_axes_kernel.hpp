#pragma once
/// @file sampled_axes_kernel.hpp (private)
/// The sampled-axes element's energy and nodal forces, templated on the scalar: `double` for the
/// production kernel, Eigen's forward-mode AutoDiffScalar for the exact tangent stiffness
/// (sampled_axes.cpp). The formulas are documented in sampled_axes.hpp and docs/calibration.md.
#include <Eigen/Core>
#include <array>
#include <cmath>
#include <limits>
#include <type_traits>

#include "cardio/mechanics/sampled_axes.hpp"

namespace cardio::mechanics::detail {

template <class T>
using Mat3 = Eigen::Matrix<T, 3, 3>;
template <class T>
using Nodes = Eigen::Matrix<T, 3, 8>;

template <class T>
Mat3<T> axes_of(const Eigen::Matrix<double, 3, 8>& W, const Nodes<T>& x) {
  Mat3<T> A = Mat3<T>::Zero();
  for (int j = 0; j < 8; ++j)
    for (int a = 0; a < 3; ++a) A.col(a) += W(a, j) * x.col(j);
  return A;
}

// Cofactor matrix of A (d det A / dA): columns a_1 x a_2 etc.
template <class T>
Mat3<T> cofactor_of(const Mat3<T>& A) {
  Mat3<T> c;
  c.col(0) = A.col(1).cross(A.col(2));
  c.col(1) = A.col(2).cross(A.col(0));
  c.col(2) = A.col(0).cross(A.col(1));
  return c;
}

template <class T>
T exp_minus_one(const T& q) {
  using std::exp;
  if constexpr (std::is_same_v<T, double>) return std::expm1(q);
  else return exp(q) - 1.0;
}


// The law of one element in its active state: the active-strain option (hyperelastic.hpp,
// ActiveFibre) gives the elastic law the fibre rest length 1 - beta a and the cross-fibre ones
// 1 / sqrt(1 - beta a): E_e = (D M D - I) / 2 with D = diag(ir).
struct ActiveLaw {
  const GuccioneLaw& law;
  Eigen::Vector3d ir;
  double C;   // stiffness with the gamma option [kPa]
  double Ta;  // active fibre tension [kPa]
};

inline ActiveLaw active_law(const GuccioneLaw& law, double Ta, double activation) {
  const double shortening = 1 - law.active.beta * activation;
  const double widening = std::sqrt(shortening);
  return {law, Eigen::Vector3d(1 / shortening, widening, widening), law.C * (1 + law.active.gamma * activation), Ta};
}

// Energy density [kPa] at the (barred) metric M = A^T A; G = 2 dW/dM (w.r.t. the total axes):
// G = D S D with S = dW/dE_e (Guccione et al. 1991; Q and S as in hyperelastic.hpp), plus Ta on
// G_ff (potential Ta E_ff, Land et al. 2015 eq. 3).
template <class T>
T energy_density(const ActiveLaw& a, const Mat3<T>& M, Mat3<T>& G) {
  using std::exp;
  const GuccioneLaw& m = a.law;
  T W = T(0.0);
  G.setZero();
  if (a.C != 0) {
    Mat3<T> E;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) E(i, j) = 0.5 * (M(i, j) * a.ir[i] * a.ir[j] - (i == j ? 1.0 : 0.0));
    const T Q = m.b_f * E(0, 0) * E(0, 0) + m.b_t * (E(1, 1) * E(1, 1) + E(2, 2) * E(2, 2) + 2 * E(1, 2) * E(1, 2)) +
                2 * m.b_fs * (E(0, 1) * E(0, 1) + E(0, 2) * E(0, 2));
    const T e_minus_one = exp_minus_one(Q);
    W = 0.5 * a.C * e_minus_one;
    const T c = a.C * (e_minus_one + 1.0);
    // S = c (1/2) dQ/dE; G = D S D.
    const double b[3][3] = {{m.b_f, m.b_fs, m.b_fs}, {m.b_fs, m.b_t, m.b_t}, {m.b_fs, m.b_t, m.b_t}};
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) G(i, j) = c * (b[i][j] * E(i, j)) * a.ir[i] * a.ir[j];
  }
  if (a.Ta != 0) {
    W += a.Ta * 0.5 * (M(0, 0) - 1.0);
    G(0, 0) += a.Ta;
  }
  return W;
}

/// Elastic energy of the element at x and, added into f, its nodal forces (sampled_axes.hpp);
/// `viscous(g, A_g)` returns the viscous dW/dA_g of sample g (zero matrix if none). NaN energy and
/// forces when a sample is inverted.
template <class T, class Viscous>
T sampled_energy_and_forces(const SampledElementData& d, const ActiveLaw& active, double bulk, const Nodes<T>& x,
                            Nodes<T>& f, Viscous&& viscous) {
  using std::pow;
  std::array<Mat3<T>, kSamples> A;  // axes of every sample
  std::array<T, kSamples> J;         // det F of every sample
  T volume = T(0.0);
  bool inverted = false;
  for (std::size_t g = 0; g < kSamples; ++g) {
    A[g] = axes_of(d.W[g], x);
    J[g] = A[g].determinant();
    volume += d.weight[g] * J[g];
    inverted |= !(J[g] > 0.0);
  }
  // An inverted sample has no F-bar energy: NaN forces make the solvers restart at a smaller step
  // (quasi-static) or stop with the inverted-element error (beat).
  if (inverted) {
    f.setConstant(T(std::numeric_limits<double>::quiet_NaN()));
    return T(std::numeric_limits<double>::quiet_NaN());
  }
  // Mean dilatation: W_vol = V0 kappa/2 (Jbar - 1)^2, dW_vol/dA_g = kappa (Jbar - 1) w_g cof(A_g).
  const T Jbar = volume / d.volume;
  const T p = bulk * (Jbar - 1.0);
  T W = 0.5 * d.volume * bulk * (Jbar - 1.0) * (Jbar - 1.0);

  // F-bar (de Souza Neto et al. 1996, eq. 7): the law sees Fbar_g = (Jbar / J_g)^(1/3) F_g, i.e.
  // Mbar_g = s_g A_g^T A_g with s_g = (Jbar / J_g)^(2/3). ds_g = 2/3 s_g (dln Jbar - dln J_g) adds
  // beta_g (w_h cof A_h / v - delta_gh cof A_g / J_g) to dW/dA_h, beta_g = s_g/3 G_g : M_g.
  std::array<Mat3<T>, kSamples> P;    // dW/dA_g without the dln Jbar term
  std::array<Mat3<T>, kSamples> cof;  // cofactors, dJ_g/dA_g
  T beta_sum = T(0.0);              // sum_g w_g beta_g
  for (std::size_t g = 0; g < kSamples; ++g) {
    const double w = d.weight[g];
    const T s = pow(Jbar / J[g], 2.0 / 3.0);
    const Mat3<T> M = A[g].transpose() * A[g];  // l_a . l_b (unit rest lengths)
    const Mat3<T> sM = s * M;
    Mat3<T> G;
    W += w * energy_density(active, sM, G);
    const T beta = s / 3.0 * G.cwiseProduct(M).sum();
    beta_sum += w * beta;
    cof[g] = cofactor_of(A[g]);
    P[g] = w * (s * A[g] * G + (p - beta / J[g]) * cof[g]);
    viscous(g, A[g], P[g]);
  }
  for (std::size_t g = 0; g < kSamples; ++g) {
    const Mat3<T> Pg = P[g] + ((d.weight[g] * beta_sum) / volume) * cof[g];
    // Force on node j: -sum_a dW/dl_a W(a, j).
    for (int j = 0; j < 8; ++j)
      f.col(j) -= d.W[g](0, j) * Pg.col(0) + d.W[g](1, j) * Pg.col(1) + d.W[g](2, j) * Pg.col(2);
  }
  return W;
}

}  // namespace cardio::mechanics::detail
