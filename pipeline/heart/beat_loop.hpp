#pragma once
/// @file beat_loop.hpp
/// The time stepping of a beat, and nothing else (MFEM's operator/stepper split): the forces of
/// the heart (the myocardium with the active tension of the current time, the cavities' follower
/// pressures) and its projections (constraints, cavity volumes), semi-implicit Euler, mass-
/// proportional damping, and the stable step re-estimated as the law stiffens. Outputs, analyses
/// and checkpoints are observers of the loop (beat_observers.hpp), driven by run_heart_beat.
#include <Eigen/Core>
#include <optional>

#include "cardio/activation/twitch.hpp"
#include "cardio/circulation/cavity_coupling.hpp"
#include "cardio/core/binary.hpp"
#include "cardio/mechanics/system.hpp"
#include "cardio/meshing/voxel_mesh.hpp"
#include "config/heart_config.hpp"
#include "heart/heart_model.hpp"
#include "heart/tension_calibration.hpp"

namespace cardio::pipeline {

/// Everything of a beat that can fail on the inputs, done before any output is written: the model
/// (selectors of the boundary), the cavities named in the circulation, the activation times (pacing
/// sites inside the myocardium, an activation image on the element grid).
struct BeatSetup {
  HeartModel model;
  std::vector<const meshing::CavitySurface*> cavities;  ///< one per sim.circulation entry
  Eigen::VectorXd activation_time;                      ///< per element, after each beat's onset [ms]
};

BeatSetup prepare_heart_beat(const HeartSimulation& sim, const meshing::VoxelMesh& mesh, std::ostream* log);

class BeatLoop {
 public:
  /// Simulated time of the stable-step re-estimation [ms] (the exponential law stiffens as the wall
  /// contracts; the estimate at rest is not enough).
  static constexpr double kDtCheckInterval = 50;
  /// ... and while the wall stiffens (the step shrank or the tension rose since the last estimate) [ms].
  static constexpr double kDtCheckIntervalStiffening = 10;
  /// Largest growth of the step from one estimate to the next.
  static constexpr double kMaxDtGrowth = 1.1;
  /// Lanczos steps (stiffness products) of the first stable-step estimate (random start) and of
  /// the re-estimates (warm-started from the last Ritz vector, so a few follow the slowly
  /// stiffening law). In two beats of the default case, 12 warm steps came within 2.1 % of the
  /// converged frequency at every estimate, where the 20 power iterations used before were up to
  /// 11 % low (docs/performance.md, "Tangent symmetrisation and Lanczos step estimates").
  static constexpr int kColdIterations = 60, kWarmIterations = 12;

  /// At rest at t = 0. `setup` (and `mesh`) must outlive the loop. A user-given simulation.dt above
  /// the stability estimate at rest is refused unless simulation.force_dt is set.
  BeatLoop(const HeartSimulation& sim, const meshing::VoxelMesh& mesh, BeatSetup& setup);

  bool done() const { return m_t >= m_t_end - 1e-9; }
  /// The inputs of the step from time(): every element's Ta and the cavities' commands. Call it
  /// first in each iteration: the outputs of time() (frames) show this Ta.
  void begin_step();
  /// One step from time() to time() + dt(). A beat that overran its period is returned: stop there.
  /// A blow-up (a non-finite or non-positive cavity volume) throws cardio::Error naming it.
  std::optional<circulation::Overrun> step();

  /// Whether every cavity's EDV changed by less than its convergence tolerance between its last
  /// two finished beats.
  bool periodic() const;
  /// Whether a beat began with this step and every cavity's EDV changed by less than its
  /// convergence tolerance between the two beats before it (and activation.target, if given, is
  /// reached, and circulation.closed_loop.fill and .afterload): the run may stop here, at the onset, as
  /// simulation.stop_when_periodic asks.
  bool reached_periodic_state() const;
  /// The largest relative EDV change between the last two finished beats over the cavities (NaN
  /// before two beats).
  double largest_edv_change() const;

  /// End the cavities' last beats at the end of the run (the loop takes no step after it).
  std::optional<circulation::UnfinishedBeat> finish() { return m_cavities.finish(); }

