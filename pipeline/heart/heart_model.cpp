#include "heart/heart_model.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <utility>

#include "cardio/core/error.hpp"
#include "cardio/mechanics/integrators.hpp"

namespace cardio::pipeline {

using mechanics::Quad;

std::vector<std::int32_t> nodes_of(const std::vector<Quad>& quads) {
  std::vector<std::int32_t> nodes;
  for (const Quad& q : quads) nodes.insert(nodes.end(), q.begin(), q.end());
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  return nodes;
}

mechanics::DofConstraint fixed_nodes(std::vector<std::int32_t> nodes, std::uint8_t mask) {
  mechanics::DofConstraint c;  // M = 0, b = 0: no prescribed motion
  c.nodes = std::move(nodes);
  c.mask = mask;
  return c;
}

std::vector<Quad> select_quads(const SurfaceSelector& s, const meshing::VoxelMesh& m) {
  std::vector<Quad> out;
  if (!s.tag.empty()) {
    const auto it = std::find(m.tag_names.begin(), m.tag_names.end(), s.tag);
    if (it == m.tag_names.end()) {
      std::ostringstream os;
      for (const auto& t : m.tag_names) os << " " << t;
      CARDIO_FAIL(s.where << ": no surface tag '" << s.tag << "'; the mesh has:" << os.str());
    }
    const auto tag = static_cast<std::uint8_t>(it - m.tag_names.begin());
    for (std::size_t q = 0; q < m.surface_quads.size(); ++q)
      if (m.surface_tag[q] == tag) out.push_back(m.surface_quads[q]);
  } else {
    const double tol = 1e-6 * m.grid.spacing.minCoeff();
    for (const Quad& q : m.surface_quads) {
      bool on = true;
      for (std::int32_t n : q) on = on && std::abs((m.mesh.rest.col(n) - s.point).dot(s.normal)) <= tol;
      if (on) out.push_back(q);
    }
  }
  if (out.empty()) CARDIO_FAIL(s.where << ": " << s.describe() << " selects no boundary face of the mesh");
  return out;
}

void check_physical_state(const meshing::VoxelMesh& m, const Eigen::Matrix3Xd& x, const std::string& when,
                          const std::string& likely_cause) {
  const mechanics::WorstElement w = mechanics::worst_element(m.mesh, x);
  if (w.element >= 0 && !(w.J > 0)) {
    const imaging::Index3 v = m.grid.index(m.voxel[std::size_t(w.element)]);
    CARDIO_FAIL(when << ": element " << w.element << " (voxel " << v[0] << ", " << v[1] << ", " << v[2] << "; label "
                     << m.label[std::size_t(w.element)] << ") is inverted: det F = " << w.J
                     << " at a Gauss point (must be > 0). Likely cause: " << likely_cause);
  }
  for (const auto& c : m.cavities) {
    const double V = meshing::cavity_volume(c, x);
    if (!(V > 0))
      CARDIO_FAIL(when << ": cavity '" << c.name << "' has volume " << V / 1000.0
                       << " mL (must be > 0): the walls have passed through each other. Likely cause: "
                       << likely_cause);
  }
}

namespace {

/// The boundary of a heart config: fixed and sliding faces, elastic supports, the pericardium, and `loads`.
mechanics::BoundaryConditions heart_boundary(const HeartSimulation& sim, const meshing::VoxelMesh& m,
                                             mechanics::Loads loads) {
  mechanics::BoundaryConditions bc;
  bc.loads = std::move(loads);
  // Boundary conditions (Promayon projection of prescribed positions).
  for (const auto& f : sim.fixed) bc.constraints.push_back(fixed_nodes(nodes_of(select_quads(f, m)), 0b111));
  for (const auto& s : sim.sliding) {
    const Eigen::Vector3d normal = s.tag.empty() ? s.normal : m.axis.base_normal;
    Eigen::Index axis;
    if (normal.cwiseAbs().maxCoeff(&axis) < 1 - 1e-9)
      CARDIO_FAIL(s.where << ": sliding needs a plane normal along x, y or z (the constraint fixes one "
                             "coordinate); the normal is ("
                          << normal.transpose() << ")");
    bc.constraints.push_back(fixed_nodes(nodes_of(select_quads(s, m)), static_cast<std::uint8_t>(1u << axis)));
  }
  for (const FoundationSpec& f : sim.elastic)
    bc.foundations.push_back({select_quads(f.surface, m), f.stiffness, f.direction});
  if (sim.pericardium)
    bc.foundations.push_back(
        {select_quads(sim.pericardium->surface, m), sim.pericardium->stiffness, sim.pericardium->direction});
  return bc;
}

}  // namespace

HeartModel build_heart_model(const HeartSimulation& sim, const meshing::VoxelMesh& m, double mass_scaling,
                             mechanics::Loads loads, mechanics::Precision storage) {
  const mechanics::HexMesh& mesh = m.mesh;
  auto forces = std::make_unique<mechanics::GuccioneForces>(
      mesh, std::vector<mechanics::GuccioneLaw>(m.labels_used.size(), sim.material.law), sim.material.element, storage);
  if (sim.simd != "auto") {
    try {
      forces->use_simd_isa(sim.simd);
    } catch (const std::exception& ex) {
      CARDIO_FAIL("simulation.simd: " << ex.what() << " (use auto, or one of the builds this CPU runs)");
    }
  }
  HeartModel model;
  Eigen::VectorXd masses = mass_scaling * m.mass;
  if (sim.selective_mass_scaling > 0) {
    // One tissue density (tissue.density): element mass = density x rest volume, scaled as the nodes.
    const Eigen::VectorXd element_mass = (mass_scaling * m.mass.sum() / m.volume.sum()) * m.volume;
    const Eigen::VectorXd bounds = mechanics::element_frequency_bounds(mesh, *forces, element_mass, mesh.rest);
    model.selective_mass =
        mechanics::selective_mass_scaling(mesh, masses, element_mass, bounds, sim.selective_mass_scaling);
    masses = std::move(model.selective_mass->nodal_mass);
    model.selective_mass->nodal_mass.resize(0);
  }
  model.system = std::make_unique<mechanics::MassSpringSystem>(mesh, std::move(forces), masses,
                                                               heart_boundary(sim, m, std::move(loads)));
  return model;
}

}  // namespace cardio::pipeline
