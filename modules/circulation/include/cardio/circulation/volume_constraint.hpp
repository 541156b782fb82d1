#pragma once
/// @file volume_constraint.hpp
/// Cavity volume, its gradient with respect to the mesh nodes, the consistent pressure force, and
/// the exact volume constraint of Promayon, Baconnier & Puech 1996 ("Physically-based deformations
/// constrained in displacements and volume", Eurographics '96, sec. 3.2 and 3.4).
///
/// Volume (sec. 3.4.1): V(X) = 1/6 sum_k x_k0 . (x_k1 x x_k2) over the closed triangulated
/// cavity surface (meshing::CavitySurface: endocardium + lid fan; the lid centre is the mean of
/// the rim nodes, so its gradient is shared equally by them). Evaluated with coordinates relative
/// to the surface centroid (V and its gradient are translation invariant for a closed surface),
/// which keeps round-off relative to V, not to |x|^3.
///
/// Projection (sec. 3.2, 3.4.2), one per step, mass-weighted:
///   X = X_free + phi M^-1 g,   g = free . grad V(X_free)  (fixed components zeroed, sec. 3.3),
///   V(X_free + phi d) = V_target,  d = M^-1 g.
/// Every triangle's vertices are linear in phi, so V(phi) = c0 + c1 phi + c2 phi^2 + c3 phi^3
/// exactly, with per triangle (a_i = x_i(X_free), b_i = d_i):
///   c0 = a0.(a1 x a2),  c1 = b0.(a1 x a2) + a0.(b1 x a2) + a0.(a1 x b2),
///   c2 = a0.(b1 x b2) + b0.(a1 x b2) + b0.(b1 x a2),  c3 = b0.(b1 x b2)   (all / 6);
/// c1 = g.M^-1 g > 0. phi is the real root nearest zero (cubic.hpp).
///
/// Pressure. A uniform pressure p on the cavity wall does the virtual work p dV = p g.dx, so its
/// nodal forces are p g (add_pressure_forces; the lid's share goes to the rim). The projection
/// moves the nodes by phi M^-1 g in a step of length dt; in semi-implicit Euler (Promayon's
/// scheme, x += dt v, v += dt M^-1 f) a force F moves them by dt^2 M^-1 F, so the constraint force
/// is F = (phi / dt^2) g: the cavity pressure is p = phi / dt^2 [kPa] (phi in mg/mm, dt in ms;
/// positive when the blood pushes the wall out). Velocities are corrected with the position
/// change (v += phi M^-1 g / dt) and then projected onto the tangent of the constraint,
/// g(X).v = 0 (v += nu M^-1 g, nu the velocity multiplier; RATTLE's velocity stage). In general
/// the pressure is the normal impulse of the step over dt, summed over the projections of the
/// step: p = sum (phi / dt + nu) / dt. That holds for velocity Verlet too, which projects twice
/// per step (after the drift, where x moved by dt^2/2 M^-1 F so phi / dt^2 is half of p, and
/// after the second half kick, where nu supplies the other half).
#include <Eigen/Core>
#include <cstdint>
#include <vector>

#include "cardio/meshing/voxel_mesh.hpp"

