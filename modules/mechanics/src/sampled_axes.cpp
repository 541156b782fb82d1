#include "cardio/mechanics/sampled_axes.hpp"

#include <Eigen/Dense>
#include <cmath>

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

double sampled_element_forces(const SampledElementData& d, const GuccioneLaw& law, double Ta, double activation,
                              const NodeMatrix& x, const NodeMatrix* v, NodeMatrix& f) {
  // Active strain option (hyperelastic.hpp, ActiveFibre): the elastic law sees the fibre rest
  // length 1 - beta a and the cross-fibre ones 1 / sqrt(1 - beta a).
  const double shortening = 1 - law.active.beta * activation;
  const double widening = std::sqrt(shortening);
  const V3 ir(1 / shortening, widening, widening);
  const double C = law.C * (1 + law.active.gamma * activation);

  std::array<Eigen::Matrix3d, kSamples> A;  // axes of every sample
  double volume = 0;
  for (int g = 0; g < kSamples; ++g) {
    A[std::size_t(g)] = detail::element_axes(d.W[std::size_t(g)], x);
    volume += d.weight[std::size_t(g)] * A[std::size_t(g)].determinant();
  }
  // Mean dilatation: W_vol = V0 kappa/2 (Jbar - 1)^2, dW_vol/dA_g = kappa (Jbar - 1) w_g cof(A_g).
  const double Jbar = volume / d.volume;
  const double p = law.bulk * (Jbar - 1);
  double W = 0.5 * d.volume * law.bulk * (Jbar - 1) * (Jbar - 1);

  for (int g = 0; g < kSamples; ++g) {
    const Eigen::Matrix3d& Ag = A[std::size_t(g)];
    const double w = d.weight[std::size_t(g)];
    const Eigen::Matrix3d M = Ag.transpose() * Ag;  // l_a . l_b (unit rest lengths)
    Eigen::Matrix3d S = Eigen::Matrix3d::Zero();     // dW/dE_e per unit volume (elastic strain)
    if (C != 0) {
      Eigen::Matrix3d Ee;
      for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b) Ee(a, b) = 0.5 * (M(a, b) * ir[a] * ir[b] - (a == b ? 1.0 : 0.0));
      const double Q = detail::guccione_q(law, Ee);
      W += 0.5 * w * C * std::expm1(Q);
      S = (C * std::exp(Q)) * detail::half_dq(law, Ee);
      if (v != nullptr && law.damping_time > 0) {  // viscous stress tau C_small : dE/dt (zero if rigid)
        const Eigen::Matrix3d N = Ag.transpose() * detail::element_axes(d.W[std::size_t(g)], *v);
        Eigen::Matrix3d Edot;
        for (int a = 0; a < 3; ++a)
          for (int b = 0; b < 3; ++b) Edot(a, b) = 0.5 * (N(a, b) + N(b, a)) * ir[a] * ir[b];
        S += (law.damping_time * C) * detail::half_dq(law, Edot);
      }
    }
    // G = D S D w.r.t. the total axes; Ta adds S_ff with the total fibre strain (potential Ta E_ff).
    Eigen::Matrix3d G;
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 3; ++b) G(a, b) = S(a, b) * ir[a] * ir[b];
    if (Ta != 0) {
      W += w * Ta * 0.5 * (M(0, 0) - 1);
      G(0, 0) += Ta;
    }
    // dW/dA_g = w (A G + p cof A); force on node j: -sum_a dW/dl_a W(a, j).
    const Eigen::Matrix3d P = w * (Ag * G + p * cofactor(Ag));
    const auto& Wg = d.W[std::size_t(g)];
    for (int j = 0; j < 8; ++j) f.col(j) -= Wg(0, j) * P.col(0) + Wg(1, j) * P.col(1) + Wg(2, j) * P.col(2);
  }
  return W;
}

}  // namespace cardio::mechanics
