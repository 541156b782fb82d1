#include "heart_run.hpp"

#include <Eigen/LU>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <sstream>

#include "cardio/core/error.hpp"
#include "cardio/mechanics/myocardium.hpp"
#include "cardio/mechanics/integrators.hpp"
#include "cardio/mechanics/newton.hpp"

namespace cardio::pipeline {
namespace {

using mechanics::Quad;
using nlohmann::json;

/// Final position of the material point initially at p: trilinear interpolation in the element
/// containing p (voxel elements are parallelepipeds, so the local coordinates are affine in p),
/// else the nearest node.
json probe(const Probe& pr, const meshing::VoxelMesh& m, const Eigen::Matrix3Xd& x) {
  const imaging::Grid& g = m.grid;
  const Eigen::Vector3d ci = g.continuous_index(pr.point);
  const double tol = 1e-9;
  Eigen::Vector3d final_x;
  std::string method;
  for (int dk = -1; dk <= 1 && method.empty(); ++dk)
    for (int dj = -1; dj <= 1 && method.empty(); ++dj)
      for (int di = -1; di <= 1 && method.empty(); ++di) {
        const std::int64_t i = std::llround(ci[0]) + di, j = std::llround(ci[1]) + dj, k = std::llround(ci[2]) + dk;
        if (!g.contains(i, j, k)) continue;
        const auto it = std::lower_bound(m.voxel.begin(), m.voxel.end(), g.linear(i, j, k));
        if (it == m.voxel.end() || *it != g.linear(i, j, k)) continue;
        const auto& hex = m.mesh.hexes[std::size_t(it - m.voxel.begin())];
        const Eigen::Vector3d X0 = m.mesh.rest.col(hex[0]);
        Eigen::Matrix3d J;  // VTK order: nodes 1, 3, 4 are the +xi, +eta, +zeta neighbours of node 0
        J << m.mesh.rest.col(hex[1]) - X0, m.mesh.rest.col(hex[3]) - X0, m.mesh.rest.col(hex[4]) - X0;
        const Eigen::Vector3d xi = J.partialPivLu().solve(pr.point - X0);
        if ((xi.array() < -tol).any() || (xi.array() > 1 + tol).any()) continue;
        static constexpr int kCorner[8][3] = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0},
                                              {0, 0, 1}, {1, 0, 1}, {1, 1, 1}, {0, 1, 1}};
        final_x.setZero();
        for (int n = 0; n < 8; ++n) {
          double w = 1;
          for (int a = 0; a < 3; ++a) w *= kCorner[n][a] ? xi[a] : 1 - xi[a];
          final_x += w * x.col(hex[std::size_t(n)]);
        }
        method = "trilinear in element " + std::to_string(it - m.voxel.begin());
      }
  if (method.empty()) {
    Eigen::Index nearest;
    const double d = (m.mesh.rest.colwise() - pr.point).colwise().norm().minCoeff(&nearest);
    final_x = x.col(nearest);
    std::ostringstream os;
    os << "nearest node " << nearest << " at " << d << " mm (the point is outside the mesh)";
    method = os.str();
  }
  json j = {{"name", pr.name},
            {"reference_mm", {pr.point[0], pr.point[1], pr.point[2]}},
            {"final_mm", {final_x[0], final_x[1], final_x[2]}},
            {"displacement_mm", {final_x[0] - pr.point[0], final_x[1] - pr.point[1], final_x[2] - pr.point[2]}},
            {"method", method}};
  if (pr.reference_z) {
    const double dz_ref = *pr.reference_z - pr.point[2];
    j["published_z_mm"] = *pr.reference_z;
    j["error_z_mm"] = final_x[2] - *pr.reference_z;
    j["error_percent_of_displacement"] = 100.0 * std::abs(final_x[2] - *pr.reference_z) / std::abs(dz_ref);
  }
  return j;
}

}  // namespace

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
                       << " mL (must be > 0): the walls have passed through each other. Likely cause: " << likely_cause);
  }
}

