#pragma once
/// @file tension_calibration.hpp
/// The peak active tension found beat by beat so that the LV reaches a target ejection fraction or
/// peak pressure (issue 16, item 5): after each beat, the next beat's Ta_max is the secant step on
/// (Ta_max, measured) of the last two beats where they show the value growing with the tension at a
/// slope within a factor 8 of measured / Ta_max, else
/// (and after the first beat) a step proportional to target / measured; kept within [Ta/2, 2 Ta]. The measured quantity
/// grows with Ta_max, so the iteration brackets the target in a few beats. It runs alongside the circulation's approach
/// to its periodic state.
#include <utility>
#include <vector>

#include "cardio/core/binary.hpp"
#include "config/heart_config.hpp"

namespace cardio::pipeline {

class TensionCalibration {
 public:
  TensionCalibration(const TensionTarget& target, double initial_peak_tension_kPa);

  /// A beat run with peak_tension_kPa() ended with `measured` (EF, or peak pressure in mmHg); returns
  /// the tension for the next beat [kPa].
  double next(double measured);
  double peak_tension_kPa() const { return m_tension; }
  /// The last beat's measured value is within the tolerance of the target.
  bool reached() const;
  /// (Ta_max [kPa], measured) of every beat so far.
  const std::vector<std::pair<double, double>>& history() const { return m_history; }
  const TensionTarget& target() const { return m_target; }

  void save(BinaryWriter& out) const;
  void restore(BinaryReader& in);

 private:
  /// The secant's slope is used within this factor of the proportional step's.
  static constexpr double kSecantRange = 8;
  TensionTarget m_target;
  double m_tension;
  std::vector<std::pair<double, double>> m_history;
};

}  // namespace cardio::pipeline
