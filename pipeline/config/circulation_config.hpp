#pragma once
/// @file circulation_config.hpp
/// The `circulation` section of a beating heart: each cavity in its own Windkessel
/// (`circulation.cavities`), or the ventricles in the closed loop of Regazzoni et al. 2022
/// (`circulation.closed_loop`). docs/config.md lists the keys.
#include <optional>
#include <vector>

#include "cardio/circulation/cavity_coupling.hpp"
#include "cardio/config/config.hpp"

namespace cardio::pipeline {

struct CirculationConfig {
  /// One entry per 3-D cavity (with a closed loop: its ventricles; their Windkessels are not used).
  std::vector<circulation::CavityCirculation> cavities;
  std::optional<circulation::ClosedLoopCirculation> closed_loop;
};

/// `circulation` of a beat with the given first onset and period [ms].
CirculationConfig parse_circulation(const config::Node& section, double first_onset_ms, double period_ms);

}  // namespace cardio::pipeline
