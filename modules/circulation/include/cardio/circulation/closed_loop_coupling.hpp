#pragma once
/// @file closed_loop_coupling.hpp
/// The 3-D ventricles of a beating heart in the closed-loop circulation (closed_loop.hpp), coupled
/// implicitly as Regazzoni et al. 2022 (J Comput Phys 457:111083, sec. 3, "volume-consistent"
/// coupling) do: in every step the ventricular pressures p = (p_LV, p_RV) are the unknowns of
///   3-D cavity c:    V_c(X_free + phi_c M^-1 g_c) = V_c^n + dt net_c(p),   phi_c = p_c dt^2
///   0-D ventricle c: V0_c + p_c / E_c(t + dt)     = V_c^n + dt net_c(p)
/// where net_c(p) is the loop's backward-Euler net valve flow of the step with the ventricular
/// pressures held at p (ClosedLoop::trial_step, with its exact 2x2 derivative) and V_c(phi) the exact
/// cubic of Promayon's projection (volume_constraint.hpp: p = phi / dt^2 is the cavity pressure of
/// the semi-implicit Euler step). Newton on p, started from the last step's pressures. The loop is
/// then advanced with the same p, so each 3-D cavity's volume equals the loop's ventricle volume to
/// the Newton tolerance, and the blood volume (loop compartments + 3-D cavities) is conserved.
/// A ventricle without a 3-D cavity (an LV-only mesh) is the loop's 0-D elastance.
#include <Eigen/Core>
#include <array>

#include "cardio/circulation/closed_loop.hpp"
#include "cardio/core/binary.hpp"
#include "cardio/meshing/voxel_mesh.hpp"

namespace cardio::circulation {

class ClosedLoopCoupling {
 public:
  /// ventricles[0] (LV) and [1] (RV): the 3-D cavity surfaces, or nullptr for a 0-D ventricle (not
  /// both). The initial state's 3-D ventricle volumes are replaced by the cavities' volumes at `rest`,
  /// and the blood that changes is taken from (or given to) the systemic veins, so that the loop holds
  /// the blood volume of `initial`.
  ClosedLoopCoupling(const ClosedLoopParams& params, ClosedLoopState initial,
                     std::array<const meshing::CavitySurface*, 2> ventricles, const Eigen::Matrix3Xd& rest);

  /// The step from loop time t to t + dt: solve for the pressures and move the 3-D cavities' free
  /// nodes (x: X_free on entry; v gets the position change / dt). Does not advance the loop.
  /// volumes_begin_mL: the 3-D ventricles' volumes at the start of the step (0-D: ignored).
  /// Returns each 3-D ventricle's end-of-step volume [mm^3] (the path's exact cubic at the solved
  /// pressure; 0 for a 0-D ventricle), so that callers need not sum the surface again.
  /// Throws cardio::Error when Newton does not converge (names the step).
  Eigen::Vector2d project(const Eigen::VectorXd& mass, const Eigen::Matrix3Xd& free_mask, double dt,
                          const Eigen::Vector2d& volumes_begin_mL, Eigen::Matrix3Xd& x, Eigen::Matrix3Xd& v);
  /// Advance the loop by dt with the pressures of the last project().
  VentricleFlows advance(double dt);

  /// The ventricular pressures of the last step [mmHg] (LV, RV).
  const Eigen::Vector2d& pressures_mmHg() const { return m_pressure; }
  /// Newton iterations of the last project().
  int iterations() const { return m_iterations; }
  const ClosedLoop& loop() const { return m_loop; }
  bool is_3d(int ventricle) const { return m_ventricles[std::size_t(ventricle)] != nullptr; }
  /// Blood volume: the loop's compartments with each 3-D ventricle's volume replaced by the cavity's
  /// (at positions x) [mL].
  double blood_volume_mL(const Eigen::Matrix3Xd& x) const;
  /// Add blood to the loop's vessels (ClosedLoop::add_to_vessels; negative: remove it), between steps.
  void add_blood(double volume_mL);
  /// Replace the systemic arteries' R and C between steps (ClosedLoop::set_systemic_arteries).
  void set_systemic_arteries(const VesselParams& p) {
    m_loop.set_systemic_arteries(p.resistance_mmHg_ms_per_mL, p.compliance_mL_per_mmHg);
  }
  /// The blood added so far [mL]: blood_volume_mL() - added_blood_mL() is conserved.
  double added_blood_mL() const { return m_added_blood; }

  void save(BinaryWriter& out) const;
  void restore(BinaryReader& in);

 private:
  std::array<const meshing::CavitySurface*, 2> m_ventricles;
  ClosedLoop m_loop;
  Eigen::Vector2d m_pressure = Eigen::Vector2d::Zero();
  int m_iterations = 0;
  double m_added_blood = 0;  ///< [mL]
};

}  // namespace cardio::circulation
