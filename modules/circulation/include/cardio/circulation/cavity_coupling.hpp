#pragma once
/// @file cavity_coupling.hpp
/// The cavities of a beating heart coupled to their circulation: each cavity's beat machine
/// (beat.hpp) commands, for every time step, a follower pressure (filling), Promayon's exact volume
/// projection (isovolumic phases) or the implicit Windkessel ejection (volume_constraint.hpp). The
/// mechanics sees kPa and mm^3, the beat machines mmHg and mL: this class is the one place where
/// they meet. One step: set_time(t) -> add_forces / project (inside the integrator) -> update().
#include <Eigen/Core>
#include <optional>
#include <string>
#include <vector>

#include "cardio/circulation/afterload_calibration.hpp"
#include "cardio/circulation/beat.hpp"
#include "cardio/circulation/blood_fill.hpp"
#include "cardio/circulation/closed_loop_coupling.hpp"
#include "cardio/circulation/volume_constraint.hpp"
#include "cardio/circulation/windkessel.hpp"
#include "cardio/core/binary.hpp"
#include "cardio/meshing/voxel_mesh.hpp"

namespace cardio::circulation {

/// One cavity in the beat: its phase machine and afterload.
struct CavityCirculation {
  std::string name;
  BeatParams beat;
  WindkesselParams windkessel;
};

/// The cavities in a closed-loop circulation instead of each in its own Windkessel: the loop's
/// parameters and initial state, and the cavities that are its 3-D ventricles (by name; empty: the
/// loop's 0-D ventricle).
struct ClosedLoopCirculation {
  ClosedLoopParams params;
  ClosedLoopState initial;
  std::string left_ventricle, right_ventricle;
  std::optional<FillTarget> fill;  ///< the blood volume found beat by beat for this LV EDP (blood_fill.hpp)
  /// the systemic arteries' R and C found beat by beat for these aortic pressures (afterload_calibration.hpp)
  std::optional<AfterloadTarget> afterload;
};

/// A beat that overran its period (BeatOverrun) in cavity `cavity`: the run stops there.
struct Overrun {
  std::size_t cavity = 0;
  std::string message;
};

/// A last beat without statistics: cavity `cavity` was still contracting or ejecting at the end.
struct UnfinishedBeat {
  std::size_t cavity = 0;
  int beat = 0;
  Phase phase = Phase::filling;
  double t_ms = 0;
};

class CavityCoupling {
 public:
  /// surfaces[c] carries circulation[c] (not owned; they outlive this object). The beat machines
  /// start at t = 0 from the volumes at `rest`; the last beat ends at t_end_ms. With `loop`, the
  /// cavities are its 3-D ventricles (each circulation[c] names one; its Windkessel is not used) and
  /// the loop's valves decide their phases (BeatCycle::observe).
  CavityCoupling(const std::vector<CavityCirculation>& circulation, std::vector<const meshing::CavitySurface*> surfaces,
                 const Eigen::Matrix3Xd& rest, double t_end_ms, const ClosedLoopCirculation* loop = nullptr);

  /// The commands for the step that starts at t (call before each step and after a restore).
  void set_time(double t);
  /// f += the follower pressures of the cavities that are filling, at positions x. Where x are the
  /// positions of the last end_of_step_volumes_mL call (the next step's forces), that call's
  /// volume gradient is used: one pass over the surface fewer per filling step.
  void add_forces(const Eigen::Matrix3Xd& x, Eigen::Matrix3Xd& f) const;
  /// The volume projections of the isovolumic and ejecting cavities (mass: lumped nodal masses,
  /// free_mask: the unconstrained components, dt: the step).
  void project(const Eigen::VectorXd& mass, const Eigen::Matrix3Xd& free_mask, double dt, Eigen::Matrix3Xd& x,
               Eigen::Matrix3Xd& v);
  /// The cavity volumes at x [mL] (a wall folded through itself gives a non-positive or NaN one).
  std::vector<double> volumes_mL(const Eigen::Matrix3Xd& x) const;
  /// The same at the end of a step whose positions x last changed in project(): a projected
  /// cavity's volume is the one its projection computed at those positions (the same function of
  /// the same x, one pass over its surface fewer per step); any other cavity's comes with its
  /// gradient at x, kept for the next step's add_forces.
  std::vector<double> end_of_step_volumes_mL(const Eigen::Matrix3Xd& x);
  /// Advance every beat machine to t with the step's volumes and pressures. A beat that overran
  /// its period is returned (the last one, if several), the other cavities are still advanced.
  std::optional<Overrun> update(double t, const std::vector<double>& volumes_mL, double dt);

  /// End every cavity's last beat at the end of the run (BeatCycle::finish); the first cavity whose
  /// last beat has no statistics, if any.
  std::optional<UnfinishedBeat> finish();

  const std::vector<BeatCycle>& cycles() const { return m_cycles; }
  /// The closed loop, if the cavities are in one.
  const ClosedLoopCoupling* closed_loop() const { return m_loop ? &*m_loop : nullptr; }
  /// Add blood to the closed loop's vessels between steps (ClosedLoopCoupling::add_blood).
  void add_blood(double volume_mL);
  /// Replace the closed loop's systemic arteries' R and C between steps (afterload_calibration.hpp).
  void set_systemic_arteries(const VesselParams& p);
  /// The pressure downstream of cavity c's outflow valve [mmHg]: its Windkessel's, or the loop's
  /// systemic / pulmonary arteries.
  double arterial_pressure_mmHg(std::size_t c) const;
  const meshing::CavitySurface& surface(std::size_t c) const { return *m_surfaces[c]; }
  std::size_t size() const { return m_cycles.size(); }

  void save(BinaryWriter& out) const;
  void restore(BinaryReader& in);

 private:
  std::vector<const meshing::CavitySurface*> m_surfaces;
  std::vector<BeatCycle> m_cycles;
  std::vector<CavityCommand> m_command;                ///< of the current step
  std::vector<double> m_impulse;                       ///< isovolumic: sum of the step's projection impulses [kPa ms]
  std::vector<CoupledResult> m_coupled;                ///< ejection: the step's coupled projection
  std::vector<std::optional<double>> m_projected_mm3;  ///< the volume after the step's last projection, if any
  /// dV/dx of each unprojected cavity at the end of the last step. Dropped by project() and
  /// restore(), which move the nodes; used only for the same array with the same first node.
  std::vector<std::optional<VolumeGradient>> m_end_gradient;
  const double* m_end_positions = nullptr;
  Eigen::Vector3d m_end_first_node = Eigen::Vector3d::Zero();
  bool end_gradient_valid_at(const Eigen::Matrix3Xd& x) const;
  void drop_end_gradients();
  std::optional<ClosedLoopCoupling> m_loop;
  std::vector<int> m_ventricle;  ///< closed loop: the loop ventricle (0 LV, 1 RV) of each cavity
};

}  // namespace cardio::circulation
