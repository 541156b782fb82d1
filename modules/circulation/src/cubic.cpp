#include "cardio/circulation/cubic.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "cardio/core/error.hpp"

namespace cardio::circulation {
namespace {

struct Poly {
  double c[4];
  double operator()(double x) const { return ((c[3] * x + c[2]) * x + c[1]) * x + c[0]; }
  double derivative(double x) const { return (3 * c[3] * x + 2 * c[2]) * x + c[1]; }
};

int sign(double v) { return (v > 0) - (v < 0); }

/// Root of p in [lo, hi] with p(lo), p(hi) of opposite signs (or zero): Newton steps kept inside
/// the bracket, bisection when Newton leaves it or stalls.
double bracketed_root(const Poly& p, double lo, double hi) {
  double flo = p(lo), fhi = p(hi);
  if (flo == 0) return lo;
  if (fhi == 0) return hi;
  // Start from the linearisation at zero when it lies in the bracket (the usual case of the
  // projection: a small root of a nearly linear cubic), else from the midpoint.
  const double guess = p.c[1] != 0 ? -p.c[0] / p.c[1] : 0.0;
  double x = (guess > lo && guess < hi) ? guess : 0.5 * (lo + hi);
  for (int it = 0; it < 4000; ++it) {
    const double fx = p(x);
    if (fx == 0) return x;
    if (sign(fx) == sign(flo)) {
      lo = x;
      flo = fx;
    } else {
      hi = x;
    }
    const double d = p.derivative(x);
    double next = d != 0 ? x - fx / d : 0.5 * (lo + hi);
    if (!(next > lo && next < hi)) next = 0.5 * (lo + hi);
    if (next == x || hi - lo <= 2 * std::numeric_limits<double>::epsilon() * std::max(std::abs(lo), std::abs(hi)))
      return std::abs(p(lo)) < std::abs(p(hi)) ? lo : hi;
    x = next;
  }
  return x;
}

/// Cauchy's bound: every root has |x| < 1 + max_i |c_i / c_degree|.
double cauchy_bound(const Poly& p, int degree) {
  double bound = 0;
  for (int i = 0; i < degree; ++i) bound = std::max(bound, std::abs(p.c[i] / p.c[degree]));
  return bound + 1;
}

}  // namespace

std::vector<double> real_roots(double c0, double c1, double c2, double c3) {
  const Poly p{{c0, c1, c2, c3}};
  for (double c : p.c)
    CARDIO_CHECK(std::isfinite(c),
                 "polynomial coefficients must be finite: " << c0 << ", " << c1 << ", " << c2 << ", " << c3);
  int degree = 3;
  // A leading coefficient so small that the bound overflows only has roots beyond the double range.
  while (degree > 0 && (p.c[degree] == 0 || !std::isfinite(cauchy_bound(p, degree)))) --degree;
  CARDIO_CHECK(degree > 0 || c0 != 0, "the zero polynomial has every number as a root");
  std::vector<double> roots;
  if (degree == 0) return roots;
  if (degree == 1) return {-c0 / c1};
  const Poly q = degree == 2 ? Poly{{c0, c1, c2, 0.0}} : p;
  // Critical points: roots of p' = c1 + 2 c2 x + 3 c3 x^2 (a line when degree 2).
  std::vector<double> crit;
  if (degree == 2) {
    crit.push_back(-c1 / (2 * c2));  // the vertex of the parabola
  } else {
    const double a = 3 * c3, b = 2 * c2, c = c1;
    const double disc = b * b - 4 * a * c;
    if (disc > 0) {
      const double q = -0.5 * (b + std::copysign(std::sqrt(disc), b));  // stable quadratic formula
      double r1 = q / a, r2 = q != 0 ? c / q : -r1;
      if (r1 > r2) std::swap(r1, r2);
      crit = {r1, r2};
    }
  }
  // Monotone pieces between consecutive breakpoints (-inf, crit..., +inf): a root where the sign changes.
  const double bound = cauchy_bound(q, degree);
  std::vector<double> pts;
  pts.push_back(crit.empty() ? -bound : std::min(crit.front(), -bound));
  for (double x : crit) pts.push_back(x);
  pts.push_back(crit.empty() ? bound : std::max(crit.back(), bound));
  for (std::size_t i = 0; i + 1 < pts.size(); ++i) {
    const double lo = pts[i], hi = pts[i + 1];
    const double flo = q(lo), fhi = q(hi);
    if (flo == 0 && i > 0) continue;  // a root at a critical point: taken by the previous piece
    if (sign(flo) * sign(fhi) <= 0) roots.push_back(bracketed_root(q, lo, hi));
  }
  std::sort(roots.begin(), roots.end());
  roots.erase(std::unique(roots.begin(), roots.end()), roots.end());
  return roots;
}

double root_nearest_zero(double c0, double c1, double c2, double c3) {
  const std::vector<double> roots = real_roots(c0, c1, c2, c3);
  if (roots.empty())
    CARDIO_FAIL("the polynomial " << c0 << " + " << c1 << " x + " << c2 << " x^2 + " << c3 << " x^3 has no real root");
  double best = roots.front();
  for (double r : roots)
    if (std::abs(r) < std::abs(best) || (std::abs(r) == std::abs(best) && r > best)) best = r;
  return best;
}

}  // namespace cardio::circulation
