#pragma once
/// @file measure.hpp
/// The material constants a block experiment measures from its final state (Baudet et al. 2007,
/// sec. 5), next to the values predicted in closed form from the calibration (internal to
/// pipeline/blocks).
#include <nlohmann/json.hpp>

#include "blocks/experiments.hpp"

namespace cardio::pipeline {

/// "measured" of summary.json: the experiment's constants, and "expected" where predictable.
nlohmann::json measure(const RunConfig& cfg, const ExperimentModel& m, const mechanics::NodeState& s);

}  // namespace cardio::pipeline
