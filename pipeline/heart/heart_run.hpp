#pragma once
/// @file heart_run.hpp
/// The model and simulate stages of a heart config: Guccione myocardium on the voxel mesh, fixed
/// and sliding boundaries, follower pressures, active fibre tension; quasi-static solve (dynamic
/// relaxation with load steps) and the probes' final positions.
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>

#include "cardio/mechanics/mass_scaling.hpp"
#include "cardio/mechanics/myocardium.hpp"
#include "cardio/mechanics/system.hpp"
#include "cardio/meshing/voxel_mesh.hpp"
#include "config/heart_config.hpp"

namespace cardio::pipeline {

/// The mechanical model of a heart config: Guccione myocardium (one law per material), fixed and
/// sliding boundaries, the pericardium; shared by the quasi-static and the beat modes.
struct HeartModel {
  std::unique_ptr<mechanics::MassSpringSystem> system;
  mechanics::GuccioneForces* myocardium = nullptr;  ///< owned by `system`: set its active tension
  /// What selective mass scaling did (nodal_mass emptied), if simulation.selective_mass_scaling > 0.
  std::optional<mechanics::SelectiveMassScaling> selective_mass;
};

/// Build the model on `mesh` with nodal masses x `mass_scaling`.
HeartModel build_heart_model(const HeartSimulation& sim, const meshing::VoxelMesh& mesh, double mass_scaling = 1.0);

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

/// Build the model on `mesh` and solve (the probes are located first). Config problems found here (a tag that does not exist, a
/// plane that selects nothing) are cardio::Error naming the config location.
HeartRunResult run_heart_simulation(const HeartSimulation& sim, const meshing::VoxelMesh& mesh, std::ostream* log);

/// A non-physical state is a failure: throws cardio::Error when an element is inverted (det F <= 0
/// at one of its 2x2x2 Gauss points, or a NaN position) or a cavity's volume is not positive,
/// naming the element (id, voxel, label), its J, `when` (the load step or time) and `likely_cause`.
void check_physical_state(const meshing::VoxelMesh& mesh, const Eigen::Matrix3Xd& x, const std::string& when,
                          const std::string& likely_cause);

/// The distinct nodes of a set of quads, ascending.
std::vector<std::int32_t> nodes_of(const std::vector<mechanics::Quad>& quads);

/// Nodes held at their rest position in the components of `mask` (bit i: component i).
mechanics::DofConstraint fixed_nodes(std::vector<std::int32_t> nodes, std::uint8_t mask);

/// The boundary quads a selector picks (errors name the selector's config location).
std::vector<mechanics::Quad> select_quads(const SurfaceSelector& s, const meshing::VoxelMesh& mesh);

}  // namespace cardio::pipeline
