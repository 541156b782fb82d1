#include "cardio/mechanics/hyperelastic.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <string>

#include "cardio/core/error.hpp"
#include "cardio/core/parallel.hpp"
#include "cardio/mechanics/material.hpp"
#include "element_axes.hpp"
#include "guccione_terms.hpp"
#include "hourglass.hpp"

namespace cardio::mechanics {
namespace {

using V3 = Eigen::Vector3d;

using detail::element_axes;
using detail::guccione_q;
using detail::half_dq;

void check_range(bool ok, const char* what, double value, const char* range) {
  CARDIO_CHECK(ok, "Guccione law: " << what << " = " << value << " must be " << range);
}

}  // namespace

void GuccioneLaw::validate() const {
  check_range(std::isfinite(C) && C >= 0, "C [kPa]", C, "finite and >= 0");
  check_range(std::isfinite(b_f) && b_f >= 0, "b_f", b_f, "finite and >= 0");
  check_range(std::isfinite(b_t) && b_t >= 0, "b_t", b_t, "finite and >= 0");
  check_range(std::isfinite(b_fs) && b_fs >= 0, "b_fs", b_fs, "finite and >= 0");
  check_range(std::isfinite(bulk) && bulk >= 0, "bulk [kPa]", bulk, "finite and >= 0");
  check_range(std::isfinite(hourglass_factor) && hourglass_factor >= 0, "hourglass_factor", hourglass_factor,
              "finite and >= 0");
  check_range(std::isfinite(damping_time) && damping_time >= 0, "damping_time [ms]", damping_time, "finite and >= 0");
  check_range(std::isfinite(active.beta) && active.beta >= 0 && active.beta < 1, "active beta", active.beta,
              "in [0, 1)");
  check_range(std::isfinite(active.gamma) && active.gamma > -1, "active gamma", active.gamma, "> -1");
  check_range(std::isfinite(cross_fibre.sheet) && cross_fibre.sheet >= 0 && cross_fibre.sheet <= 1,
              "cross-fibre active fraction (sheet)", cross_fibre.sheet, "in [0, 1]");
  check_range(std::isfinite(cross_fibre.normal) && cross_fibre.normal >= 0 && cross_fibre.normal <= 1,
              "cross-fibre active fraction (sheet-normal)", cross_fibre.normal, "in [0, 1]");
}

double guccione_energy_density(const GuccioneLaw& law, const Eigen::Matrix3d& E) {
  const Eigen::Matrix3d Es = 0.5 * (E + E.transpose());
  const double J = std::sqrt((Eigen::Matrix3d::Identity() + 2 * Es).determinant());
  return 0.5 * law.C * std::expm1(guccione_q(law, Es)) + 0.5 * law.bulk * (J - 1) * (J - 1);
}

Eigen::Matrix3d guccione_pk2(const GuccioneLaw& law, const Eigen::Matrix3d& E) {
  const Eigen::Matrix3d Es = 0.5 * (E + E.transpose());
  const Eigen::Matrix3d Cg = Eigen::Matrix3d::Identity() + 2 * Es;
  const double J = std::sqrt(Cg.determinant());
  return law.C * std::exp(guccione_q(law, Es)) * half_dq(law, Es) + law.bulk * (J - 1) * J * Cg.inverse();
}

Eigen::Matrix<double, 6, 6> guccione_stiffness_voigt(const GuccioneLaw& law) {
  Eigen::Matrix<double, 6, 6> S = Eigen::Matrix<double, 6, 6>::Zero();
  S.topLeftCorner<3, 3>().setConstant(law.bulk);
  S(0, 0) += law.C * law.b_f;
  S(1, 1) += law.C * law.b_t;
  S(2, 2) += law.C * law.b_t;
  S(3, 3) = 0.5 * law.C * law.b_t;   // sn
  S(4, 4) = 0.5 * law.C * law.b_fs;  // fn
  S(5, 5) = 0.5 * law.C * law.b_fs;  // fs
  return S;
}

double guccione_hourglass_modulus(const GuccioneLaw& law) {
  if (law.hourglass_factor == 0) return 0;
  const Eigen::Matrix3d N = guccione_stiffness_voigt(law).topLeftCorner<3, 3>();
  const Eigen::FullPivLU<Eigen::Matrix3d> lu(N);
  if (lu.rank() < 3) return 0;  // a direction without stiffness: no Young's modulus to match
  const Eigen::Matrix3d compliance = lu.inverse();
  return law.hourglass_factor / compliance.diagonal().maxCoeff();
}

namespace {

// Hourglass pair mode of the lattice axes m != n: 0 = xy, 1 = xz, 2 = yz (columns of q).
constexpr int kPair[3][3] = {{-1, 0, 1}, {0, -1, 2}, {1, 2, -1}};
// The two in-plane axes (i < j) of group k (field varying linearly in xi_k).
constexpr int kPlane[3][2] = {{1, 2}, {0, 2}, {0, 1}};
// Voigt index of the shear ij (order 11, 22, 33, 23, 13, 12).
constexpr int kVoigtShear[3][3] = {{-1, 5, 4}, {5, -1, 3}, {4, 3, -1}};

inline double ddot(const Eigen::Matrix3d& a, const Eigen::Matrix3d& b) { return a.cwiseProduct(b).sum(); }

// The element kernel. Either the isotropic control (iso_k = k [mN/mm] on every |q_a|^2, hg null)
// or the physical control (hg).
double element_impl(const BCElementData& d, const GuccioneLaw& law, double iso_k, const GuccioneHourglass* hg,
                    double Ta, double activation, const NodeMatrix& x, const NodeMatrix* v, NodeMatrix& f) {
  const double V0 = d.volume;
  const Eigen::Matrix3d A = element_axes(d.W, x);  // current axes l_f, l_s, l_n
  const V3 ir0(d.inv_rest_length[0], d.inv_rest_length[1], d.inv_rest_length[2]);
  // Active strain (law.active): the elastic law sees the fibre rest length r_f0 (1 - beta a) and
  // the cross-fibre ones r_0 / sqrt(1 - beta a) (F_a isochoric: a free element shortens by beta a).
  const double shortening = 1 - law.active.beta * activation;
  const double widening = std::sqrt(shortening);
  const V3 ir(ir0[0] / shortening, ir0[1] * widening, ir0[2] * widening);
  const double C = law.C * (1 + law.active.gamma * activation);
  const Eigen::Matrix3d M = A.transpose() * A;  // l_a . l_b
  double W = 0;

  // Passive Guccione term: E_ab = (l_a . l_b / (r_a r_b) - delta_ab) / 2, S = C e^Q (dQ/dE)/2.
  Eigen::Matrix3d S = Eigen::Matrix3d::Zero(), Ee = Eigen::Matrix3d::Zero(), H = Eigen::Matrix3d::Zero();
  double eQ = 1;
  if (C != 0) {
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 3; ++b) Ee(a, b) = 0.5 * (M(a, b) * ir[a] * ir[b] - (a == b ? 1.0 : 0.0));
    const double Q = guccione_q(law, Ee);
    W += 0.5 * V0 * C * std::expm1(Q);  // expm1: no cancellation at small strain
    eQ = std::exp(Q);
    H = half_dq(law, Ee);
    S = (C * eQ) * H;
  }
  const Eigen::Matrix3d S_elastic = S;  // passive stress w.r.t. the elastic strain
  // Viscous stress tau C_small : dE/dt with the small-strain moduli of the (active) law:
  // dissipative, and zero for rigid motions (dE/dt = 0).
  if (v != nullptr && law.damping_time > 0 && C != 0) {
    const Eigen::Matrix3d N = A.transpose() * element_axes(d.W, *v);  // l_a . dl_b/dt
    Eigen::Matrix3d Edot;
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 3; ++b) Edot(a, b) = 0.5 * (N(a, b) + N(b, a)) * ir[a] * ir[b];
    S += (law.damping_time * C) * half_dq(law, Edot);
  }

