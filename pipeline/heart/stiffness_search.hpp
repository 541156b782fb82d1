#pragma once
/// @file stiffness_search.hpp (private to pipeline/heart)
/// The pieces of the root search on log C shared by the fit on a fixed reference
/// (passive_calibration.cpp) and the calibration that unloads with each C (klotz_calibration.cpp).
#include <algorithm>
#include <cmath>
#include <string>

#include "cardio/core/error.hpp"
#include "heart/passive_calibration.hpp"

namespace cardio::pipeline::stiffness_search {

/// The root search on log C stops when the bracket, or the last secant step, is narrower than its
/// tolerance (0.1 % in C on a fixed reference) or the mismatch is below kMismatchTol.
inline constexpr double kLogBracketTol = 1e-3, kMismatchTol = 1e-5;
inline constexpr int kMaxEvaluations = 30;  ///< curves of a fit on a fixed reference

inline const meshing::CavitySurface& cavity_named(const meshing::VoxelMesh& m, const std::string& name,
                                                  const std::string& where) {
  for (const auto& c : m.cavities)
    if (c.name == name) return c;
  CARDIO_FAIL(where << ": passive_calibration.cavity: the mesh has no cavity '" << name << "'");
}

/// Mean of the model's normalised curve minus the target at the curve's inner points (the ends
/// are 0 and 1 for both).
inline double normalised_mismatch(const PressureVolumeCurve& c, const NormalisedCurve& target) {
  const double V0 = c.volume_mL.front(), span = c.volume_mL.back() - V0, edp = c.pressure_mmHg.back();
  double sum = 0;
  const std::size_t n = c.volume_mL.size();
  for (std::size_t i = 1; i + 1 < n; ++i) sum += (c.volume_mL[i] - V0) / span - target(c.pressure_mmHg[i] / edp);
  return sum / double(std::max<std::size_t>(n - 2, 1));
}

/// Where the line through (x0, g0) and (x1, g1) crosses g = 0.
inline double secant_root(double x0, double g0, double x1, double g1) { return x0 - g0 * (x1 - x0) / (g1 - g0); }

/// One evaluation of the search: the curve at C and its mismatch (nullopt: did not inflate).
struct Sample {
  double log_C = 0, g = 0;
  PressureVolumeCurve curve;
};

struct Refined {
  Sample best;
  bool converged = false;  ///< to log_tol or kMismatchTol (not stopped by the budget or a failure)
};

/// The root of a bracket [a, b] of opposite signs, to log_tol in log C: the secant through the two
/// latest samples when it falls inside the bracket (superlinear on the smooth, nearly linear
/// mismatch of log C), else regula falsi on the bracket; every sample narrows the bracket.
template <class Search>
Refined refine(Search& search, Sample a, Sample b, double log_tol, int max_evaluations) {
  Refined r{std::abs(a.g) < std::abs(b.g) ? a : b, false};
  Sample latest = b, previous = a;
  const auto zero_of = [](const Sample& p, const Sample& q) { return secant_root(p.log_C, p.g, q.log_C, q.g); };
  for (;;) {
    r.converged = std::abs(b.log_C - a.log_C) <= log_tol || std::abs(r.best.g) <= kMismatchTol;
    if (r.converged || search.evaluations >= max_evaluations) return r;
    const double lo = std::min(a.log_C, b.log_C), hi = std::max(a.log_C, b.log_C);
    double next = latest.g != previous.g ? zero_of(latest, previous) : zero_of(a, b);
    if (!(next > lo && next < hi)) next = zero_of(a, b);
    const auto s = search.at(next);
    if (!s) return r;  // between two that inflated: does not happen for a smooth law; keep the best
    if (std::abs(s->g) < std::abs(r.best.g)) r.best = *s;
    ((s->g > 0) == (a.g > 0) ? a : b) = *s;
    previous = latest;
    latest = *s;
    // A secant step below the tolerance: the root is that close to the latest sample.
    if (std::abs(latest.log_C - previous.log_C) < log_tol) {
      r.converged = true;
      return r;
    }
  }
}

}  // namespace cardio::pipeline::stiffness_search
