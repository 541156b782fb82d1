#include "heart/tension_calibration.hpp"

#include <algorithm>
#include <cmath>

#include "cardio/core/error.hpp"

namespace cardio::pipeline {

TensionCalibration::TensionCalibration(const TensionTarget& target, double initial_peak_tension_kPa)
    : m_target(target), m_tension(initial_peak_tension_kPa) {}

double TensionCalibration::next(double measured) {
  CARDIO_CHECK(std::isfinite(measured), "tension calibration: the beat's measured value is " << measured);
  m_history.emplace_back(m_tension, measured);
  if (reached()) return m_tension;
  double proposal = m_tension * m_target.value / std::max(measured, 1e-3 * m_target.value);
  if (m_history.size() >= 2) {
    // The secant only where the last two beats show the value growing with the tension: before the
    // circulation is periodic, the preload changes from beat to beat and can hide that.
    const auto [t0, m0] = m_history[m_history.size() - 2];
    const auto [t1, m1] = m_history.back();
    // And only where its slope is within kSecantRange of the proportional step's (m1 / t1): a preload or
    // afterload that changed between the beats (the fill, the afterload calibration) can make the value
    // barely move with the tension, and the secant then asks for a far too large step (measured: EF
    // 0.702 -> 0.697 for 200 -> 171 kPa while the afterload fell asked for 85 kPa).
    const double slope = t1 != t0 ? (m1 - m0) / (t1 - t0) : 0.0, proportional = m1 / t1;
    if (slope > 0 && slope >= proportional / kSecantRange && slope <= proportional * kSecantRange)
      proposal = t1 + (m_target.value - m1) / slope;
  }
  // Within a factor 2 of the last tension (a secant through noisy beats may jump), and in (0, 1000] kPa.
  m_tension = std::clamp(proposal, 0.5 * m_tension, std::min(2.0 * m_tension, 1000.0));
  return m_tension;
}

bool TensionCalibration::reached() const {
  return !m_history.empty() &&
         std::abs(m_history.back().second - m_target.value) <= m_target.tolerance * std::abs(m_target.value);
}

void TensionCalibration::save(BinaryWriter& out) const {
  out.f64(m_tension);
  out.u64(m_history.size());
  for (const auto& [t, m] : m_history) {
    out.f64(t);
    out.f64(m);
  }
}

void TensionCalibration::restore(BinaryReader& in) {
  m_tension = in.f64();
  const std::uint64_t n = in.u64();
  CARDIO_CHECK(n < 100000, "checkpoint: the tension calibration claims " << n << " beats");
  m_history.clear();
  for (std::uint64_t k = 0; k < n; ++k) {
    const double t = in.f64();
    m_history.emplace_back(t, in.f64());
  }
}

}  // namespace cardio::pipeline