namespace cardio::circulation {

class Windkessel;

/// Gradient of a cavity volume with respect to mesh node positions: a sparse 3 x n_nodes matrix
/// stored as the list of nodes (cavity.nodes, in that order) and their 3-vectors [mm^2].
struct VolumeGradient {
  std::vector<std::int32_t> nodes;
  Eigen::Matrix3Xd grad;  ///< column k = dV/dx of mesh node nodes[k]
};

/// Enclosed volume [mm^3] (centroid-relative evaluation of Promayon's sum).
double cavity_volume_mm3(const meshing::CavitySurface& cavity, const Eigen::Matrix3Xd& x);

/// dV/dx for every mesh node of the cavity surface, the lid centre's share split equally onto
/// the rim nodes.
VolumeGradient volume_gradient(const meshing::CavitySurface& cavity, const Eigen::Matrix3Xd& x);

/// The volume [mm^3] and dV/dx at x in one pass over the surface: the numbers of cavity_volume_mm3
/// and volume_gradient, for a caller that needs both (the beat's filling steps).
struct VolumeAndGradient {
  double volume_mm3 = 0;
  VolumeGradient gradient;
};
VolumeAndGradient volume_and_gradient(const meshing::CavitySurface& cavity, const Eigen::Matrix3Xd& x);

/// f += p dV/dx: the nodal forces of a uniform cavity pressure p [kPa] on the closed surface,
/// lid included (work-conjugate to the volume, hence consistent with the projection: at
/// equilibrium the projection's pressure equals the applied one). p > 0 pushes the wall outward.
void add_pressure_forces(const meshing::CavitySurface& cavity, const Eigen::Matrix3Xd& x, double pressure_kPa,
                         Eigen::Matrix3Xd& f);
/// The same with the gradient at the current positions already in hand.
void add_pressure_forces(const VolumeGradient& gradient, double pressure_kPa, Eigen::Matrix3Xd& f);

/// Result of one projection.
struct ProjectionResult {
  double phi = 0;                  ///< position multiplier [mg/mm]
  double velocity_multiplier = 0;  ///< nu [mg/(mm ms)] (0 if velocities were not projected)
  double volume_free_mm3 = 0;      ///< V(X_free)
  double volume_mm3 = 0;           ///< V(X) after the projection
  double max_displacement = 0;     ///< max |phi M^-1 g| over the nodes [mm]
  /// Normal impulse of this projection per unit gradient, phi/dt + nu [kPa ms]; the cavity
  /// pressure of a step is the sum over its projections divided by dt.
  double impulse(double dt) const { return phi / dt + velocity_multiplier; }
  /// Pressure if this is the only projection of the step: (phi/dt + nu)/dt [kPa].
  double pressure_kPa(double dt) const { return impulse(dt) / dt; }
};

/// Promayon's exact volume projection of one cavity: x (3 x n_nodes, positions X_free on entry)
/// is moved to V = target_mm3. mass: lumped nodal masses [mg] (n_nodes). free_mask: 3 x n_nodes,
/// 1 where a component is free and 0 where a Dirichlet constraint fixes it (those components do
/// not move); an empty matrix means all free. If v is given (3 x n_nodes) it is corrected by the
/// position change / dt and projected to g.v = 0 (free components only). Errors (cardio::Error):
/// sizes, a non-positive or non-finite target or dt, no free component on the surface, no real
/// root (the target cannot be reached along the gradient).
ProjectionResult project_volume(const meshing::CavitySurface& cavity, const Eigen::VectorXd& mass,
                                const Eigen::Matrix3Xd& free_mask, double target_mm3, double dt, Eigen::Matrix3Xd& x,
                                Eigen::Matrix3Xd* v = nullptr);

/// Several cavities projected in turn (cavity c to targets_mm3[c]). Sequential projection is exact
/// only if they share no mesh node (the LV and RV endocardia of a voxel mesh do not: the septum
/// lies between them); shared nodes are an error naming both cavities and the count.
std::vector<ProjectionResult> project_volumes(const std::vector<meshing::CavitySurface>& cavities,
                                              const Eigen::VectorXd& mass, const Eigen::Matrix3Xd& free_mask,
                                              const std::vector<double>& targets_mm3, double dt, Eigen::Matrix3Xd& x,
                                              Eigen::Matrix3Xd* v = nullptr);

/// Result of the implicitly coupled ejection step.
struct CoupledResult {
  ProjectionResult projection;
  double pressure_mmHg = 0;  ///< cavity pressure over the step, phi/dt^2 (= the Windkessel's p_cav)
  double outflow = 0;        ///< Q = (V_begin - V_end) / dt [mL/ms]
};

/// Ejection step coupled implicitly (monolithically) to a Windkessel, for the semi-implicit Euler
/// scheme (one projection per step, pressure phi/dt^2). Unknowns phi and the constant outflow Q
/// of the step satisfy both
///   V(X_free + phi M^-1 g) = V_begin - Q dt    and    phi/dt^2 = p_cav(t + dt; Q) = A + B Q,
/// the Windkessel's exact end-of-step pressure (Windkessel::end_of_step_pressure). Eliminating Q
/// leaves a cubic in phi whose linear coefficient c1 + 1000/(B dt k) (k = kPa per mmHg, 1000 mm^3
/// per mL) is larger than the pure constraint's: stable for any dt, unlike the explicit coupling
/// (pressure load P + Z_c Q_previous), which is stable only for dt < max_explicit_impedance_step.
/// The Windkessel itself is not advanced: call windkessel.advance(dt, result.outflow) (the beat
/// machine's update does it) so that its pressure matches the one used here. Velocities, if
/// given, get the position change / dt (no tangent projection: the volume is meant to change).
CoupledResult project_volume_windkessel(const meshing::CavitySurface& cavity, const Eigen::VectorXd& mass,
                                        const Eigen::Matrix3Xd& free_mask, const Windkessel& windkessel,
                                        double volume_begin_mL, double dt, Eigen::Matrix3Xd& x,
                                        Eigen::Matrix3Xd* v = nullptr);

/// The cavity volume along the projection direction of Promayon's scheme, for couplings that solve
/// for the multiplier themselves (the closed loop, closed_loop_coupling.hpp): from the positions
/// X_free given at construction, V(phi) = V(X_free + phi M^-1 g) is the exact cubic of the header.
class VolumePath {
 public:
  /// Same inputs and errors as project_volume (x: X_free, not changed here).
  VolumePath(const meshing::CavitySurface& cavity, const Eigen::VectorXd& mass, const Eigen::Matrix3Xd& free_mask,
             const Eigen::Matrix3Xd& x);
  double volume_mm3(double phi) const;  ///< V(phi)
  double slope_mm3(double phi) const;   ///< dV/dphi (c1 = g.M^-1 g > 0 at phi = 0)
  /// c_k of V(phi) = c0 + c1 phi + c2 phi^2 + c3 phi^3 [mm^3 / (mg/mm)^k].
  double coefficient(int k) const { return m_c[k]; }
  /// x += phi M^-1 g on the cavity's nodes, v += the same / dt if given; the largest displacement [mm].
  double move(double phi, double dt, Eigen::Matrix3Xd& x, Eigen::Matrix3Xd* v = nullptr) const;

 private:
  const meshing::CavitySurface& m_cavity;
  Eigen::Matrix3Xd m_direction;  ///< M^-1 g per surface point
  double m_c[4] = {0, 0, 0, 0};
};

/// Largest dt [ms] for which the explicit coupling through the characteristic impedance (a
/// pressure load Z_c Q with Q from the previous step, a lagged damper on the volume mode) is
/// stable: 2 / (Z_c g.M^-1 g), Z_c in kPa ms/mm^3. Infinite when Z_c = 0.
double max_explicit_impedance_step(const meshing::CavitySurface& cavity, const Eigen::VectorXd& mass,
                                   const Eigen::Matrix3Xd& free_mask, const Eigen::Matrix3Xd& x,
                                   double impedance_mmHg_ms_per_mL);

/// Unit conversions at the circulation boundary.
inline constexpr double kMm3PerMl = 1000.0;

}  // namespace cardio::circulation
