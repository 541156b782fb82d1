#pragma once
/// @file time_step.hpp
/// The time step of an explicit scheme (a beat, a dynamic block experiment) or of dynamic
/// relaxation's pseudo time: one schema (dt, dt_safety, force_dt), one default and one stability
/// check for every mode, in the `solver` section of a block experiment and the `simulation`
/// section of a heart (docs/config.md).
#include <optional>
#include <string>

#include "cardio/config/config.hpp"

namespace cardio::pipeline {

struct TimeStepParams {
  std::optional<double> dt;  ///< [ms]; std::nullopt (`auto`): the stability estimate x safety
  double safety = 0.5;       ///< dt_safety: the fraction of the estimate taken when dt is auto
  bool force = false;        ///< force_dt: run with a dt above the estimate
  std::string where;         ///< "FILE:LINE:COL: SECTION.dt", for errors
  std::string section;       ///< "solver" or "simulation"

  /// The step in force for a model whose stability estimate is dt_stable [ms]: dt, refused above
  /// dt_stable unless force (cardio::Error naming where and what to change), else safety x dt_stable.
  double choose(double dt_stable) const;
};

/// dt (a time or `auto`, the default), dt_safety (0 < s <= 1, default 0.5), force_dt (default false).
TimeStepParams parse_time_step(const config::Node& section);

}  // namespace cardio::pipeline