  double time() const { return m_t; }
  double t_end() const { return m_t_end; }
  double dt() const { return m_dt; }
  std::int64_t steps() const { return m_steps; }
  const mechanics::NodeState& state() const { return m_state; }
  /// Ta of every element at the last begin_step() [kPa].
  const Eigen::VectorXd& active_tension() const { return m_Ta; }
  const circulation::CavityCoupling& cavities() const { return m_cavities; }
  /// Index of the LV cavity (sim.analysis.lv_cavity) in cavities(); 0 without one.
  std::size_t lv() const { return m_lv; }
  const meshing::VoxelMesh& mesh() const { return m_mesh; }
  /// The peak tension's calibration to activation.target, if one is given.
  const TensionCalibration* tension_calibration() const { return m_calibration ? &*m_calibration : nullptr; }
  /// The tension calibration has measured every finished LV beat: it measures a beat when the next
  /// one begins, so a run that ends mid-beat has not measured its last one (and a one-beat run none).
  bool tension_measured_every_beat() const {
    return m_calibration && m_calibration->history().size() >= m_cavities.cycles()[m_lv].beats().size();
  }
  /// The closed loop's blood volume found for circulation.closed_loop.fill, if one is given.
  const circulation::BloodFill* blood_fill() const { return m_fill ? &*m_fill : nullptr; }
  /// The systemic arteries' R and C found for circulation.closed_loop.afterload, if one is given.
  const circulation::AfterloadCalibration* afterload() const { return m_afterload ? &*m_afterload : nullptr; }

  void save(BinaryWriter& out) const;
  void restore(BinaryReader& in);

 private:
  /// The stable step now: Lanczos, warm-started from the last estimate's vector (m_mode).
  double stable_dt();
  /// The stable step expected at the next estimate, `ahead` ms from now: while it shrinks, its last
  /// change extrapolated geometrically (records `stable` as the last estimate).
  double stable_dt_ahead(double stable, double ahead);
  /// The stable-step re-estimate of step(): the step, and when to look again.
  void update_time_step();
  /// The inputs of the force evaluations: the Ta of the last begin_step() (no pressure loads in the
  /// system: the cavities add theirs).
  mechanics::ForceInputs inputs() const { return {1.0, {m_Ta.data(), std::size_t(m_Ta.size())}, {}}; }
  void check_cavity_volumes(const std::vector<double>& volumes_mL);
  /// After the LV's beat ends: the next beat's peak tension from activation.target.
  void calibrate_tension();
  /// At the LV's contraction onset: blood added or removed for circulation.closed_loop.fill.
  void fill_blood();
  /// After every step: the systemic pressures observed; at the LV's onset the arteries' R and C for
  /// circulation.closed_loop.afterload.
  void calibrate_afterload();
  void set_peak_tension(double kPa);

  const HeartSimulation& m_sim;
  const meshing::VoxelMesh& m_mesh;
  mechanics::MassSpringSystem& m_system;
  circulation::CavityCoupling m_cavities;
  activation::Twitch m_twitch;
  std::optional<TensionCalibration> m_calibration;
  std::optional<circulation::BloodFill> m_fill;
  std::optional<circulation::AfterloadCalibration> m_afterload;
  Eigen::VectorXd m_activation_time;  ///< absolute: first onset + the element's delay [ms]
  Eigen::VectorXd m_Ta;
  mechanics::NodeState m_state;
  Eigen::Matrix3Xd m_mode;  ///< the last stable-step estimate's vector: the next one starts there
  std::size_t m_lv = 0;
  double m_t = 0, m_t_end = 0, m_dt = 0, m_next_dt_check = kDtCheckInterval, m_velocity_decay = 1;
  double m_ta_max_at_check = 0;                       ///< largest Ta at the last stable-step estimate [kPa]
  double m_stable_dt_at_check = 0, m_t_at_check = 0;  ///< the last estimate [ms] and its time [ms]
  std::int64_t m_steps = 0;
};

}  // namespace cardio::pipeline
