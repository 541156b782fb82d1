#include "heart/passive_inflation.hpp"

#include <algorithm>
#include <utility>

#include "cardio/core/error.hpp"
#include "cardio/mechanics/integrators.hpp"
#include "cardio/mechanics/mesh.hpp"

namespace cardio::pipeline {
namespace {

/// The pressure on the lid that closes `cavity` over its rim, as the beat's cavity pressure loads it
/// (meshing::CavitySurface: the lid triangles are (centre, a, b), after the endocardial ones).
mechanics::LidPressureLoad lid_load(const meshing::CavitySurface& cavity, double pressure) {
  mechanics::LidPressureLoad lid;
  lid.pressure = pressure;
  for (std::size_t t = std::size_t(cavity.n_endocardial_triangles); t < cavity.triangles.size(); ++t) {
    const auto& tri = cavity.triangles[t];
    lid.edges.push_back({cavity.nodes[std::size_t(tri[1])], cavity.nodes[std::size_t(tri[2])]});
  }
  for (std::int32_t r : cavity.rim) lid.rim.push_back(cavity.nodes[std::size_t(r)]);
  return lid;
}

}  // namespace

PassiveInflation::PassiveInflation(const HeartSimulation& sim, const meshing::VoxelMesh& mesh,
                                   const std::vector<CavityPressure>& pressures, const std::string& where,
                                   std::ostream* log)
    : m_mesh(mesh), m_newton_log(sim.unloading.newton_log ? log : nullptr) {
  mechanics::Loads loads;
  for (const CavityPressure& p : pressures) {
    SurfaceSelector endocardium;
    endocardium.tag = "endocardium_" + p.cavity;
    endocardium.where = where + ": cavity '" + p.cavity + "'";
    loads.pressures.push_back({select_quads(endocardium, mesh), p.pressure});
    for (const meshing::CavitySurface& cavity : mesh.cavities)
      if (cavity.name == p.cavity && cavity.has_lid()) loads.lids.push_back(lid_load(cavity, p.pressure));
  }
  m_model = build_heart_model(sim, mesh, 1.0, std::move(loads));
  m_newton = std::make_unique<mechanics::NewtonSolver>(*m_model.system, mesh.mesh);
  m_options.residual_tol = sim.residual_tol;
  m_options.update_tol = sim.update_tol;
  m_options.max_iterations = int(sim.max_iterations);
  m_options.linear_solver = sim.linear_solver;
  m_options.reuse_factorisation = sim.reuse_factorisation;
  m_load_steps = sim.unloading.load_steps;
}

PassiveInflation::~PassiveInflation() = default;

bool PassiveInflation::solve(Eigen::Matrix3Xd& x, double s_from, double s_to, int max_cuts, double first_increment,
                             InflationOutcome& out) {
  mechanics::NodeState state = m_model.system->rest_state();
  state.x = x;
  mechanics::NewtonOptions o = m_options;
  o.max_cuts = max_cuts;
  o.first_increment = first_increment;
  const mechanics::LoadPath path = [](double s) { return mechanics::ForceInputs{s, {}, {}}; };
  mechanics::NewtonStats st;
  try {
    st = m_newton->solve(state, path, s_from, s_to, o, m_newton_log);
  } catch (const Error&) {
    st.converged = false;  // e.g. a non-finite tangent far from equilibrium: the caller retries
  }
  out.newton_iterations += st.iterations;
  if (!st.converged) return false;
  const mechanics::WorstElement w = mechanics::worst_element(m_mesh.mesh, state.x);
  out.worst_J = w.J;
  if (!(w.J > 0)) return false;
  x = std::move(state.x);
  return true;
}

InflationOutcome PassiveInflation::inflate(const Eigen::Matrix3Xd* guess, double guess_fraction) {
  InflationOutcome out;
  if (guess) {
    out.x = *guess;
    // From an equilibrium at a lower load the load rises from there, cut on failure; from a mere
    // guess, the whole load in one increment.
    const int cuts = guess_fraction > 0 ? m_options.max_cuts : 0;
    if (solve(out.x, guess_fraction, 1.0, cuts, 1.0, out)) {
      out.converged = true;
      return out;
    }
  }
  out.x = m_mesh.mesh.rest;
  out.converged = solve(out.x, 0.0, 1.0, m_options.max_cuts, 1.0 / m_load_steps, out);
  return out;
}

InflationOutcome PassiveInflation::inflate_through(
    const std::vector<double>& fractions, const std::function<void(double, const Eigen::Matrix3Xd&)>& at_each) {
  InflationOutcome out;
  out.x = m_mesh.mesh.rest;
  double last = 0;
  for (double s : fractions) {
    const double first = last == 0 ? std::min(1.0, 1.0 / (m_load_steps * s)) : 1.0;
    if (!solve(out.x, last, s, m_options.max_cuts, first, out)) return out;
    at_each(s, out.x);
    last = s;
  }
  out.converged = true;
  return out;
}

meshing::VoxelMesh with_rest_positions(const meshing::VoxelMesh& mesh, const Eigen::Matrix3Xd& X) {
  CARDIO_CHECK(X.cols() == mesh.mesh.n_nodes(),
               "rest positions for " << X.cols() << " nodes, the mesh has " << mesh.mesh.n_nodes());
  meshing::VoxelMesh out = mesh;
  out.mesh.rest = X;
  out.volume = mechanics::element_volumes(out.mesh, X);
  // Lumped masses at the image's tissue density, as the mesh stage lumps them.
  const double density = mesh.mass.sum() / mesh.volume.sum();
  out.mass = mechanics::lumped_masses(out.mesh, std::vector<double>(out.labels_used.size(), density));
  return out;
}

}  // namespace cardio::pipeline
