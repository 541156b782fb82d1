#include "heart/passive_inflation.hpp"

#include <algorithm>
#include <cmath>
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
    : m_mesh(mesh),
      m_newton_log(sim.unloading.newton_log ? log : nullptr),
      m_log(log),
      m_relaxation_fallback(sim.unloading.relaxation_fallback) {
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

namespace {

// The fallback's dynamic relaxation (kinetic damping) stops at this relative residual, then Newton
// refines to simulation.residual_tol. Its steps per quarter of the load are capped (about 40 000
// were measured on the soft 2.5 mm biventricle, heartbeat.md).
constexpr double kRelaxationResidual = 1e-4;
constexpr long kRelaxationStepsPerQuarter = 200000;
// With the fallback, Newton hands over after this many halved increments: each costs up to
// simulation.max_iterations iterations, and a soft wall's stalled path took over 1 000 of them.
// (Relaxing an unloading update's guess at the whole load instead was tried: from a guess 10 mm
// off, the exponential law's forces diverged, heartbeat.md.)
constexpr int kCutsBeforeRelaxation = 2;

}  // namespace

mechanics::NewtonStats PassiveInflation::newton(Eigen::Matrix3Xd& x, double s_from, double s_to, int max_cuts,
                                                double first_increment, InflationOutcome& out) {
  mechanics::NodeState state = m_model.system->rest_state();
  state.x = x;
  mechanics::NewtonOptions o = m_options;
  o.max_cuts = max_cuts;
  o.first_increment = first_increment;
  const mechanics::LoadPath path = [](double s) { return mechanics::ForceInputs{s, {}, {}}; };
  mechanics::NewtonStats st;
  st.reached = s_from;
  try {
    st = m_newton->solve(state, path, s_from, s_to, o, m_newton_log);
  } catch (const Error&) {
    st.converged = false;  // e.g. a non-finite tangent far from equilibrium: the caller retries
    state.x = x;
  }
  out.newton_iterations += st.iterations;
  x = std::move(state.x);  // on failure: the last converged state, at st.reached
  return st;
}

bool PassiveInflation::physical(const Eigen::Matrix3Xd& x, InflationOutcome& out) const {
  out.worst_J = mechanics::worst_element(m_mesh.mesh, x).J;
  return out.worst_J > 0;
}

bool PassiveInflation::relax(Eigen::Matrix3Xd& x, double s_from, double s_to, InflationOutcome& out) {
  mechanics::NodeState state = m_model.system->rest_state();
  state.x = x;
  mechanics::QuasiStaticOptions qs;
  qs.load_steps = std::max(1, int(std::ceil(4 * (s_to - s_from))));
  qs.residual_tol = kRelaxationResidual;
  qs.max_iterations = kRelaxationStepsPerQuarter;
  if (m_log)
    qs.progress = [this, s_from, s_to](long steps, double residual) {
      *m_log << "  inflation: dynamic relaxation from " << 100 * s_from << " % to " << 100 * s_to
             << " % of the load: " << steps << " steps, residual " << residual << std::endl;
    };
  const mechanics::LoadPath path = [](double s) { return mechanics::ForceInputs{s, {}, {}}; };
  mechanics::QuasiStaticResult r;
  try {
    r = mechanics::solve_quasi_static(*m_model.system, m_mesh.mesh, state, qs, path, s_from, s_to);
  } catch (const Error&) {
    r.converged = false;  // the relaxation's own state check (an element inverted on the way)
  }
  out.relaxation_steps += r.iterations;
  if (m_log)
    *m_log << "  inflation: Newton stalled; dynamic relaxation from " << 100 * s_from << " % to " << 100 * s_to
           << " % of the load: " << r.iterations << " steps, residual " << r.residual
           << (r.converged ? "" : " (not converged)") << std::endl;
  if (!r.converged || !physical(state.x, out)) return false;
  // Newton refines the relaxed state to simulation.residual_tol at the same load.
  const mechanics::NewtonStats refined = newton(state.x, s_to, s_to, 0, 1.0, out);
  if (m_log)
    *m_log << "  inflation: Newton refined the relaxed state: "
           << (refined.converged ? "converged" : "did not converge") << " in " << refined.iterations << " iterations"
           << std::endl;
  if (!refined.converged) return false;
  x = std::move(state.x);
  return true;
}

bool PassiveInflation::solve(Eigen::Matrix3Xd& x, double s_from, double s_to, int max_cuts, double first_increment,
                             InflationOutcome& out) {
  Eigen::Matrix3Xd y = x;
  const bool fallback = m_relaxation_fallback && max_cuts > 0;
  const int cuts = fallback ? std::min(max_cuts, kCutsBeforeRelaxation) : max_cuts;
  const mechanics::NewtonStats st = newton(y, s_from, s_to, cuts, first_increment, out);
  const bool ok = st.converged || (fallback && relax(y, st.reached, s_to, out));
  if (!ok || !physical(y, out)) return false;
  x = std::move(y);
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
