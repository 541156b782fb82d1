#pragma once
/// @file sampled_axes_dual.hpp (private)
/// Forward-mode dual numbers with the 24 derivatives of an element's node coordinates held in SIMD
/// vectors: the sampled-axes kernel instantiated on Dual<Arch> gives the exact tangent stiffness
/// (as Eigen's AutoDiffScalar does in sampled_element_stiffness, the reference), a vector
/// instruction per 8 (AVX-512), 4 or 2 derivatives. Included by sampled_axes_simd.hpp only.
#include <xsimd/xsimd.hpp>

#include <cmath>

#include "sampled_axes_kernel.hpp"

namespace cardio::mechanics::detail {

template <class Arch>
struct Dual {
  using B = xsimd::batch<double, Arch>;
  static constexpr int kParts = 24 / static_cast<int>(B::size);
  double v;
  B d[kParts];

  Dual(double value = 0) : v(value) {
    for (B& p : d) p = B(0.0);
  }
  /// The variable k of 24 (coordinate i of node j is 3 j + i), at `value`.
  static Dual variable(double value, int k) {
    alignas(64) double unit[24] = {};
    unit[k] = 1;
    Dual x(value);
    for (int p = 0; p < kParts; ++p) x.d[p] = B::load_aligned(unit + p * B::size);
    return x;
  }
  /// value f(v), derivative f'(v) d.
  static Dual chain(double value, double slope, const Dual& a) {
    Dual r(value);
    for (int p = 0; p < kParts; ++p) r.d[p] = slope * a.d[p];
    return r;
  }

  friend Dual operator+(const Dual& a, const Dual& b) {
    Dual r(a.v + b.v);
    for (int p = 0; p < kParts; ++p) r.d[p] = a.d[p] + b.d[p];
    return r;
  }
  friend Dual operator-(const Dual& a, const Dual& b) {
    Dual r(a.v - b.v);
    for (int p = 0; p < kParts; ++p) r.d[p] = a.d[p] - b.d[p];
    return r;
  }
  friend Dual operator*(const Dual& a, const Dual& b) {
    Dual r(a.v * b.v);
    for (int p = 0; p < kParts; ++p) r.d[p] = a.d[p] * b.v + b.d[p] * a.v;
    return r;
  }
  friend Dual operator/(const Dual& a, const Dual& b) {
    Dual r(a.v / b.v);
    const double inv = 1 / b.v;
    for (int p = 0; p < kParts; ++p) r.d[p] = (a.d[p] - r.v * b.d[p]) * inv;
    return r;
  }
  friend Dual operator+(const Dual& a, double c) { return chain(a.v + c, 1, a); }
  friend Dual operator+(double c, const Dual& a) { return chain(c + a.v, 1, a); }
  friend Dual operator-(const Dual& a, double c) { return chain(a.v - c, 1, a); }
  friend Dual operator-(double c, const Dual& a) { return chain(c - a.v, -1, a); }
  friend Dual operator*(const Dual& a, double c) { return chain(a.v * c, c, a); }
  friend Dual operator*(double c, const Dual& a) { return chain(c * a.v, c, a); }
  friend Dual operator/(const Dual& a, double c) { return chain(a.v / c, 1 / c, a); }
  friend Dual operator/(double c, const Dual& a) { return chain(c / a.v, -(c / a.v) / a.v, a); }
  Dual& operator+=(const Dual& b) { return *this = *this + b; }
  Dual& operator-=(const Dual& b) { return *this = *this - b; }
  friend bool operator>(const Dual& a, const Dual& b) { return a.v > b.v; }
};

template <class Arch>
struct ScalarMath<Dual<Arch>> {
  static Dual<Arch> exp_minus_one(const Dual<Arch>& q) { return Dual<Arch>::chain(std::expm1(q.v), std::exp(q.v), q); }
  static Dual<Arch> two_thirds_power(const Dual<Arch>& r) {
    const double c = std::cbrt(r.v);
    return Dual<Arch>::chain(c * c, 2.0 / 3.0 * c * c / r.v, r);  // d r^(2/3) = 2/3 r^(2/3) / r dr
  }
};

/// The value alone: its derivatives dropped (sampled_kernel<false>).
template <class Arch>
Dual<Arch> without_derivatives(const Dual<Arch>& x) {
  return Dual<Arch>(x.v);
}

}  // namespace cardio::mechanics::detail
