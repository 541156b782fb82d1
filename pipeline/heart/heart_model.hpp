#pragma once
/// @file heart_model.hpp
/// The mechanical model of a heart config, shared by the quasi-static and the beat modes: Guccione
/// myocardium on the voxel mesh (one law per material), fixed and sliding boundaries, the
/// pericardium; and the check that a state is physical.
#include <memory>
#include <optional>
#include <string>
#include <vector>

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
  /// The system's internal forces, which build_heart_model makes Guccione forces.
  const mechanics::GuccioneForces& myocardium() const {
    return static_cast<const mechanics::GuccioneForces&>(system->internal());
  }
  /// What selective mass scaling did (nodal_mass emptied), if simulation.selective_mass_scaling > 0.
  std::optional<mechanics::SelectiveMassScaling> selective_mass;
};

/// Build the model on `mesh` with nodal masses x `mass_scaling` and `loads` (at load factor 1), the
/// element constants stored in `storage` precision (single: the explicit beat).
HeartModel build_heart_model(const HeartSimulation& sim, const meshing::VoxelMesh& mesh, double mass_scaling = 1.0,
                             mechanics::Loads loads = {},
                             mechanics::Precision storage = mechanics::Precision::double_precision);

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
