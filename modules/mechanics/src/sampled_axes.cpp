#include "cardio/mechanics/sampled_axes.hpp"

#include <Eigen/Dense>
#include <unsupported/Eigen/AutoDiff>
#include <algorithm>
#include <cmath>
#include <limits>

#include "cardio/core/error.hpp"
#include "element_axes.hpp"
#include "guccione_terms.hpp"
#include "sampled_axes_kernel.hpp"
#include "trilinear.hpp"

namespace cardio::mechanics {
namespace {

using V3 = Eigen::Vector3d;
using detail::shape_derivatives;

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

// Viscous G = D (tau C_small : dE/dt) D for the metric rate N + N^T, N = A^T dA/dt (zero if rigid).
Eigen::Matrix3d viscous_g(const detail::ActiveLaw& a, const Eigen::Matrix3d& N) {
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
  const detail::ActiveLaw active = detail::active_law(law, Ta, activation);
  const bool viscous = v != nullptr && law.damping_time > 0 && active.C != 0;
  return detail::sampled_energy_and_forces<double>(
      d, active, law.bulk, x, f, [&](std::size_t g, const Eigen::Matrix3d& A, Eigen::Matrix3d& P) {
        if (viscous) P += d.weight[g] * A * viscous_g(active, A.transpose() * detail::element_axes(d.W[g], *v));
      });
}

void sampled_element_stiffness(const SampledElementData& d, const GuccioneLaw& law, double Ta, double activation,
                               const NodeMatrix& x, ElementStiffness& K) {
  // Forward-mode automatic differentiation (Eigen AutoDiff) of the force kernel: one derivative
  // per nodal coordinate, K = -df/dx exact to rounding.
  using AD = Eigen::AutoDiffScalar<Eigen::Matrix<double, 24, 1>>;
  detail::Nodes<AD> xa, fa;
  for (int j = 0; j < 8; ++j)
    for (int i = 0; i < 3; ++i) {
      xa(i, j) = AD(x(i, j), 24, 3 * j + i);
      fa(i, j) = AD(0.0, Eigen::Matrix<double, 24, 1>::Zero());
    }
  const detail::ActiveLaw active = detail::active_law(law, Ta, activation);
  detail::sampled_energy_and_forces<AD>(d, active, law.bulk, xa, fa, [](std::size_t, const detail::Mat3<AD>&, detail::Mat3<AD>&) {});
  for (int j = 0; j < 8; ++j)
    for (int i = 0; i < 3; ++i) K.row(3 * j + i) = -fa(i, j).derivatives().transpose();
}

}  // namespace cardio::mechanics
