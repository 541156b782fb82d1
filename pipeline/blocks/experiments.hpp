#pragma once
/// @file experiments.hpp
/// Baudet's experiments on a voxel block (Baudet et al. 2007, sec. 3 and 5): elongation,
/// shearing, inflation and the cantilever under gravity. Each builds the block, its boundary
/// conditions and loads, solves, and measures the material constants from the final state.
/// The "expected" values come from the calibration in closed form, never from a simulation.
#include <iosfwd>
#include <memory>
#include <nlohmann/json.hpp>

#include "cardio/mechanics/integrators.hpp"
#include "cardio/mechanics/mesh.hpp"
#include "cardio/mechanics/system.hpp"
#include "config/run_config.hpp"

namespace cardio::pipeline {

/// Mesh + system for a config, with the experiment's constraints and loads.
struct ExperimentModel {
  mechanics::HexMesh mesh;
  std::unique_ptr<mechanics::MassSpringSystem> system;
};
ExperimentModel build_model(const RunConfig& cfg);

/// Small-strain Voigt stiffness the calibrated element has in the global frame (uniform
/// fibres only; throws otherwise).
Eigen::Matrix<double, 6, 6> predicted_stiffness(const RunConfig& cfg);

struct ExperimentResult {
  mechanics::HexMesh mesh;
  mechanics::NodeState state;
  nlohmann::json summary;
};

/// Build, solve (quasi-statically or dynamically as configured), measure.
ExperimentResult run_experiment(const RunConfig& cfg, std::ostream* log = nullptr);

}  // namespace cardio::pipeline
