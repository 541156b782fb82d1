#include "blocks/experiments.hpp"

#include <chrono>
#include <cmath>
#include <ostream>

#include "blocks/block_geometry.hpp"
#include "blocks/measure.hpp"
#include "cardio/core/error.hpp"
#include "cardio/core/parallel.hpp"
#include "cardio/mechanics/baudet_cube.hpp"
#include "cardio/mechanics/bourguignon_cani.hpp"

namespace cardio::pipeline {
namespace mech = cardio::mechanics;
using Eigen::Vector3d;
using json = nlohmann::json;
using namespace block_geometry;

namespace {

std::vector<mech::Quad> face_quads(const mech::HexMesh& mesh, const std::vector<mech::Quad>& boundary, int axis,
                                   double coordinate) {
  std::vector<mech::Quad> out;
  const double tol = 1e-9 * (1 + std::abs(coordinate));
  for (const mech::Quad& q : boundary) {
    bool on = true;
    for (std::int32_t n : q) on = on && std::abs(mesh.rest(axis, n) - coordinate) <= tol;
    if (on) out.push_back(q);
  }
  return out;
}

mech::DofConstraint constraint(std::vector<std::int32_t> nodes, std::uint8_t mask) {
  mech::DofConstraint c;
  c.nodes = std::move(nodes);
  c.mask = mask;
  return c;
}

}  // namespace

Eigen::Matrix<double, 6, 6> predicted_stiffness(const RunConfig& cfg) {
  if (cfg.element.type == BlockElement::baudet_cube) {
    const auto& c = cfg.material.constants;
    const double E = c.E_fibre, nu = c.nu_cross;
    const double lam = E * nu / ((1 + nu) * (1 - 2 * nu)), mu = E / (2 * (1 + nu));
    Eigen::Matrix<double, 6, 6> C = Eigen::Matrix<double, 6, 6>::Zero();
    C.topLeftCorner<3, 3>().setConstant(lam);
    for (int i = 0; i < 3; ++i) C(i, i) += 2 * mu, C(i + 3, i + 3) = mu;
    return C;
  }
  CARDIO_CHECK(cfg.fibres.kind == mech::FibreField::Kind::uniform, "a prediction needs uniform fibres");
  const mech::HexMesh one = mech::make_block({1, 1, 1, cfg.block.h, Vector3d::Zero()}, cfg.fibres);
  Eigen::Matrix3d R;
  R << one.fibre.col(0), one.sheet.col(0), one.normal(0);
  mech::BCCalibration opt{cfg.element.radial_share, cfg.element.hourglass_factor, cfg.element.volume_terms,
                          cfg.material.law,         cfg.material.exponent,        cfg.element.damping_time};
  mech::BCModuli m = mech::calibrate_bourguignon_cani(cfg.material.constants, opt);
  // The radial springs are tied to the voxel corners, not to the fibre frame: their share
  // (normal coupling r and shear r, docs/calibration.md) is added in the voxel axes.
  const double r = m.radial;
  m.radial = 0;
  Eigen::Matrix<double, 6, 6> C = mech::rotate_voigt(mech::stiffness_voigt(m), R);
  C.topLeftCorner<3, 3>().array() += r;
  C.bottomRightCorner<3, 3>().diagonal().array() += r;
  return C;
}

namespace {

/// The calibrated element of the config: Bourguignon-Cani or Baudet's cube.
std::unique_ptr<mech::InternalForces> block_element(const RunConfig& cfg, const mech::HexMesh& mesh) {
  if (cfg.element.type == BlockElement::bourguignon_cani) {
    mech::BCCalibration opt{cfg.element.radial_share, cfg.element.hourglass_factor, cfg.element.volume_terms,
                            cfg.material.law,         cfg.material.exponent,        cfg.element.damping_time};
    return std::make_unique<mech::BourguignonCaniForces>(
        mesh, std::vector<mech::BCModuli>{mech::calibrate_bourguignon_cani(cfg.material.constants, opt)});
  }
  const auto& c = cfg.material.constants;
  return std::make_unique<mech::BaudetCubeForces>(
      mesh,
      std::vector<mech::BaudetConstants>{mech::calibrate_baudet(
          c.E_fibre, c.nu_cross, cfg.block.h, cfg.element.damping_time, cfg.element.hourglass_factor)},
      cfg.element.corrective_forces);
}

void elongation_conditions(const RunConfig& cfg, const mech::HexMesh& mesh, mech::BoundaryConditions& bc) {
  const mech::BlockSpec& b = cfg.block;
  const ExperimentParams& x = cfg.experiment;
  const int a = x.axis, bb = (a + 1) % 3, cc = (a + 2) % 3;
  if (!x.traction) {
    // Symmetry rollers on the three low faces, the high face of the axis moved along it.
    for (int ax = 0; ax < 3; ++ax) bc.constraints.push_back(constraint(face_nodes(b, ax, false), 1u << ax));
    mech::DofConstraint pull = constraint(face_nodes(b, a, true), 1u << a);
    pull.b[a] = x.strain * length(b, a);
    bc.constraints.push_back(pull);
  } else {
    // Roller on the low face; two pins remove the remaining rigid motions but leave the
    // pulled face free to shear (the coupling of the paper's Fig. 6b).
    bc.constraints.push_back(constraint(face_nodes(b, a, false), 1u << a));
    Eigen::Vector3i origin = Eigen::Vector3i::Zero(), side = Eigen::Vector3i::Zero();
    side[bb] = count(b, bb);
    bc.constraints.push_back(constraint({mech::block_node(b, origin[0], origin[1], origin[2])},
                                        static_cast<std::uint8_t>((1u << bb) | (1u << cc))));
    bc.constraints.push_back(constraint({mech::block_node(b, side[0], side[1], side[2])}, 1u << cc));
    bc.loads.pressures.push_back(
        {face_quads(mesh, mech::boundary_faces(mesh), a, b.origin[a] + length(b, a)), -x.stress});
  }
}

void shear_conditions(const RunConfig& cfg, const mech::HexMesh& mesh, mech::BoundaryConditions& bc) {
  const mech::BlockSpec& b = cfg.block;
  const ExperimentParams& x = cfg.experiment;
  // Every boundary node follows the simple shear u_dir = strain * X_normal.
  std::vector<std::int32_t> nodes;
  for (std::int32_t n = 0; n < mesh.n_nodes(); ++n) {
    const Eigen::Vector3i l = lattice(b, n);
    bool on = false;
    for (int ax = 0; ax < 3; ++ax) on = on || l[ax] == 0 || l[ax] == count(b, ax);
    if (on) nodes.push_back(n);
  }
  mech::DofConstraint c = constraint(nodes, 0b111);
  c.M(x.axis, x.shear_normal) = x.strain;
  c.b[x.axis] = -x.strain * b.origin[x.shear_normal];
  bc.constraints.push_back(c);
}

void inflation_conditions(const RunConfig& cfg, const mech::HexMesh& mesh, mech::BoundaryConditions& bc) {
  const mech::BlockSpec& b = cfg.block;
  const ExperimentParams& x = cfg.experiment;
  // Pressure on every face; three pins remove rigid motions without reactions.
  bc.loads.pressures.push_back({mech::boundary_faces(mesh), x.pressure});
  bc.constraints.push_back(constraint({mech::block_node(b, 0, 0, 0)}, 0b111));
  bc.constraints.push_back(constraint({mech::block_node(b, b.nx, 0, 0)}, 0b110));
  bc.constraints.push_back(constraint({mech::block_node(b, 0, b.ny, 0)}, 0b100));
}

void cantilever_conditions(const RunConfig& cfg, mech::BoundaryConditions& bc) {
  bc.constraints.push_back(constraint(face_nodes(cfg.block, 0, false), 0b111));
  bc.loads.gravity = cfg.experiment.gravity;
}

}  // namespace

ExperimentModel build_model(const RunConfig& cfg) {
  ExperimentModel m;
  m.mesh = mech::make_block(cfg.block, cfg.fibres);
  std::unique_ptr<mech::InternalForces> internal = block_element(cfg, m.mesh);
  Eigen::VectorXd mass = mech::lumped_masses(m.mesh, {cfg.material.density});
  mech::BoundaryConditions bc;  // the experiment's constraints and loads
  switch (cfg.experiment.kind) {
    case ExperimentKind::elongation:
      elongation_conditions(cfg, m.mesh, bc);
      break;
    case ExperimentKind::shear:
      shear_conditions(cfg, m.mesh, bc);
      break;
    case ExperimentKind::inflation:
      inflation_conditions(cfg, m.mesh, bc);
      break;
    case ExperimentKind::cantilever:
      cantilever_conditions(cfg, bc);
      break;
  }
  m.system = std::make_unique<mech::MassSpringSystem>(m.mesh, std::move(internal), std::move(mass), std::move(bc));
  return m;
}

namespace {

const char* experiment_name(ExperimentKind k) {
  switch (k) {
    case ExperimentKind::elongation:
      return "elongation";
    case ExperimentKind::shear:
      return "shear";
    case ExperimentKind::inflation:
      return "inflation";
    case ExperimentKind::cantilever:
      return "cantilever";
  }
  return "?";
}

/// Dynamic relaxation to the static equilibrium; `dt` becomes the smallest pseudo step used.
void relax_to_equilibrium(const RunConfig& cfg, const ExperimentModel& model, ExperimentResult& res, double& dt,
                          double& dt_stable, bool auto_quasi_static, json& run, std::ostream* log) {
  const mech::MassSpringSystem& sys = *model.system;
  const TimeStepParams& step = cfg.solver.time_step;
  mech::QuasiStaticOptions o;
  o.dt = step.dt.value_or(0.0);  // 0: re-estimated at each load step
  o.dt_safety = step.safety;
  o.load_steps = cfg.solver.load_steps;
  o.residual_tol = cfg.solver.residual_tol;
  o.max_iterations = cfg.solver.max_iterations;
  const mech::QuasiStaticResult q = mech::solve_quasi_static(sys, model.mesh, res.state, o);
  if (!q.converged)
    CARDIO_FAIL("quasi-static solve did not converge: the iteration limit solver.max_iterations = "
                << cfg.solver.max_iterations << " was reached in load step " << q.failed_load_step << " of "
                << cfg.solver.load_steps << " with the relative residual at " << q.residual << " (solver.residual_tol "
                << cfg.solver.residual_tol << "); raise solver.max_iterations or solver.load_steps");
  dt = q.min_dt;
  if (auto_quasi_static) dt_stable = dt / step.safety;
  run["iterations"] = q.iterations;
  run["relative_residual"] = q.residual;
  if (log) *log << "quasi-static: converged in " << q.iterations << " iterations, residual " << q.residual << "\n";
}

/// Explicit time stepping to solver.t_end, the loads ramped over solver.ramp_time.
void step_in_time(const RunConfig& cfg, const ExperimentModel& model, ExperimentResult& res, double& dt, json& run,
                  std::ostream* log) {
  const mech::MassSpringSystem& sys = *model.system;
  const long n_steps = static_cast<long>(std::ceil(cfg.solver.t_end / dt - 1e-9));
  dt = cfg.solver.t_end / static_cast<double>(n_steps);
  const double ramp = cfg.solver.ramp_time;
  auto factor = [&](double t) { return ramp > 0 ? std::min(1.0, t / ramp) : 1.0; };
  auto rate = [&](double t) { return ramp > 0 && t < ramp ? 1.0 / ramp : 0.0; };
  auto forces = [&](const Eigen::Matrix3Xd& xx, const Eigen::Matrix3Xd& vv, double t, Eigen::Matrix3Xd& f) {
    sys.forces(xx, vv, factor(t), f);
  };
  auto project = [&](Eigen::Matrix3Xd& xx, Eigen::Matrix3Xd& vv, double t) { sys.project(xx, vv, factor(t), rate(t)); };
  res.state = sys.rest_state(factor(0));
  double t = 0;
  for (long k = 1; k <= n_steps; ++k) {
    mech::step(cfg.solver.scheme, res.state, t, dt, forces, project);
    t = k * dt;
    mech::check_state(sys, model.mesh, res.state, dt, k, t);
  }
  run["steps"] = n_steps;
  run["kinetic_energy_uJ"] = mech::kinetic_energy(res.state);
  if (log) *log << "dynamic: " << n_steps << " steps to t = " << t << " ms\n";
}

}  // namespace

ExperimentResult run_experiment(const RunConfig& cfg, std::ostream* log) {
  const auto t0 = std::chrono::steady_clock::now();
  ExperimentModel model = build_model(cfg);
  const mech::MassSpringSystem& sys = *model.system;
  ExperimentResult res;
  res.state = sys.rest_state(0.0);

  // The stability estimate at rest checks a user-given dt and sets the dynamic step; the
  // quasi-static solver with dt = 0 makes its own estimate at every load step.
  const TimeStepParams& step = cfg.solver.time_step;
  const bool auto_quasi_static = cfg.solver.mode == SolverMode::quasi_static && !step.dt;
  double dt_stable = 0, dt = 0;
  if (!auto_quasi_static) {
    const double w = mech::estimate_max_frequency(sys, res.state.x);
    dt_stable = mech::stable_time_step(w, sys.internal().max_damping_time());
    dt = step.choose(dt_stable);
  }
  if (log) {
    *log << "model: " << model.mesh.n_elements() << " " << sys.internal().name() << " elements, "
         << model.mesh.n_nodes() << " nodes, " << thread_count() << " thread(s)";
    if (!auto_quasi_static) *log << "; stable dt " << dt_stable << " ms, using " << dt << " ms";
    *log << "\n";
  }

  json run;
  if (cfg.solver.mode == SolverMode::quasi_static) {
    relax_to_equilibrium(cfg, model, res, dt, dt_stable, auto_quasi_static, run, log);
  } else {
    step_in_time(cfg, model, res, dt, run, log);
  }
  run["dt_ms"] = dt;
  run["stable_dt_ms"] = dt_stable;
  run["elements"] = model.mesh.n_elements();
  run["nodes"] = model.mesh.n_nodes();
  run["element_type"] = sys.internal().name();
  run["threads"] = thread_count();
  run["wall_time_s"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  res.summary["name"] = cfg.name;
  res.summary["experiment"] = experiment_name(cfg.experiment.kind);
  res.summary["measured"] = measure(cfg, model, res.state);
  res.summary["run"] = run;
  res.summary["elastic_energy_uJ"] = sys.internal().energy(res.state.x);
  res.mesh = std::move(model.mesh);
  return res;
}

}  // namespace cardio::pipeline