HeartModel build_heart_model(const HeartSimulation& sim, const meshing::VoxelMesh& m, double mass_scaling) {
  const mechanics::HexMesh& mesh = m.mesh;
  mechanics::GuccioneLaw law;
  law.C = sim.material.C;
  law.b_f = sim.material.b_f;
  law.b_t = sim.material.b_t;
  law.b_fs = sim.material.b_fs;
  law.bulk = sim.material.bulk;
  law.hourglass_factor = sim.material.hourglass_factor;
  auto forces = std::make_unique<mechanics::GuccioneForces>(
      mesh, std::vector<mechanics::GuccioneLaw>(m.labels_used.size(), law), sim.material.element);
  HeartModel model;
  model.myocardium = forces.get();
  model.system = std::make_unique<mechanics::MassSpringSystem>(mesh, std::move(forces), mass_scaling * m.mass);
  mechanics::MassSpringSystem& sys = *model.system;

  // Boundary conditions (Promayon projection of prescribed positions).
  for (const auto& f : sim.fixed) sys.constraints.push_back(fixed_nodes(nodes_of(select_quads(f, m)), 0b111));
  for (const auto& s : sim.sliding) {
    const Eigen::Vector3d normal = s.tag.empty() ? s.normal : m.axis.base_normal;
    Eigen::Index axis;
    if (normal.cwiseAbs().maxCoeff(&axis) < 1 - 1e-9)
      CARDIO_FAIL(s.where << ": sliding needs a plane normal along x, y or z (the constraint fixes one "
                             "coordinate); the normal is (" << normal.transpose() << ")");
    sys.constraints.push_back(fixed_nodes(nodes_of(select_quads(s, m)), static_cast<std::uint8_t>(1u << axis)));
  }
  sys.update_constraint_mask();
  if (sim.pericardium)
    sys.foundations.push_back({select_quads(sim.pericardium->surface, m), sim.pericardium->stiffness, sim.pericardium->normal_only});
  return model;
}

namespace {

struct StepResult {
  bool converged = false;
  long iterations = 0;
  int cuts = 0;
  long factorisations = 0, krylov_iterations = 0;
  double residual = 0, assemble_seconds = 0, solve_seconds = 0;
};

struct StaticTotals {
  bool converged = true;
  long iterations = 0;
  int cuts = 0;
  long factorisations = 0, krylov_iterations = 0;
  double residual = 0, assemble_seconds = 0, solve_seconds = 0;
  void add(const StepResult& r) {
    converged = r.converged;
    iterations += r.iterations;
    cuts += r.cuts;
    factorisations += r.factorisations;
    krylov_iterations += r.krylov_iterations;
    residual = r.residual;
    assemble_seconds += r.assemble_seconds;
    solve_seconds += r.solve_seconds;
  }
};

/// One load step by Newton's method (mechanics/newton.hpp), from load fraction s_from to s_to.
StepResult newton_step(mechanics::NewtonSolver& newton, const HeartSimulation& sim, mechanics::NodeState& state,
                       const mechanics::LoadSetter& set_load, double s_from, double s_to, std::ostream* log) {
  mechanics::NewtonOptions o;
  o.residual_tol = sim.residual_tol;
  o.update_tol = sim.update_tol;
  o.max_iterations = int(sim.max_iterations);
  o.max_cuts = sim.load_step_cuts;
  o.linear_solver = sim.linear_solver == "lu"   ? mechanics::LinearSolver::lu
                    : sim.linear_solver == "cg" ? mechanics::LinearSolver::cg
                                                : mechanics::LinearSolver::cholmod;
  o.reuse_factorisation = sim.reuse_factorisation;
  const mechanics::NewtonStats st = newton.solve(state, set_load, s_from, s_to, o, log);
  return {st.converged,   st.iterations, st.cuts,           st.factorisations, st.krylov_iterations,
          st.residual,    st.assemble_seconds, st.solve_seconds};
}

/// One load step by dynamic relaxation (mechanics/integrators.hpp) at load fraction s.
StepResult relaxation_step(const mechanics::MassSpringSystem& sys, const mechanics::HexMesh& mesh,
                           const HeartSimulation& sim, mechanics::NodeState& state,
                           const mechanics::LoadSetter& set_load, double s) {
  set_load(s);
  mechanics::QuasiStaticOptions qs;
  qs.load_steps = 1;  // the steps are taken by the caller, so that pressure and active tension ramp together
  qs.residual_tol = sim.residual_tol;
  qs.max_iterations = sim.max_iterations;
  const mechanics::QuasiStaticResult r = mechanics::solve_quasi_static(sys, mesh, state, qs);
  return {r.converged, r.iterations, 0, 0, 0, r.residual, 0, 0};
}

}  // namespace

