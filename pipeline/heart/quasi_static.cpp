#include "heart/quasi_static.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <optional>
#include <sstream>
#include <utility>

#include "cardio/core/error.hpp"
#include "cardio/mechanics/integrators.hpp"
#include "cardio/mechanics/myocardium.hpp"
#include "cardio/mechanics/newton.hpp"
#include "heart/guess_smoothing.hpp"
#include "heart/rest_location.hpp"

namespace cardio::pipeline {
namespace {

using mechanics::Quad;
using nlohmann::json;

/// Final position of a located probe: trilinear in its element, else its nearest node.
Eigen::Vector3d probe_position(const ProbeLocation& loc, const meshing::VoxelMesh& m, const Eigen::Matrix3Xd& x) {
  return loc.element < 0 ? Eigen::Vector3d(x.col(loc.node)) : interpolate_in_element(m, loc.element, loc.xi, x);
}

json probe(const Probe& pr, const ProbeLocation& loc, const meshing::VoxelMesh& m, const Eigen::Matrix3Xd& x) {
  const Eigen::Vector3d final_x = probe_position(loc, m, x);
  std::ostringstream method;
  if (loc.element >= 0)
    method << "trilinear in element " << loc.element;
  else
    method << "nearest node " << loc.node << " at " << loc.distance << " mm (the point is outside the mesh)";
  json j = {{"name", pr.name},
            {"reference_mm", {pr.point[0], pr.point[1], pr.point[2]}},
            {"final_mm", {final_x[0], final_x[1], final_x[2]}},
            {"displacement_mm", {final_x[0] - pr.point[0], final_x[1] - pr.point[1], final_x[2] - pr.point[2]}},
            {"method", method.str()}};
  if (loc.element < 0) j["outside_mesh_mm"] = loc.distance;
  if (pr.reference_z) {
    const double dz_ref = *pr.reference_z - pr.point[2];
    j["published_z_mm"] = *pr.reference_z;
    j["error_z_mm"] = final_x[2] - *pr.reference_z;
    j["error_percent_of_displacement"] = 100.0 * std::abs(final_x[2] - *pr.reference_z) / std::abs(dz_ref);
  }
  return j;
}

}  // namespace

std::vector<ProbeLocation> locate_probes(const std::vector<Probe>& probes, const meshing::VoxelMesh& m,
                                         std::ostream* log) {
  // Farther than a voxel diagonal from every node, a point is in no element nor next to one: a
  // nearest node there would report the motion of some other part of the heart.
  const double diagonal = m.grid.spacing.norm();
  const Eigen::IOFormat xyz(Eigen::StreamPrecision, Eigen::DontAlignCols, ", ", ", ", "", "", "(", ")");
  std::vector<ProbeLocation> out;
  for (const Probe& pr : probes) {
    ProbeLocation loc;
    if (const auto in = containing_element(m, pr.point)) {
      loc.element = in->element;
      loc.xi = in->xi;
    } else {
      loc.distance = (m.mesh.rest.colwise() - pr.point).colwise().norm().minCoeff(&loc.node);
      if (!(loc.distance <= diagonal))
        CARDIO_FAIL(pr.where << ": probe '" << pr.name << "' at " << pr.point.transpose().format(xyz)
                             << " mm is outside the mesh, " << loc.distance << " mm from its nearest node "
                             << m.mesh.rest.col(loc.node).transpose().format(xyz) << " mm; expected a point in the "
                             << "myocardium or within one voxel diagonal (" << diagonal << " mm) of it");
      if (log)
        *log << "probe " << pr.name << ": outside the mesh, " << loc.distance
             << " mm from its nearest node, whose motion it reports\n";
    }
    out.push_back(loc);
  }
  return out;
}

namespace {

/// Iterations and costs of a solve: of one load step, or summed over the steps by add().
struct SolveStats {
  bool converged = true;
  long iterations = 0;
  int cuts = 0;
  long factorisations = 0, krylov_iterations = 0;
  double residual = 0, assemble_seconds = 0, solve_seconds = 0;
  long smoothing_iterations = 0;  ///< relaxation of a coarse-mesh guess (coarse_start.hpp)
  void add(const SolveStats& step) {
    converged = step.converged;
    iterations += step.iterations;
    cuts += step.cuts;
    factorisations += step.factorisations;
    krylov_iterations += step.krylov_iterations;
    smoothing_iterations += step.smoothing_iterations;
    residual = step.residual;
    assemble_seconds += step.assemble_seconds;
    solve_seconds += step.solve_seconds;
  }
};

/// One load step by Newton's method (mechanics/newton.hpp), from load fraction s_from to s_to.
SolveStats newton_step(mechanics::NewtonSolver& newton, const HeartSimulation& sim, mechanics::NodeState& state,
                       const mechanics::LoadPath& path, double s_from, double s_to, int max_cuts, std::ostream* log) {
  mechanics::NewtonOptions o;
  o.residual_tol = sim.residual_tol;
  o.update_tol = sim.update_tol;
  o.max_iterations = int(sim.max_iterations);
  o.max_cuts = max_cuts;
  o.linear_solver = sim.linear_solver;
  o.reuse_factorisation = sim.reuse_factorisation;
  const mechanics::NewtonStats st = newton.solve(state, path, s_from, s_to, o, log);
  // Designated initialisers: a field added to SolveStats cannot shift the others.
  return {.converged = st.converged,
          .iterations = st.iterations,
          .cuts = st.cuts,
          .factorisations = st.factorisations,
          .krylov_iterations = st.krylov_iterations,
          .residual = st.residual,
          .assemble_seconds = st.assemble_seconds,
          .solve_seconds = st.solve_seconds};
}

/// One load step by dynamic relaxation (mechanics/integrators.hpp), from load fraction s_from to s_to.
SolveStats relaxation_step(const mechanics::MassSpringSystem& sys, const mechanics::HexMesh& mesh,
                           const HeartSimulation& sim, mechanics::NodeState& state, const mechanics::LoadPath& path,
                           double s_from, double s_to) {
  mechanics::QuasiStaticOptions qs;
  qs.load_steps = 1;  // one of the caller's load steps
  qs.residual_tol = sim.residual_tol;
  qs.max_iterations = sim.max_iterations;
  const mechanics::QuasiStaticResult r = mechanics::solve_quasi_static(sys, mesh, state, qs, path, s_from, s_to);
  return {.converged = r.converged, .iterations = r.iterations, .residual = r.residual};
}

/// summary.json of a quasi-static run (the caller adds the timing and the SIMD build).
json quasi_static_summary(const HeartSimulation& sim, const meshing::VoxelMesh& m, const Eigen::Matrix3Xd& x,
                          const std::vector<ProbeLocation>& probe_at, const SolveStats& totals) {
  const mechanics::HexMesh& mesh = m.mesh;
  json probes = json::array();
  for (std::size_t p = 0; p < sim.probes.size(); ++p) probes.push_back(probe(sim.probes[p], probe_at[p], m, x));
  json cavities = json::array();
  for (const auto& c : m.cavities)
    cavities.push_back({{"name", c.name},
                        {"initial_volume_mL", meshing::cavity_volume(c, mesh.rest) / 1000.0},
                        {"final_volume_mL", meshing::cavity_volume(c, x) / 1000.0}});
  const double v0 = mechanics::element_volumes(mesh, mesh.rest).sum(), v1 = mechanics::element_volumes(mesh, x).sum();
  return {{"mode", name_of(sim.mode)},
          {"converged", totals.converged},
          {"solver", name_of(sim.solver)},
          {"iterations", totals.iterations},
          {"relative_residual", totals.residual},
          {"load_step_cuts", totals.cuts},
          {"factorisations", totals.factorisations},
          {"krylov_iterations", totals.krylov_iterations},
          {"smoothing_iterations", totals.smoothing_iterations},
          {"tangent_assembly_s", totals.assemble_seconds},
          {"linear_solve_s", totals.solve_seconds},
          {"load_steps", sim.load_steps},
          {"element_count", mesh.n_elements()},
          {"node_count", mesh.n_nodes()},
          {"tissue_volume_change_percent", 100.0 * (v1 - v0) / v0},
          {"probes", probes},
          {"cavities", cavities}};
}

[[noreturn]] void fail_unconverged(const HeartSimulation& sim, const SolveStats& totals) {
  const bool newton = sim.solver == StaticSolver::newton;
  CARDIO_FAIL("quasi-static solve ("
              << name_of(sim.solver)
              << ") did not converge: the iteration limit simulation.max_iterations = " << sim.max_iterations
              << (newton ? " per increment was reached after simulation.load_step_cuts = " +
                               std::to_string(sim.load_step_cuts) + " halvings"
                         : std::string(" was reached"))
              << ", with the relative residual at " << totals.residual << " (simulation.residual_tol "
              << sim.residual_tol << "); raise simulation.max_iterations or simulation.load_steps, or lower the loads");
}

/// Newton at the whole load from `guess`, smoothed first (guess_smoothing.hpp; no load steps, no
/// cuts). True if it converged to a physical state; else `state` is back at rest, and the iterations
/// spent count in `totals`.
bool solve_from_guess(mechanics::NewtonSolver& newton, const mechanics::MassSpringSystem& sys,
                      const HeartSimulation& sim, const meshing::VoxelMesh& m, const Eigen::Matrix3Xd& guess,
                      const mechanics::LoadPath& path, mechanics::NodeState& state, SolveStats& totals,
                      std::ostream* log) {
  const Eigen::Matrix3Xd rest = state.x;
  state.x = guess;
  totals.smoothing_iterations = smooth_guess(sys, m.mesh, state, path, log).iterations;
  SolveStats r = newton_step(newton, sim, state, path, 0.0, 1.0, 0, log);
  const bool physical = r.converged && mechanics::worst_element(m.mesh, state.x).J > 0;
  if (log)
    *log << "from the coarse-mesh guess: " << r.iterations << " iterations, residual " << std::scientific
         << std::setprecision(2) << r.residual << std::defaultfloat
         << (physical ? "" : " (did not converge to a physical state: solving from rest in load steps)") << std::endl;
  r.converged = physical;
  totals.add(r);
  if (physical) return true;
  totals.converged = true;
  state.x = rest;
  return false;
}

HeartRunResult finish(const HeartSimulation& sim, const meshing::VoxelMesh& m, const HeartModel& model,
                      const std::vector<ProbeLocation>& probe_at, mechanics::NodeState state,
                      const std::vector<double>& Ta, const SolveStats& totals,
                      std::chrono::steady_clock::time_point t0) {
  HeartRunResult out;
  out.active_tension = Ta;  // converged: the last increment's, at load fraction 1
  out.summary = quasi_static_summary(sim, m, state.x, probe_at, totals);
  out.summary["simd_isa"] = std::string(model.myocardium().simd_isa());
  out.summary["simulate_time_s"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  out.state = std::move(state);
  if (!totals.converged) fail_unconverged(sim, totals);
  return out;
}

}  // namespace

HeartRunResult run_heart_simulation(const HeartSimulation& sim, const meshing::VoxelMesh& m, std::ostream* log,
                                    const Eigen::Matrix3Xd* guess) {
  const auto t0 = std::chrono::steady_clock::now();
  const mechanics::HexMesh& mesh = m.mesh;
  // Before any work: a probe outside the mesh fails the run here, not after the solve.
  const std::vector<ProbeLocation> probe_at = locate_probes(sim.probes, m, log);
  mechanics::Loads loads;  // the pressures at load fraction 1
  for (const auto& p : sim.pressures) loads.pressures.push_back({select_quads(p.surface, m), p.pressure});
  HeartModel model = build_heart_model(sim, m, 1.0, std::move(loads));
  const mechanics::MassSpringSystem& sys = *model.system;

  mechanics::NodeState state = sys.rest_state();
  std::vector<double> Ta(std::size_t(mesh.n_elements()), 0.0), activation(std::size_t(mesh.n_elements()), 0.0);
  // Pressures (the load factor) and active tension ramp together with the load fraction s, also
  // in the solvers' own increments (Newton's cuts).
  const mechanics::LoadPath path = [&](double s) {
    std::fill(Ta.begin(), Ta.end(), s * sim.active_tension);
    std::fill(activation.begin(), activation.end(), sim.active_tension > 0 ? s : 0.0);
    return mechanics::ForceInputs{s, Ta, activation};
  };
  std::unique_ptr<mechanics::NewtonSolver> newton;
  if (sim.solver == StaticSolver::newton) newton = std::make_unique<mechanics::NewtonSolver>(sys, mesh);
  SolveStats totals;
  if (guess && newton && solve_from_guess(*newton, sys, sim, m, *guess, path, state, totals, log))
    return finish(sim, m, model, probe_at, std::move(state), Ta, totals, t0);
  // The config's load steps stay an outer loop: each ends with a log line and the check of a
  // physical state (an inverted element stops the run there), and Newton's own stepping would
  // start with the whole load. Within a step the solver ramps the inputs along `path`.
  for (int k = 1; k <= sim.load_steps && totals.converged; ++k) {
    const double s_from = double(k - 1) / sim.load_steps, s = double(k) / sim.load_steps;
    const SolveStats r = newton ? newton_step(*newton, sim, state, path, s_from, s, sim.load_step_cuts, log)
                                : relaxation_step(sys, mesh, sim, state, path, s_from, s);
    totals.add(r);
    if (log) {
      std::ostringstream line;
      line << "load step " << k << "/" << sim.load_steps << ": " << r.iterations << " iterations, residual "
           << std::scientific << std::setprecision(2) << r.residual << (r.converged ? "" : " (not converged)");
      *log << line.str() << std::endl;
    }
    if (!r.converged) break;
    std::ostringstream when;
    when << "quasi-static load step " << k << "/" << sim.load_steps << " (pressures at " << 100 * s
         << " %, active tension " << s * sim.active_tension << " kPa)";
    check_physical_state(m, state.x, when.str(),
                         "the load is too large for this mesh and material (lower loads.pressures or active.tension), "
                         "or the steps too coarse (raise simulation.load_steps)");
  }
  return finish(sim, m, model, probe_at, std::move(state), Ta, totals, t0);
}

}  // namespace cardio::pipeline
