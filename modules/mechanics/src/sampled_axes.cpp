#include "cardio/mechanics/sampled_axes.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <unsupported/Eigen/AutoDiff>

#include "cardio/core/error.hpp"
#include "cardio/mechanics/trilinear.hpp"
#include "sampled_axes_constants.hpp"

namespace cardio::mechanics {
namespace {

using V3 = Eigen::Vector3d;

}  // namespace

V3 sample_xi(int g) { return hex_gauss_xi(g); }

Eigen::Matrix<double, 3, kSamples> sample_points(const NodeMatrix& X) {
  Eigen::Matrix<double, 3, kSamples> p;
  for (int g = 0; g < kSamples; ++g) {
    const V3 xi = sample_xi(g);
    p.col(g) = X * hex_shape_values(xi).transpose();
  }
  return p;
}

SampledElementData sampled_element_data(const NodeMatrix& X, const std::array<Eigen::Matrix3d, kSamples>& frames) {
  SampledElementData d;
  for (int g = 0; g < kSamples; ++g) {
    const Eigen::Matrix<double, 8, 3> dN = hex_shape_derivatives(sample_xi(g));
    const Eigen::Matrix3d J0 = X * dN;  // dX/dxi
    const double det = J0.determinant();
    const double scale = std::pow((X.col(6) - X.col(0)).squaredNorm(), 1.5);
    CARDIO_CHECK(std::isfinite(det) && det > 1e-12 * scale,
                 "element inverted or degenerate at rest (det dX/dxi = " << det << " mm^3 at sample " << g << ")");
    const Eigen::Matrix3d& R = frames[std::size_t(g)];
    CARDIO_CHECK((R.transpose() * R - Eigen::Matrix3d::Identity()).norm() < 1e-6 && R.determinant() > 0,
                 "the frame of sample " << g << " is not orthonormal and right-handed");
    d.map[std::size_t(g)] = J0.inverse() * R;
    d.weight[std::size_t(g)] = det;
    d.volume += det;
  }
  return d;
}

namespace {

template <class T>
detail::ElementNodes<T> element_nodes(const NodeMatrix& x) {
  detail::ElementNodes<T> n;
  for (int j = 0; j < 8; ++j)
    for (int i = 0; i < 3; ++i) n.c[i][j] = T(x(i, j));
  return n;
}

detail::Mat3<double> small(const Eigen::Matrix3d& m) {
  detail::Mat3<double> s;
  for (int k = 0; k < 9; ++k) s.m[k] = m.data()[k];
  return s;
}

}  // namespace

namespace detail {

SampledConstants<double> sampled_constants(const SampledElementData& e, const GuccioneLaw& law, double Ta,
                                           double activation) {
  SampledConstants<double> d;
  for (int g = 0; g < kSamples; ++g) {
    d.map[g] = small(e.map[std::size_t(g)]);
    d.weight[g] = e.weight[std::size_t(g)];
  }
  d.volume = e.volume;
  const double shortening = 1 - law.active.beta * activation;
  const double widening = std::sqrt(shortening);
  const double C = law.C * (1 + law.active.gamma * activation);
  d.law = {.ir = {1 / shortening, widening, widening},
           .C = C,
           .Ta = Ta,
           .Ta_s = law.cross_fibre.sheet * Ta,
           .Ta_n = law.cross_fibre.normal * Ta,
           .b_f = law.b_f,
           .b_t = law.b_t,
           .b_fs = law.b_fs,
           .bulk = law.bulk,
           .viscosity = law.damping_time * C};
  return d;
}

}  // namespace detail

ElementDilatation sampled_element_dilatation(const SampledElementData& e, const NodeMatrix& x) {
  const detail::ElementEdges<double> lines = detail::blend_lines(detail::element_edges(element_nodes<double>(x)));
  ElementDilatation out;
  double v = 0;
  out.min_sample_J = INFINITY;
  for (int g = 0; g < kSamples; ++g) {
    const double J =
        detail::determinant(detail::times(detail::reference_gradient(lines, g), small(e.map[std::size_t(g)])));
    out.min_sample_J = std::min(out.min_sample_J, J);
    v += e.weight[std::size_t(g)] * J;
  }
  out.mean_J = v / e.volume;
  return out;
}

double sampled_element_forces(const SampledElementData& e, const GuccioneLaw& law, double Ta, double activation,
                              const NodeMatrix& x, const NodeMatrix* v, NodeMatrix& f) {
  const detail::SampledConstants<double> d = detail::sampled_constants(e, law, Ta, activation);
  const detail::ElementNodes<double> nodes = element_nodes<double>(x);
  detail::ElementNodes<double> velocities, forces = element_nodes<double>(NodeMatrix::Zero());
  const bool viscous = v != nullptr && d.law.viscosity != 0;
  if (viscous) velocities = element_nodes<double>(*v);
  bool valid = true;
  const double W = detail::sampled_kernel(d, nodes, viscous ? &velocities : nullptr, forces, valid);
  // An inverted sample has no F-bar energy: NaN forces make the solvers restart at a smaller step
  // (quasi-static) or stop with the inverted-element error (beat).
  if (!valid) {
    f.setConstant(std::numeric_limits<double>::quiet_NaN());
    return std::numeric_limits<double>::quiet_NaN();
  }
  for (int j = 0; j < 8; ++j)
    for (int i = 0; i < 3; ++i) f(i, j) += forces.c[i][j];
  return W;
}

void sampled_element_stiffness(const SampledElementData& e, const GuccioneLaw& law, double Ta, double activation,
                               const NodeMatrix& x, ElementStiffness& K) {
  // Forward-mode automatic differentiation (Eigen AutoDiff) of the force kernel: one derivative
  // per nodal coordinate, K = -df/dx exact to rounding.
  using AD = Eigen::AutoDiffScalar<Eigen::Matrix<double, 24, 1>>;
  detail::ElementNodes<AD> xa, fa;
  for (int j = 0; j < 8; ++j)
    for (int i = 0; i < 3; ++i) {
      xa.c[i][j] = AD(x(i, j), 24, 3 * j + i);
      fa.c[i][j] = AD(0.0, Eigen::Matrix<double, 24, 1>::Zero());
    }
  bool valid = true;
  detail::sampled_kernel(detail::sampled_constants(e, law, Ta, activation), xa,
                         static_cast<const detail::ElementNodes<AD>*>(nullptr), fa, valid);
  if (!valid) {
    K.setConstant(std::numeric_limits<double>::quiet_NaN());
    return;
  }
  for (int j = 0; j < 8; ++j)
    for (int i = 0; i < 3; ++i) K.row(3 * j + i) = -fa.c[i][j].derivatives().transpose();
}

}  // namespace cardio::mechanics
