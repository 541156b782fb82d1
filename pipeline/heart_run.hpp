#pragma once
/// @file heart_run.hpp
/// The model and simulate stages of a heart config: Guccione myocardium on the voxel mesh, fixed
/// and sliding boundaries, follower pressures, active fibre tension; quasi-static solve (dynamic
/// relaxation with load steps) and the probes' final positions.
#include <nlohmann/json.hpp>
#include <ostream>

#include "cardio/mechanics/system.hpp"
#include "cardio/meshing/voxel_mesh.hpp"
#include "heart_config.hpp"

namespace cardio::pipeline {

struct HeartRunResult {
  mechanics::NodeState state;
  std::vector<double> active_tension;  ///< per element at the end [kPa]
  nlohmann::json summary;              ///< measured quantities (summary.json adds version etc.)
};

/// Build the model on `mesh` and solve. Config problems found here (a tag that does not exist, a
/// plane that selects nothing) are cardio::Error naming the config location.
HeartRunResult run_heart_simulation(const HeartSimulation& sim, const meshing::VoxelMesh& mesh, std::ostream* log);

/// The distinct nodes of a set of quads, ascending.
std::vector<std::int32_t> nodes_of(const std::vector<mechanics::Quad>& quads);

/// Nodes held at their rest position in the components of `mask` (bit i: component i).
mechanics::DofConstraint fixed_nodes(std::vector<std::int32_t> nodes, std::uint8_t mask);

/// The boundary quads a selector picks (errors name the selector's config location).
std::vector<mechanics::Quad> select_quads(const SurfaceSelector& s, const meshing::VoxelMesh& mesh);

}  // namespace cardio::pipeline