HeartRunResult run_heart_simulation(const HeartSimulation& sim, const meshing::VoxelMesh& m, std::ostream* log) {
  const auto t0 = std::chrono::steady_clock::now();
  const mechanics::HexMesh& mesh = m.mesh;
  HeartModel model = build_heart_model(sim, m);
  mechanics::MassSpringSystem& sys = *model.system;
  mechanics::GuccioneForces* guccione = model.myocardium;
  std::vector<mechanics::PressureLoad> full;
  for (const auto& p : sim.pressures) full.push_back({select_quads(p.surface, m), p.pressure});

  mechanics::NodeState state = sys.rest_state();
  std::vector<double> Ta(std::size_t(mesh.n_elements()), 0.0), activation(std::size_t(mesh.n_elements()), 0.0);
  // Pressures and active tension ramp together with the load fraction s.
  const auto set_load = [&](double s) {
    sys.loads.pressures = full;
    for (auto& p : sys.loads.pressures) p.pressure *= s;
    std::fill(Ta.begin(), Ta.end(), s * sim.active_tension);
    std::fill(activation.begin(), activation.end(), sim.active_tension > 0 ? s : 0.0);
    guccione->set_active_tension(Ta, activation);
  };
  set_load(1.0);  // the pattern of the tangent includes the loaded faces
  std::unique_ptr<mechanics::NewtonSolver> newton;
  if (sim.solver == "newton") newton = std::make_unique<mechanics::NewtonSolver>(sys, mesh);
  StaticTotals totals;
  for (int k = 1; k <= sim.load_steps && totals.converged; ++k) {
    const double s = double(k) / sim.load_steps;
    const StepResult r = newton ? newton_step(*newton, sim, state, set_load, double(k - 1) / sim.load_steps, s, log)
                                : relaxation_step(sys, mesh, sim, state, set_load, s);
    totals.add(r);
    if (log) {
      std::ostringstream line;
      line << "load step " << k << "/" << sim.load_steps << ": " << r.iterations << " iterations, residual "
           << std::scientific << std::setprecision(2) << r.residual << (r.converged ? "" : " (not converged)");
      *log << line.str() << std::endl;
    }
    if (!r.converged) break;
    std::ostringstream when;
    when << "quasi-static load step " << k << "/" << sim.load_steps << " (pressures at " << 100 * s << " %, active tension "
         << s * sim.active_tension << " kPa)";
    check_physical_state(m, state.x, when.str(),
                         "the load is too large for this mesh and material (lower loads.pressures or active.tension), "
                         "or the steps too coarse (raise simulation.load_steps)");
  }
  const bool converged = totals.converged;
  const long iterations = totals.iterations;
  const double residual = totals.residual;

  HeartRunResult out;
  out.active_tension = Ta;
  json probes = json::array();
  for (const auto& p : sim.probes) probes.push_back(probe(p, m, state.x));
  json cavities = json::array();
  for (const auto& c : m.cavities)
    cavities.push_back({{"name", c.name},
                        {"initial_volume_mL", meshing::cavity_volume(c, mesh.rest) / 1000.0},
                        {"final_volume_mL", meshing::cavity_volume(c, state.x) / 1000.0}});
  const double v0 = mechanics::element_volumes(mesh, mesh.rest).sum(), v1 = mechanics::element_volumes(mesh, state.x).sum();
  out.summary = {{"mode", sim.mode},
                 {"converged", converged},
                 {"solver", sim.solver},
                 {"iterations", iterations},
                 {"relative_residual", residual},
                 {"load_step_cuts", totals.cuts},
                 {"factorisations", totals.factorisations},
                 {"krylov_iterations", totals.krylov_iterations},
                 {"tangent_assembly_s", totals.assemble_seconds},
                 {"linear_solve_s", totals.solve_seconds},
                 {"load_steps", sim.load_steps},
                 {"element_count", mesh.n_elements()},
                 {"node_count", mesh.n_nodes()},
                 {"tissue_volume_change_percent", 100.0 * (v1 - v0) / v0},
                 {"probes", probes},
                 {"cavities", cavities},
                 {"simulate_time_s", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()}};
  out.state = std::move(state);
  if (!converged)
    CARDIO_FAIL("quasi-static solve (" << sim.solver
                << ") did not converge: the iteration limit simulation.max_iterations = " << sim.max_iterations
                << (newton ? " per increment was reached after simulation.load_step_cuts = " +
                                 std::to_string(sim.load_step_cuts) + " halvings"
                           : std::string(" was reached"))
                << ", with the relative residual at " << residual << " (simulation.residual_tol " << sim.residual_tol
                << "); raise simulation.max_iterations or simulation.load_steps, or lower the loads");
  return out;
}

}  // namespace cardio::pipeline