  // Volume penalty kappa V0/2 (J - 1)^2 with J = det A / (r_f0 r_s r_n) = det F (total, not elastic).
  const double inv_detL = ir0[0] * ir0[1] * ir0[2];
  const V3 c0 = A.col(1).cross(A.col(2)), c1 = A.col(2).cross(A.col(0)), c2 = A.col(0).cross(A.col(1));
  const double J = A.col(0).dot(c0) * inv_detL;

  // Physical hourglass control (GuccioneHourglass, docs/calibration.md G.7). Small fixed arrays
  // and explicit loops: index a = xy, xz, yz, xyz (columns of q), i = lattice axis.
  double q[4][3], gq[4][3] = {};                   // hourglass vectors and dU/dq
  Eigen::Matrix3d dUdA = Eigen::Matrix3d::Zero();  // dU/dA of the hourglass terms (except via E)
  const bool physical = hg != nullptr && (hg->geometric != 0 || hg->k_xyz.any() || hg->K[0].any());
  if (physical) {
    detail::hourglass_q(x, q);
    const Eigen::Matrix3d Fe = A * hg->B;  // columns F e_i: the current lattice directions
    double P[3][4];                        // p_ia = (F e_i) . q_a
    for (int i = 0; i < 3; ++i)
      for (int c = 0; c < 4; ++c) P[i][c] = Fe(0, i) * q[c][0] + Fe(1, i) * q[c][1] + Fe(2, i) * q[c][2];
    const V3& ia = hg->ia;
    // Material part W0 (small-strain moduli) and Gp = dW0/dP.
    double Gp[3][4] = {};
    double W0 = 0;
    for (int k = 0; k < 3; ++k) {
      const int i = kPlane[k][0], j = kPlane[k][1];
      const int ik = kPair[i][k], jk = kPair[j][k];
      const double e0 = P[i][ik] * ia[i], e1 = P[j][jk] * ia[j], e2 = P[i][jk] * ia[j] + P[j][ik] * ia[i];
      const Eigen::Matrix3d& K = hg->K[k];
      const double s0 = K(0, 0) * e0 + K(0, 1) * e1 + K(0, 2) * e2;
      const double s1 = K(1, 0) * e0 + K(1, 1) * e1 + K(1, 2) * e2;
      const double s2 = K(2, 0) * e0 + K(2, 1) * e1 + K(2, 2) * e2;
      W0 += 0.5 * (e0 * s0 + e1 * s1 + e2 * s2);
      Gp[i][ik] += s0 * ia[i];
      Gp[j][jk] += s1 * ia[j];
      Gp[i][jk] += s2 * ia[j];
      Gp[j][ik] += s2 * ia[i];
    }
    for (int m = 0; m < 3; ++m) {
      W0 += 0.5 * hg->k_xyz[m] * P[m][3] * P[m][3];
      Gp[m][3] += hg->k_xyz[m] * P[m][3];
    }
    // Stiffening s = (1 + gamma a) e^Q: U = s W0, dU/dE_e = 2 s W0 H.
    double s = 1;
    if (law.hourglass_stiffening && law.C != 0) {
      s = (C / law.C) * eQ;
      S += (2 * s * W0 / V0) * H;
    }
    W += s * W0;
    // dU/dq_a = s sum_i Gp_ia F e_i;  dU/dA = s sum_ia Gp_ia q_a (B e_i)^T = s Y B^T, Y_ri = sum_a q_a,r Gp_ia.
    Eigen::Matrix3d Y;
    for (int c = 0; c < 4; ++c)
      for (int r = 0; r < 3; ++r) gq[c][r] = s * (Fe(r, 0) * Gp[0][c] + Fe(r, 1) * Gp[1][c] + Fe(r, 2) * Gp[2][c]);
    for (int r = 0; r < 3; ++r)
      for (int i = 0; i < 3; ++i)
        Y(r, i) = s * (q[0][r] * Gp[i][0] + q[1][r] * Gp[i][1] + q[2][r] * Gp[i][2] + q[3][r] * Gp[i][3]);
    dUdA.noalias() += Y * hg->B.transpose();

    // Geometric part 1/2 int S : dF^T dF, S the current PK2 stress (total strain, material frame).
    if (hg->geometric != 0 && law.hourglass_stress != GuccioneLaw::HourglassStress::none) {
      // The volume-penalty (pressure) stress is left out: its geometric term would need the second
      // variation of J in the hourglass field with it, which the relaxed (non-locking) moduli drop.
      const bool active_strain = shortening != 1;
      const V3 rho = ir.cwiseQuotient(ir0);  // elastic -> total strain scaling (active strain)
      Eigen::Matrix3d Stot = S_elastic;
      if (active_strain)
        for (int r = 0; r < 3; ++r)
          for (int c = 0; c < 3; ++c) Stot(r, c) *= rho[r] * rho[c];
      Stot(0, 0) += Ta;
      const Eigen::Matrix3d SL = hg->T.transpose() * Stot * hg->T;  // lattice frame
      const double g = hg->geometric, V3rd = g * hg->volume / 3.0, V9th = g * hg->volume / 9.0;
      Eigen::Matrix3d Z = Eigen::Matrix3d::Zero();  // int dF^T dF (lattice), times g
      double Wg = 0;
      for (int k = 0; k < 3; ++k) {
        const int mm[2] = {kPlane[k][0], kPlane[k][1]};
        const int col[2] = {kPair[mm[0]][k], kPair[mm[1]][k]};
        double w[2][3];  // dF e_m / xi_k for m = i, j
        for (int t = 0; t < 2; ++t)
          for (int r = 0; r < 3; ++r) w[t][r] = q[col[t]][r] * ia[mm[t]];
        for (int t = 0; t < 2; ++t)
          for (int u = 0; u < 2; ++u) {
            const double z = V3rd * (w[t][0] * w[u][0] + w[t][1] * w[u][1] + w[t][2] * w[u][2]);
            Z(mm[t], mm[u]) += z;
            Wg += 0.5 * SL(mm[t], mm[u]) * z;
            const double c = V3rd * SL(mm[t], mm[u]) * ia[mm[t]];
            for (int r = 0; r < 3; ++r) gq[col[t]][r] += c * w[u][r];
          }
      }
      const double q3 = q[3][0] * q[3][0] + q[3][1] * q[3][1] + q[3][2] * q[3][2];
      double c3 = 0;
      for (int m = 0; m < 3; ++m) {
        const double c = V9th * ia[m] * ia[m];
        Z(m, m) += c * q3;
        c3 += c * SL(m, m);
      }
      Wg += 0.5 * c3 * q3;
      for (int r = 0; r < 3; ++r) gq[3][r] += c3 * q[3][r];
      W += Wg;
      // dWg/dE through the stress: 1/2 C_tangent : Mz, Mz = T Z T^T (material frame).
      if (C != 0) {  // passive, w.r.t. the elastic strain: C e^Q [H(N) + 2 (H : N) H], N = rho rho o Mz / 2
        Eigen::Matrix3d N = 0.5 * (hg->T * Z * hg->T.transpose());
        if (active_strain)
          for (int r = 0; r < 3; ++r)
            for (int c = 0; c < 3; ++c) N(r, c) *= rho[r] * rho[c];
        S += ((C * eQ) / V0) * (half_dq(law, N) + 2 * ddot(H, N) * H);
      }
    }
  }

