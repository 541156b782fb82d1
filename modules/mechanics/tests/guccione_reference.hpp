#pragma once
// An independent continuum reference of the Guccione law with active tension (Land et al. 2015,
// problem 1 form, plus the volume penalty and the activation option), written out by index for
// the element tests: it shares no code with the kernels.
#include <Eigen/Dense>
#include <cmath>

#include "cardio/mechanics/hyperelastic.hpp"

namespace cardio::mechanics::testing {

using M3 = Eigen::Matrix3d;
using V3 = Eigen::Vector3d;

// ---- Independent continuum reference (Land et al. 2015, problem 1 form, plus the penalty) ----
// Everything in the material frame (f, s, n); Fm is the deformation gradient in that frame.

struct Reference {
  double C = 2, bf = 8, bt = 2, bfs = 4, kappa = 200;
  double Ta = 0;                      // active tension [kPa], S_ff += Ta
  double a = 0, beta = 0, gamma = 0;  // activation-modulated option
  double ns = 0, nn = 0;              // cross-fibre active fractions: S_ss += ns Ta, S_nn += nn Ta
};

inline Reference reference_of(const GuccioneLaw& m, double Ta = 0, double a = 0) {
  return {m.C,
          m.b_f,
          m.b_t,
          m.b_fs,
          m.bulk,
          Ta,
          a,
          m.active.beta,
          m.active.gamma,
          m.cross_fibre.sheet,
          m.cross_fibre.normal};
}

// Q with the index form of Land et al. 2015: b_t (E22^2 + E33^2 + E23^2 + E32^2),
// b_fs (E12^2 + E21^2 + E13^2 + E31^2).
inline double ref_Q(const Reference& r, const M3& E) {
  return r.bf * E(0, 0) * E(0, 0) +
         r.bt * (E(1, 1) * E(1, 1) + E(2, 2) * E(2, 2) + E(1, 2) * E(1, 2) + E(2, 1) * E(2, 1)) +
         r.bfs * (E(0, 1) * E(0, 1) + E(1, 0) * E(1, 0) + E(0, 2) * E(0, 2) + E(2, 0) * E(2, 0));
}

// Energy density [kPa]: (1 + gamma a) C/2 (exp(Q(E_e)) - 1) + kappa/2 (J - 1)^2
// + Ta (E_ff + ns E_ss + nn E_nn), with the
// elastic strain of Fe = Fm Fa^-1, Fa = diag(1 - beta a, (1 - beta a)^-1/2, (1 - beta a)^-1/2).
inline double ref_W(const Reference& r, const M3& Fm) {
  const double k = 1 - r.beta * r.a;
  const M3 Fe = Fm * V3(1 / k, std::sqrt(k), std::sqrt(k)).asDiagonal();
  const M3 Ee = 0.5 * (Fe.transpose() * Fe - M3::Identity());
  const M3 E = 0.5 * (Fm.transpose() * Fm - M3::Identity());
  const double J = Fm.determinant();
  return (1 + r.gamma * r.a) * r.C / 2 * (std::exp(ref_Q(r, Ee)) - 1) + r.kappa / 2 * (J - 1) * (J - 1) +
         r.Ta * (E(0, 0) + r.ns * E(1, 1) + r.nn * E(2, 2));
}

// Second Piola-Kirchhoff stress [kPa] (no activation option: beta = gamma = 0), componentwise.
inline M3 ref_S(const Reference& r, const M3& Fm) {
  const M3 Cr = Fm.transpose() * Fm;
  const M3 E = 0.5 * (Cr - M3::Identity());
  const double eQ = std::exp(ref_Q(r, E));
  M3 S;
  S(0, 0) = r.C * eQ * r.bf * E(0, 0) + r.Ta;
  S(1, 1) = r.C * eQ * r.bt * E(1, 1) + r.ns * r.Ta;
  S(2, 2) = r.C * eQ * r.bt * E(2, 2) + r.nn * r.Ta;
  S(1, 2) = S(2, 1) = r.C * eQ * r.bt * E(1, 2);
  S(0, 1) = S(1, 0) = r.C * eQ * r.bfs * E(0, 1);
  S(0, 2) = S(2, 0) = r.C * eQ * r.bfs * E(0, 2);
  const double J = Fm.determinant();
  return S + r.kappa * (J - 1) * J * Cr.inverse();
}

}  // namespace cardio::mechanics::testing
