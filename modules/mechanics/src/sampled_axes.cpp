#include "cardio/mechanics/sampled_axes.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>

#include "cardio/core/error.hpp"
#include "element_axes.hpp"
#include "guccione_terms.hpp"
#include "trilinear.hpp"

namespace cardio::mechanics {
namespace {

using V3 = Eigen::Vector3d;
using detail::shape_derivatives;

// Cofactor matrix of A (d det A / dA): columns a_1 x a_2 etc.
inline Eigen::Matrix3d cofactor(const Eigen::Matrix3d& A) {
  Eigen::Matrix3d c;
  c.col(0) = A.col(1).cross(A.col(2));
  c.col(1) = A.col(2).cross(A.col(0));
  c.col(2) = A.col(0).cross(A.col(1));
  return c;
}

}  // namespace

V3 sample_xi(int g) { return detail::gauss_xi(g); }

Eigen::Matrix<double, 3, kSamples> sample_points(const NodeMatrix& X) {
  Eigen::Matrix<double, 3, kSamples> p;
  for (int g = 0; g < kSamples; ++g) {
    const V3 xi = sample_xi(g);
    p.col(g) = X * detail::shape_values(xi).transpose();
  }
  return p;
}

SampledElementData sampled_element_data(const NodeMatrix& X, const std::array<Eigen::Matrix3d, kSamples>& frames) {
  SampledElementData d;
  for (int g = 0; g < kSamples; ++g) {
    const Eigen::Matrix<double, 8, 3> dN = shape_derivatives(sample_xi(g));
    const Eigen::Matrix3d J0 = X * dN;  // dX/dxi
    const double det = J0.determinant();
    const double scale = std::pow((X.col(6) - X.col(0)).squaredNorm(), 1.5);
    CARDIO_CHECK(std::isfinite(det) && det > 1e-12 * scale,
                 "element inverted or degenerate at rest (det dX/dxi = " << det << " mm^3 at sample " << g << ")");
    const Eigen::Matrix3d& R = frames[std::size_t(g)];
    CARDIO_CHECK((R.transpose() * R - Eigen::Matrix3d::Identity()).norm() < 1e-6 && R.determinant() > 0,
                 "the frame of sample " << g << " is not orthonormal and right-handed");
    // W_g = R^T (dN/dX)^T with dN/dX = dN/dxi J0^-1.
    d.W[std::size_t(g)] = R.transpose() * (dN * J0.inverse()).transpose();
    d.weight[std::size_t(g)] = det;
    d.volume += det;
  }
  return d;
}

ElementDilatation sampled_element_dilatation(const SampledElementData& d, const NodeMatrix& x) {
  ElementDilatation out;
  double v = 0;
  out.min_sample_J = INFINITY;
  for (int g = 0; g < kSamples; ++g) {
    const double J = detail::element_axes(d.W[std::size_t(g)], x).determinant();
    out.min_sample_J = std::min(out.min_sample_J, J);
    v += d.weight[std::size_t(g)] * J;
  }
  out.mean_J = v / d.volume;
  return out;
}

namespace {

// The law of one element in its active state: the active-strain option (hyperelastic.hpp,
// ActiveFibre) gives the elastic law the fibre rest length 1 - beta a and the cross-fibre ones
// 1 / sqrt(1 - beta a): E_e = (D M D - I) / 2 with D = diag(ir).
struct ActiveLaw {
  const GuccioneLaw& law;
  V3 ir;
  double C;   // stiffness with the gamma option [kPa]
  double Ta;  // active fibre tension [kPa]
};

ActiveLaw active_law(const GuccioneLaw& law, double Ta, double activation) {
  const double shortening = 1 - law.active.beta * activation;
  const double widening = std::sqrt(shortening);
  return {law, V3(1 / shortening, widening, widening), law.C * (1 + law.active.gamma * activation), Ta};
}

// Energy density [kPa] at the (barred) metric M = A^T A; G = 2 dW/dM (w.r.t. the total axes):
// G = D S D with S = dW/dE_e, plus Ta on G_ff (potential Ta E_ff, Land et al. 2015 eq. 3).
double energy_density(const ActiveLaw& a, const Eigen::Matrix3d& M, Eigen::Matrix3d& G) {
  double W = 0;
  G.setZero();
  if (a.C != 0) {
    Eigen::Matrix3d Ee;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) Ee(i, j) = 0.5 * (M(i, j) * a.ir[i] * a.ir[j] - (i == j ? 1.0 : 0.0));
    const double Q = detail::guccione_q(a.law, Ee);
    W = 0.5 * a.C * std::expm1(Q);
    const Eigen::Matrix3d S = (a.C * std::exp(Q)) * detail::half_dq(a.law, Ee);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) G(i, j) = S(i, j) * a.ir[i] * a.ir[j];
  }
  if (a.Ta != 0) {
    W += a.Ta * 0.5 * (M(0, 0) - 1);
    G(0, 0) += a.Ta;
  }
  return W;
}