  // dW/dA = V0 A D S D, D = diag(1/r): G = D S D, force on the axes g = -V0 A G.
  Eigen::Matrix3d G;
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b) G(a, b) = S(a, b) * ir[a] * ir[b];
  // Active tension Ta f0 (x) f0 in S (reference fibre length r_f0): potential V0 Ta E_ff,
  // force -V0 Ta l_f / r_f0^2 on the fibre axis, i.e. Ta lambda per rest cross-section V0 / r_f0.
  if (Ta != 0) {
    W += V0 * Ta * 0.5 * (M(0, 0) * ir0[0] * ir0[0] - 1);
    G(0, 0) += Ta * ir0[0] * ir0[0];
  }
  Eigen::Matrix3d g = -V0 * (A * G) - dUdA;

  if (law.bulk != 0) detail::add_volume_penalty(V0, law.bulk, J, inv_detL, c0, c1, c2, W, g);

  detail::scatter_axis_forces(d.W, g, f);

  if (physical) detail::subtract_hourglass_gradient(gq, f);
  // Isotropic hourglass control (hourglass.hpp): zero on affine motions, k = g h / 6.
  if (iso_k > 0) W += detail::hourglass_forces(iso_k, x, f);
  return W;
}

}  // namespace

double guccione_element_forces(const BCElementData& d, const GuccioneLaw& law, double hourglass_modulus, double Ta,
                               double activation, const NodeMatrix& x, const NodeMatrix* v, NodeMatrix& f) {
  return element_impl(d, law, hourglass_modulus > 0 ? hourglass_modulus * d.size / 6.0 : 0.0, nullptr, Ta, activation,
                      x, v, f);
}

