#pragma once
/// @file integrators.hpp
/// Time integration (docs/architecture.md): Stoermer / velocity-Verlet (the scheme of
/// Bourguignon & Cani 2000), semi-implicit Euler (Promayon et al. 1996), a stable-step estimate,
/// and a quasi-static solver (dynamic relaxation with kinetic damping).
#include <Eigen/Core>
#include <functional>

#include "cardio/mechanics/system.hpp"

namespace cardio::mechanics {

enum class Scheme { verlet, semi_implicit_euler };

/// Forces at (x, v, t) written into f (overwritten).
using ForceFn =
    std::function<void(const Eigen::Matrix3Xd& x, const Eigen::Matrix3Xd& v, double t, Eigen::Matrix3Xd& f)>;
/// Constraint projection at time t (may be empty).
using ProjectFn = std::function<void(Eigen::Matrix3Xd& x, Eigen::Matrix3Xd& v, double t)>;

/// One step from t to t + dt. Verlet expects s.f = forces at (s.x, s.v, t) on entry and leaves
/// the forces at t + dt (one force evaluation per step). Damping forces are evaluated with the
/// half-step velocity, which keeps the scheme explicit.
void step(Scheme scheme, NodeState& s, double t, double dt, const ForceFn& forces, const ProjectFn& project);

/// Largest angular frequency of the linearised free system at x [rad/ms] with the internal forces
/// at `in` (the active tension stiffens the fibres): `iterations` finite-difference stiffness
/// products of a restarted Lanczos iteration on M^-1 K (deterministic start vector). A lower bound
/// that is exact once converged (src/max_frequency.cpp).
double estimate_max_frequency(const MassSpringSystem& sys, const Eigen::Matrix3Xd& x, int iterations = 60,
                              const ForceInputs& in = {});

/// The same, warm-started: if `vector` holds a 3 x n field with free components it is the start
/// vector (e.g. the previous call's, or a blowing-up velocity field), otherwise the deterministic
/// random start is used; on return it holds the Ritz vector for the next call. A few iterations
/// from a good start vector track the largest frequency of a slowly changing (stiffening) state.
double estimate_max_frequency(const MassSpringSystem& sys, const Eigen::Matrix3Xd& x, int iterations,
                              Eigen::Matrix3Xd* vector, const ForceInputs& in = {});

/// Critical time step of central differences with viscous damping tau (damping force tau k v):
/// dt = (2 / w)(sqrt(1 + z^2) - z), z = w tau / 2 [ms].
double stable_time_step(double max_frequency, double damping_time);

/// Stops with a clear error if any node is non-finite or moved farther than `max_move` [mm]
/// in one step (an exploding simulation), naming the step, node and an element containing it.
void check_state(const MassSpringSystem& sys, const HexMesh& mesh, const NodeState& s, double dt, long step_index,
                 double t);

struct QuasiStaticOptions {
  int load_steps = 1;             ///< load fraction raised in equal increments (to s_to)
  double residual_tol = 1e-8;     ///< stop when max free residual <= tol * force scale
  long max_iterations = 1000000;  ///< per load step
  double dt = 0;                  ///< pseudo time step [ms]; 0: estimated at each load step
  double dt_safety = 0.8;         ///< fraction of the estimated stable step when dt = 0
  int check_every = 10;
  /// dt = 0: the stable step is re-estimated during a load step (warm-started Lanczos,
  /// `reestimate_iterations` iterations) at most every `reestimate_interval` iterations, once some
  /// node has moved more than `reestimate_move` x the smallest edge since the last estimate.
  /// Stiffening laws raise the frequencies as the load step proceeds.
  long reestimate_interval = 100;
  double reestimate_move = 0.25;
  int reestimate_iterations = 12;
  /// Rollback: if a node moves farther than `rollback_move` x the smallest edge in one step, or
  /// the state becomes non-finite, the solver restores the last kinetic-damping restart (a state at
  /// rest), halves dt (or takes the new estimate if smaller) and continues. After `max_rollbacks`
  /// in one load step it stops with the state check's error.
  double rollback_move = 0.25;
  int max_rollbacks = 20;
  /// Called every `progress_interval` iterations with the iterations so far and the last residual
  /// (a long relaxation is not silent); none if empty.
  std::function<void(long iterations, double residual)> progress;
  long progress_interval = 10000;
};

struct QuasiStaticResult {
  bool converged = false;
  double min_dt = 0;         ///< smallest pseudo time step used [ms]
  long iterations = 0;       ///< total over load steps
  double residual = 0;       ///< final relative residual (of the state reached, also when not converged)
  double force_scale = 0;    ///< [mN]
  int failed_load_step = 0;  ///< the load step that used up max_iterations (0: converged)
  int estimates = 0;         ///< stable-step estimates made
  int rollbacks = 0;         ///< restarts from a checkpoint with a smaller step
};

/// Dynamic relaxation with kinetic damping: Verlet steps; whenever the kinetic energy passes a
/// peak the positions step back to the estimated peak and the velocities are zeroed. With
/// dt = 0 the stable step is estimated at the start of every load step (at the projected state)
/// and re-estimated during it as the nodes move (warm-started), since stiffening laws
/// (exponential springs) raise the frequencies; a step that still blows up is rolled back to the
/// last restart with half the step (options above). Converged when the largest free-DOF force
/// falls below residual_tol times the largest external load or reaction. Deterministic: the
/// result does not depend on the thread count.
///
/// The load fraction goes from s_from (the state s.x is converged there) to s_to in
/// options.load_steps equal steps; `path` gives the inputs of each (by default the loads scaled by
/// the fraction), so that pressures and active tension can ramp together.
QuasiStaticResult solve_quasi_static(const MassSpringSystem& sys, const HexMesh& mesh, NodeState& s,
                                     const QuasiStaticOptions& options, const LoadPath& path = proportional_load,
                                     double s_from = 0, double s_to = 1);

/// Kinetic energy [mN mm] (deterministic sum).
double kinetic_energy(const NodeState& s);

}  // namespace cardio::mechanics
