#pragma once
/// @file quasi_static.hpp
/// The quasi-static solve of a heart config (simulation.mode: quasi_static): the model of
/// heart_model.hpp under follower pressures and active fibre tension raised in load steps, solved by
/// Newton or dynamic relaxation, and the probes' final positions.
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>

#include "cardio/mechanics/myocardium.hpp"
#include "cardio/mechanics/system.hpp"
#include "cardio/meshing/voxel_mesh.hpp"
#include "config/heart_config.hpp"
#include "heart/heart_model.hpp"

namespace cardio::pipeline {

struct HeartRunResult {
  mechanics::NodeState state;
  std::vector<double> active_tension;  ///< per element at the end [kPa]
  nlohmann::json summary;              ///< measured quantities (summary.json adds version etc.)
};

/// Where a probe's reference point lies in the rest mesh: in an element (its local coordinates), or
/// just outside the mesh (within one voxel diagonal of it) at its nearest node.
struct ProbeLocation {
  std::int64_t element = -1;                     ///< -1: outside, the nearest node stands in
  Eigen::Vector3d xi = Eigen::Vector3d::Zero();  ///< local coordinates in the element, in [0, 1]
  Eigen::Index node = -1;                        ///< the nearest node (outside only)
  double distance = 0;                           ///< from the point to that node [mm]
};

/// Every probe located in `mesh`. A probe farther than one voxel diagonal from every node is outside
/// the mesh: cardio::Error naming the probe (config location, name), its point and the distance.
/// One just outside gets a line in `log`.
std::vector<ProbeLocation> locate_probes(const std::vector<Probe>& probes, const meshing::VoxelMesh& mesh,
                                         std::ostream* log = nullptr);

/// Build the model on `mesh` and solve (the probes are located first). Config problems found here (a tag that does not
/// exist, a plane that selects nothing) are cardio::Error naming the config location. With `guess` (node positions
/// under the whole load, e.g. from a coarser mesh: coarse_start.hpp) Newton starts there at the whole load, and
/// solves from rest in the config's load steps only if that does not converge to a physical state.
HeartRunResult run_heart_simulation(const HeartSimulation& sim, const meshing::VoxelMesh& mesh, std::ostream* log,
                                    const Eigen::Matrix3Xd* guess = nullptr);

}  // namespace cardio::pipeline
