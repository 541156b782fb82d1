#include "cardio/mechanics/integrators.hpp"

#include <cmath>

#include "cardio/core/error.hpp"
#include "cardio/core/parallel.hpp"

namespace cardio::mechanics {

void step(Scheme scheme, NodeState& s, double t, double dt, const ForceFn& forces, const ProjectFn& project) {
  const std::int64_t n = s.x.cols();
  if (scheme == Scheme::verlet) {
    // Velocity Verlet (Stoermer): half kick, drift, project, force, half kick.
    parallel_for(n, [&](std::int64_t i) {
      s.v.col(i) += (0.5 * dt / s.mass[i]) * s.f.col(i);
      s.x.col(i) += dt * s.v.col(i);
    });
    if (project) project(s.x, s.v, t + dt);
    forces(s.x, s.v, t + dt, s.f);
    parallel_for(n, [&](std::int64_t i) { s.v.col(i) += (0.5 * dt / s.mass[i]) * s.f.col(i); });
    if (project) project(s.x, s.v, t + dt);
  } else {
    // Semi-implicit (symplectic) Euler: v from the forces at t, then x from the new v.
    forces(s.x, s.v, t, s.f);
    parallel_for(n, [&](std::int64_t i) {
      s.v.col(i) += (dt / s.mass[i]) * s.f.col(i);
      s.x.col(i) += dt * s.v.col(i);
    });
    if (project) project(s.x, s.v, t + dt);
  }
}

double kinetic_energy(const NodeState& s) {
  return 0.5 * deterministic_sum(s.x.cols(), [&](std::int64_t i) { return s.mass[i] * s.v.col(i).squaredNorm(); });
}

double stable_time_step(double w, double tau) {
  CARDIO_CHECK(w > 0 && std::isfinite(w), "cannot estimate a stable time step (max frequency " << w << ")");
  const double z = 0.5 * w * tau;
  return 2.0 / w * (std::sqrt(1 + z * z) - z);
}

void check_state(const MassSpringSystem& sys, const HexMesh& mesh, const NodeState& s, double dt, long step_index,
                 double t) {
  const double max_move = 0.5 * sys.min_edge();
  const std::int64_t bad = parallel_first(s.x.cols(), [&](std::int64_t i) {
    return !s.x.col(i).allFinite() || !s.v.col(i).allFinite() || s.v.col(i).norm() * dt > max_move;
  });
  if (bad < 0) return;
  std::int64_t element = -1;
  for (std::size_t e = 0; e < mesh.hexes.size() && element < 0; ++e)
    for (std::int32_t nd : mesh.hexes[e])
      if (nd == bad) element = static_cast<std::int64_t>(e);
  const bool finite = s.x.col(bad).allFinite() && s.v.col(bad).allFinite();
  CARDIO_FAIL("simulation became unstable at step "
              << step_index << " (t = " << t << " ms): node " << bad << " (in element " << element << ") "
              << (finite ? "moved farther than half an element in one step (|v| dt = " +
                               std::to_string(s.v.col(bad).norm() * dt) + " mm)"
                         : std::string("has a non-finite position or velocity (NaN/inf)"))
              << "; the time step " << dt
              << " ms is too large for the stiffness: leave the time step to the "
                 "stability estimate (dt unset) or lower dt_safety");
}

QuasiStaticResult solve_quasi_static(const MassSpringSystem& sys, const HexMesh& mesh, NodeState& s,
                                     const QuasiStaticOptions& o, const LoadPath& path, double s_from, double s_to) {
  CARDIO_CHECK(o.dt >= 0 && o.dt_safety > 0 && o.dt_safety <= 1, "quasi-static solver: bad time step settings");
  CARDIO_CHECK(o.load_steps >= 1, "quasi-static solver needs at least one load step");
  CARDIO_CHECK(path, "quasi-static solver needs a load path");
  CARDIO_CHECK(o.rollback_move > 0 && o.max_rollbacks >= 0 && o.reestimate_iterations >= 1,
               "quasi-static solver: bad rollback / re-estimate settings");
  QuasiStaticResult res;
  const std::int64_t n = s.x.cols();
  const Eigen::Matrix3Xd& free = sys.free_mask();
  const double h = sys.min_edge();
  const double tau = sys.internal().max_damping_time();
  Eigen::Matrix3Xd fext(3, n);
  Eigen::Matrix3Xd mode;        // the stable-step estimate's Ritz vector, carried over (warm start)
  Eigen::Matrix3Xd x_estimate;  // positions at the last estimate
  Eigen::Matrix3Xd x_restart;   // checkpoint: positions at the last restart from rest
  ForceInputs in;               // the inputs of the current load step
  auto estimate = [&](const Eigen::Matrix3Xd& x, int iterations) {
    ++res.estimates;
    x_estimate = x;
    return o.dt_safety * stable_time_step(estimate_max_frequency(sys, x, iterations, &mode, in), tau);
  };
  // Largest free-DOF force relative to the largest load or reaction, at the forces s.f of s.x.
  auto measure_residual = [&](double lf) {
    fext.setZero(3, n);
    sys.add_loads(s.x, lf, fext);
    const double r_free =
        parallel_max(n, [&](std::int64_t i) { return s.f.col(i).cwiseProduct(free.col(i)).cwiseAbs().maxCoeff(); });
    const double r_fixed = parallel_max(n, [&](std::int64_t i) {
      return s.f.col(i).cwiseProduct(Eigen::Vector3d::Ones() - free.col(i)).cwiseAbs().maxCoeff();
    });
    res.force_scale = std::max({fext.cwiseAbs().maxCoeff(), r_fixed, 1e-300});
    res.residual = r_free / res.force_scale;
  };
  long next_progress = o.progress_interval;
  for (int k = 1; k <= o.load_steps; ++k) {
    const double step_fraction = static_cast<double>(k) / o.load_steps;
    const double fraction = k == o.load_steps ? s_to : s_from + (s_to - s_from) * step_fraction;
    in = path(fraction);
    const double lf = in.load_factor;
    s.v.setZero();
    sys.project(s.x, s.v, lf, 0.0);
    auto forces = [&](const Eigen::Matrix3Xd& x, const Eigen::Matrix3Xd& v, double, Eigen::Matrix3Xd& f) {
      sys.forces(x, v, in, f);
    };
    auto project = [&](Eigen::Matrix3Xd& x, Eigen::Matrix3Xd& v, double) { sys.project(x, v, lf, 0.0); };
    forces(s.x, s.v, 0, s.f);
    // Cold start (60 iterations) the first time, warm start from the previous mode afterwards.
    double dt = o.dt > 0 ? o.dt : estimate(s.x, mode.cols() == n ? 2 * o.reestimate_iterations : 60);
    double dt_cap = dt;  // after a rollback, the re-estimates may not raise dt above this
    res.min_dt = k == 1 ? dt : std::min(res.min_dt, dt);
    x_restart = s.x;
    long last_estimate = 0;
    int rollbacks = 0;
    double ke_prev = 0;
    bool converged = false;
    for (long it = 1; it <= o.max_iterations; ++it) {
      step(Scheme::verlet, s, 0.0, dt, forces, project);
      ++res.iterations;
      // Blow-up (a mode above the stability limit): restart from the checkpoint at a smaller step.
      const double vmax = parallel_max(n, [&](std::int64_t i) {
        return s.x.col(i).allFinite() && s.v.col(i).allFinite() ? s.v.col(i).norm() : INFINITY;
      });
      if (!(vmax * dt <= o.rollback_move * h)) {
        if (rollbacks == o.max_rollbacks) {
          check_state(sys, mesh, s, dt, res.iterations, 0.0);
          CARDIO_FAIL("quasi-static solver: unstable at step " << res.iterations << " after " << rollbacks
                                                               << " restarts with a halved time step (dt = " << dt
                                                               << " ms)");
        }
        ++rollbacks;
        ++res.rollbacks;
        // The blowing-up velocity field is close to the offending mode: the warm start for the estimate.
        if (s.v.allFinite()) mode = s.v;
        s.x = x_restart;
        s.v.setZero();
        project(s.x, s.v, 0.0);
        forces(s.x, s.v, 0, s.f);
        const double dt_est = o.dt > 0 ? dt : estimate(s.x, 2 * o.reestimate_iterations);
        dt = std::min(0.5 * dt, dt_est);
        dt_cap = dt;
        res.min_dt = std::min(res.min_dt, dt);
        last_estimate = it;
        ke_prev = 0;
        continue;
      }
      const double ke = kinetic_energy(s);
      if (ke < ke_prev) {
        // Kinetic damping: the kinetic energy has peaked. Step back to the estimated peak
        // (x -= 1.5 dt v - dt^2/2 M^-1 f, as in Topping & Khan's kinetic DR) and restart from
        // rest. Without the step back, modes near the stability limit re-trigger the reset
        // every few steps and the slow modes stall.
        parallel_for(n, [&](std::int64_t i) {
          s.x.col(i) -= (1.5 * dt * s.v.col(i) - (0.5 * dt * dt / s.mass[i]) * s.f.col(i)).cwiseProduct(free.col(i));
        });
        s.v.setZero();
        forces(s.x, s.v, 0, s.f);
        ke_prev = 0;
        x_restart = s.x;
        // Stiffening: re-estimate the stable step once the nodes have moved enough (warm start).
        if (o.dt == 0 && it - last_estimate >= o.reestimate_interval) {
          const double moved = parallel_max(n, [&](std::int64_t i) { return (s.x.col(i) - x_estimate.col(i)).norm(); });
          if (moved > o.reestimate_move * h) {
            dt = std::min(estimate(s.x, o.reestimate_iterations), dt_cap);
            res.min_dt = std::min(res.min_dt, dt);
            last_estimate = it;
          }
        }
      } else {
        ke_prev = ke;
      }
      if (it % o.check_every != 0) continue;
      check_state(sys, mesh, s, dt, res.iterations, 0.0);
      measure_residual(lf);
      if (o.progress && res.iterations >= next_progress) {
        o.progress(res.iterations, res.residual);
        next_progress = res.iterations + o.progress_interval;
      }
      if (res.residual <= o.residual_tol) {
        converged = true;
        break;
      }
    }
    if (!converged) {
      // The residual is measured every check_every iterations only: measure the state reached,
      // so that the report never shows the 0 of a residual not yet computed.
      if (o.max_iterations % o.check_every != 0) measure_residual(lf);
      res.converged = false;
      res.failed_load_step = k;
      return res;
    }
  }
  s.v.setZero();
  res.converged = true;
  return res;
}

}  // namespace cardio::mechanics
