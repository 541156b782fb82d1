#pragma once
/// @file cubic.hpp
/// Real roots of a polynomial of degree <= 3, robust to a vanishing leading coefficient (the
/// volume of Promayon's projection is cubic in phi, but its phi^3 term is tiny for small steps).
#include <vector>

namespace cardio::circulation {

/// All real roots of c0 + c1 x + c2 x^2 + c3 x^3, ascending (a double root once).
/// Method: the derivative's roots (stable quadratic formula) split the line into monotone
/// intervals; each interval with a sign change is bracketed and its root found by safeguarded
/// Newton-bisection to full double precision. Exact zero leading coefficients lower the degree.
/// Throws cardio::Error if every coefficient is zero (every x is a root) or one is not finite.
std::vector<double> real_roots(double c0, double c1, double c2, double c3);

/// The real root of c0 + c1 x + c2 x^2 + c3 x^3 nearest zero (ties: the positive one).
/// Throws cardio::Error naming the coefficients if the polynomial has no real root.
double root_nearest_zero(double c0, double c1, double c2, double c3);

}  // namespace cardio::circulation