// Viscous G = D (tau C_small : dE/dt) D for the metric rate N + N^T, N = A^T dA/dt (zero if rigid).
Eigen::Matrix3d viscous_g(const ActiveLaw& a, const Eigen::Matrix3d& N) {
  Eigen::Matrix3d Edot, G;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) Edot(i, j) = 0.5 * (N(i, j) + N(j, i)) * a.ir[i] * a.ir[j];
  const Eigen::Matrix3d S = (a.law.damping_time * a.C) * detail::half_dq(a.law, Edot);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) G(i, j) = S(i, j) * a.ir[i] * a.ir[j];
  return G;
}

}  // namespace

double sampled_element_forces(const SampledElementData& d, const GuccioneLaw& law, double Ta, double activation,
                              const NodeMatrix& x, const NodeMatrix* v, NodeMatrix& f) {
  const ActiveLaw active = active_law(law, Ta, activation);
  const bool viscous = v != nullptr && law.damping_time > 0 && active.C != 0;
  std::array<Eigen::Matrix3d, kSamples> A;  // axes of every sample
  std::array<double, kSamples> J{};          // det F of every sample
  double volume = 0;
  for (std::size_t g = 0; g < kSamples; ++g) {
    A[g] = detail::element_axes(d.W[g], x);
    J[g] = A[g].determinant();
    volume += d.weight[g] * J[g];
  }
  // An inverted sample has no F-bar energy: NaN forces make the solvers restart at a smaller step
  // (quasi-static) or stop with the inverted-element error (beat).
  if (*std::min_element(J.begin(), J.end()) <= 0) {
    f.setConstant(std::numeric_limits<double>::quiet_NaN());
    return std::numeric_limits<double>::quiet_NaN();
  }
  // Mean dilatation: W_vol = V0 kappa/2 (Jbar - 1)^2, dW_vol/dA_g = kappa (Jbar - 1) w_g cof(A_g).
  const double Jbar = volume / d.volume;
  const double p = law.bulk * (Jbar - 1);
  double W = 0.5 * d.volume * law.bulk * (Jbar - 1) * (Jbar - 1);

  // F-bar (de Souza Neto et al. 1996, eq. 7): the law sees Fbar_g = (Jbar / J_g)^(1/3) F_g, i.e.
  // Mbar_g = s_g A_g^T A_g with s_g = (Jbar / J_g)^(2/3). ds_g = 2/3 s_g (dln Jbar - dln J_g) adds
  // beta_g (w_h cof A_h / v - delta_gh cof A_g / J_g) to dW/dA_h, beta_g = s_g/3 G_g : M_g.
  std::array<Eigen::Matrix3d, kSamples> P;  // dW/dA_g without the dln Jbar term
  double beta_sum = 0;                      // sum_g w_g beta_g
  for (std::size_t g = 0; g < kSamples; ++g) {
    const double w = d.weight[g];
    const double s = std::pow(Jbar / J[g], 2.0 / 3.0);
    const Eigen::Matrix3d M = A[g].transpose() * A[g];  // l_a . l_b (unit rest lengths)
    Eigen::Matrix3d G;
    W += w * energy_density(active, s * M, G);
    const double beta = s / 3 * G.cwiseProduct(M).sum();
    beta_sum += w * beta;
    P[g] = w * (s * A[g] * G + (p - beta / J[g]) * cofactor(A[g]));
    if (viscous) P[g] += w * A[g] * viscous_g(active, A[g].transpose() * detail::element_axes(d.W[g], *v));
  }
  for (std::size_t g = 0; g < kSamples; ++g) {
    const Eigen::Matrix3d Pg = P[g] + (d.weight[g] * beta_sum / volume) * cofactor(A[g]);
    // Force on node j: -sum_a dW/dl_a W(a, j).
    for (int j = 0; j < 8; ++j) f.col(j) -= d.W[g](0, j) * Pg.col(0) + d.W[g](1, j) * Pg.col(1) + d.W[g](2, j) * Pg.col(2);
  }
  return W;
}

}  // namespace cardio::mechanics