double guccione_element_forces(const BCElementData& d, const GuccioneHourglass* hg, const GuccioneLaw& law, double Ta,
                               double activation, const NodeMatrix& x, const NodeMatrix* v, NodeMatrix& f) {
  return element_impl(d, law, 0.0, hg, Ta, activation, x, v, f);
}

GuccioneHourglass guccione_hourglass_data(const NodeMatrix& X, const Eigen::Matrix3d& frame, const BCElementData& e,
                                          const GuccioneLaw& law) {
  GuccioneHourglass h;
  h.volume = e.volume;
  if (law.hourglass_factor == 0) return h;
  // Lattice (edge) vectors: 8 times the half edges a_k of the parallelepiped.
  double c[8][3];
  detail::walsh_coefficients(X, c);
  Eigen::Matrix3d L;
  for (int d = 0; d < 3; ++d) L.col(0)[d] = c[1][d] / 8.0, L.col(1)[d] = c[2][d] / 8.0, L.col(2)[d] = c[4][d] / 8.0;
  V3 alpha;
  for (int k = 0; k < 3; ++k) alpha[k] = L.col(k).norm();
  CARDIO_CHECK(alpha.minCoeff() > 0, "hourglass control: degenerate element (zero edge)");
  // Orthonormal lattice frame: the edge directions for a box (voxel); for a sheared
  // parallelepiped the nearest orthogonal frame (polar factor), an approximation.
  const Eigen::Matrix3d Ln = L * alpha.cwiseInverse().asDiagonal();
  const Eigen::JacobiSVD<Eigen::Matrix3d> svd(Ln, Eigen::ComputeFullU | Eigen::ComputeFullV);
  const Eigen::Matrix3d RL = svd.matrixU() * svd.matrixV().transpose();
  h.T = frame.transpose() * RL;
  const V3 ir0(e.inv_rest_length[0], e.inv_rest_length[1], e.inv_rest_length[2]);
  h.B = ir0.asDiagonal() * h.T;
  h.ia = (8.0 * alpha).cwiseInverse();
  h.geometric = law.hourglass_factor;
  // Small-strain moduli in the lattice frame, relaxed: the moduli on the kept strains when the
  // stresses of all other strains vanish, i.e. the inverse of the compliance block, computed as
  // the Schur complement C_kk - C_ko C_oo^+ C_ok (defined also for a law with a zero modulus).
  const Eigen::Matrix<double, 6, 6> CL = rotate_voigt(guccione_stiffness_voigt(law), h.T.transpose());
  auto relaxed = [&](const int* keep, int nk) {
    int other[6], no = 0;
    for (int r = 0; r < 6; ++r)
      if (std::find(keep, keep + nk, r) == keep + nk) other[no++] = r;
    Eigen::MatrixXd Ckk(nk, nk), Cko(nk, no), Coo(no, no);
    for (int r = 0; r < nk; ++r) {
      for (int t = 0; t < nk; ++t) Ckk(r, t) = CL(keep[r], keep[t]);
      for (int t = 0; t < no; ++t) Cko(r, t) = CL(keep[r], other[t]);
    }
    for (int r = 0; r < no; ++r)
      for (int t = 0; t < no; ++t) Coo(r, t) = CL(other[r], other[t]);
    const Eigen::MatrixXd Kr = Ckk - Cko * Coo.completeOrthogonalDecomposition().pseudoInverse() * Cko.transpose();
    return Eigen::MatrixXd(0.5 * (Kr + Kr.transpose()));
  };
  for (int k = 0; k < 3; ++k) {
    const int i = kPlane[k][0], j = kPlane[k][1];
    const int keep[3] = {i, j, kVoigtShear[i][j]};
    h.K[k] = (law.hourglass_factor * e.volume / 3.0) * Eigen::Matrix3d(relaxed(keep, 3));
  }
  for (int m = 0; m < 3; ++m) {
    const double Em = relaxed(&m, 1)(0, 0);  // uniaxial Young's modulus along e_m
    h.k_xyz[m] = law.hourglass_factor * e.volume / 9.0 * h.ia[m] * h.ia[m] * Em;
  }
  return h;
}

}  // namespace cardio::mechanics
