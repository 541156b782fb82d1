#pragma once
/// @file hyperelastic.hpp
/// The Guccione myocardium law (Guccione, McCulloch & Waldman 1991, in the form of Land et al.
/// 2015) reduced onto the axes of the Bourguignon-Cani element, with active fibre tension.
/// Derivation: docs/calibration.md, "Guccione myocardium and active tension on the axes".
///
/// Per element, with the current axis vectors A = [l_f l_s l_n] and the rest lengths r_a along
/// the orthonormal frame [f s n], the right Cauchy-Green tensor in the material frame is
///   C_ab = l_a . l_b / (r_a r_b),   E = (C - I) / 2,
/// exact for every affine deformation (l_a = F L_a). E_aa depends on |l_a| only (an axial
/// spring), E_ab on l_a . l_b (a shear spring between two axes). The element energy is
///   V0 [ C/2 (exp(Q) - 1) + kappa/2 (J - 1)^2 + Ta E_ff ],   J = det A / (r_f r_s r_n),
///   Q = b_f E_ff^2 + b_t (E_ss^2 + E_nn^2 + 2 E_sn^2) + 2 b_fs (E_fs^2 + E_fn^2),
/// and the force on the "+" point of the axes is g = -V0 A D S D, D = diag(1/r), S = dW/dE.
/// Units: mm, ms, kPa, mN.
#include <Eigen/Core>
#include <array>
#include <string_view>
#include <vector>

#include "cardio/mechanics/bourguignon_cani.hpp"
#include "cardio/mechanics/internal_forces.hpp"
#include "cardio/mechanics/mesh.hpp"

namespace cardio::mechanics {

/// Activation-modulated fibre option (Bourguignon & Cani 2000, sec. 6: "non-linear active axial
/// springs, whose stiffness and rest length vary over time"): with activation a in [0, 1],
///   r_f(a) = r_f0 (1 - beta a)             (the fibre rest length of the elastic law),
///   r_s,n(a) = r_s,n0 / sqrt(1 - beta a)   (cross-fibre rest lengths: isochoric, our choice),
///   C(a)   = C (1 + gamma a)               (the stiffness of the whole Guccione term).
/// This is an active-strain law, F = F_e F_a with F_a = diag(1 - beta a, (1 - beta a)^-1/2,
/// (1 - beta a)^-1/2) in the material frame: Q is evaluated on the elastic strain
/// E_e = (F_a^-T C F_a^-1 - I)/2, the volume term on the total J = det F. An unloaded element
/// shortens along f by exactly beta a, whatever kappa.
struct ActiveFibre {
  double beta = 0;   ///< fibre shortening at full activation, 0 <= beta < 1
  double gamma = 0;  ///< relative stiffening at full activation, gamma > -1
};

/// Cross-fibre active stress: fractions of the fibre tension Ta that also act along the sheet and
/// the sheet-normal axes, S += Ta (n_s s0 (x) s0 + n_n n0 (x) n0). Biaxial tests of active
/// myocardium (Lin & Yin 1998, J Biomech Eng 120:504) measured substantial cross-fibre active
/// stress; the fractions per axis are not measured, so both default to 0 (fibre tension only).
struct ActiveCrossFibre {
  double sheet = 0;   ///< n_s, in [0, 1]
  double normal = 0;  ///< n_n, in [0, 1]
};

/// Material constants of one material (defaults: Land et al. 2015, problem 1, with a penalty).
struct GuccioneLaw {
  double C = 2;       ///< [kPa]
  double b_f = 8;     ///< fibre exponent
  double b_t = 2;     ///< transverse exponent (E_ss, E_nn, E_sn)
  double b_fs = 4;    ///< fibre-sheet and fibre-normal shear exponent
  double bulk = 200;  ///< kappa [kPa] of the volume penalty kappa/2 (J - 1)^2
  /// Multiplier of the physical hourglass control (GuccioneHourglass; docs/calibration.md G.7):
  /// 1 = the calibrated values (bending of a voxel matches the continuum), 0 = no control.
  double hourglass_factor = 1;
  /// Scale the material part of the hourglass energy with the law's current stiffening
  /// (1 + gamma a) e^Q of the element (exact energy gradient; the tangent of Guccione grows like e^Q).
  bool hourglass_stiffening = true;
  /// Geometric (initial-stress) part of the hourglass energy, 1/2 int S : dF^T dF over the
  /// element's hourglass field dF: none, or with the elastic stress S (passive + active, not the
  /// volume penalty's pressure; default).
  enum class HourglassStress { none, elastic };
  HourglassStress hourglass_stress = HourglassStress::elastic;
  double damping_time = 0;       ///< tau [ms]: viscous stress tau * (small-strain Guccione moduli) : dE/dt
  ActiveFibre active;            ///< activation-modulated option (off by default)
  ActiveCrossFibre cross_fibre;  ///< Ta fractions on the sheet and sheet-normal axes (sampled-axes element)

  /// Throws cardio::Error naming the first constant out of range.
  void validate() const;
};

/// Energy density [kPa] of the passive law and the volume penalty at the Green-Lagrange strain E
/// of the material frame (J = sqrt(det(I + 2E)); no activation). Continuum reference.
double guccione_energy_density(const GuccioneLaw& law, const Eigen::Matrix3d& E);

/// Second Piola-Kirchhoff stress [kPa] in the material frame at strain E (material frame):
/// S = C e^Q [b_f E_ff, b_fs E_fs, b_fs E_fn; ., b_t E_ss, b_t E_sn; ., ., b_t E_nn]
///     + kappa (J - 1) J C^-1. Continuum reference (no activation; add Ta to S_ff).
Eigen::Matrix3d guccione_pk2(const GuccioneLaw& law, const Eigen::Matrix3d& E);

/// 6x6 small-strain Voigt stiffness (11, 22, 33, 23, 13, 12; engineering shears) in the
/// material frame: normal block diag(C b_f, C b_t, C b_t) + kappa 1 1^T, shears C b_t/2 (sn),
/// C b_fs/2 (fn, fs). The same form as the linear B&C element (stiffness_voigt).
Eigen::Matrix<double, 6, 6> guccione_stiffness_voigt(const GuccioneLaw& law);

/// Hourglass modulus g [kPa] of the law: hourglass_factor times the smallest of the three
/// small-strain Young's moduli along f, s, n (uniaxial stress, penalty included). The isotropic
/// control of the first version (k = g h / 6 on every mode); GuccioneForces now uses the
/// physical control below, the scalar one is kept for the kernel overload that takes it.
double guccione_hourglass_modulus(const GuccioneLaw& law);

/// Per-element constants of the physical hourglass control (docs/calibration.md G.7; the
/// "physical stabilization" idea of Belytschko & Bindeman 1993, Comput. Methods Appl. Mech. Eng.
/// 105:225, in closed form for the voxel parallelepiped). With the lattice (edge) axes e_i, half
/// edges alpha_i, the Walsh functions h_jk = xi_j xi_k, h_123 = xi_1 xi_2 xi_3 and the hourglass
/// vectors q_a (hourglass.hpp), the objective components p_ia = (F e_i) . q_a give the strain of
/// the element's hourglass field. Per group k (field varying as xi_k, in-plane axes i < j):
///   eps_ii = p_i,ik / (8 alpha_i), eps_jj = p_j,jk / (8 alpha_j),
///   gamma_ij = p_i,jk / (8 alpha_j) + p_j,ik / (8 alpha_i),
/// and eps_mm = p_m,123 / (8 alpha_m) for the xi_1 xi_2 xi_3 modes; the transverse (parasitic)
/// shears are left out and the out-of-plane stresses are zero, so neither shear nor volume locks.
/// The energy is
///   s sum_k (V0/6) eps_k . C_k eps_k + s sum_m (V0/18) E_m eps_mm^2 + 1/2 int S : dF^T dF,
/// C_k the plane-stress moduli of the small-strain law in the lattice frame (rotated compliance),
/// E_m the uniaxial moduli, s = (1 + gamma a) e^Q the law's current stiffening and S the current
/// elastic stress (geometric part). Zero on affine motions; times hourglass_factor.
struct GuccioneHourglass {
  Eigen::Matrix3d B = Eigen::Matrix3d::Zero();  ///< F e_i = A B e_i (B = diag(1/r) R^T R_L)
  Eigen::Matrix3d T = Eigen::Matrix3d::Zero();  ///< lattice axes e_i in the material frame (R^T R_L)
  std::array<Eigen::Matrix3d, 3> K{
      Eigen::Matrix3d::Zero(), Eigen::Matrix3d::Zero(),
      Eigen::Matrix3d::Zero()};                     ///< group k: (V0/3) C_k [mN mm] on (eps_ii, eps_jj, gamma_ij)
  Eigen::Vector3d k_xyz = Eigen::Vector3d::Zero();  ///< xyz mode: (V0/9) E_m / (8 alpha_m)^2 [mN/mm] on p_m,xyz
  Eigen::Vector3d ia = Eigen::Vector3d::Zero();     ///< 1 / (8 alpha_i) [1/mm]
  double volume = 0;                                ///< V0 [mm^3]
  double geometric = 0;                             ///< multiplier of the stress term (hourglass_factor)
};

/// Hourglass constants of one element: rest nodes X (a parallelepiped), frame [f s n], the
/// element's B&C data and its law (moduli from guccione_stiffness_voigt, times hourglass_factor).
GuccioneHourglass guccione_hourglass_data(const NodeMatrix& X, const Eigen::Matrix3d& frame, const BCElementData& e,
                                          const GuccioneLaw& law);

/// One element: adds its nodal forces [mN] to f and returns its potential energy [mN mm]
/// (passive + volume + hourglass + active potential V0 Ta E_ff; damping is not in it).
/// Ta [kPa]: active fibre tension (S_ff += Ta); activation in [0, 1] drives law.active.
/// hourglass_modulus: guccione_hourglass_modulus(law), passed in so it is computed once per
/// material. v may be null (no damping). Pure function: no allocation, no global state.
double guccione_element_forces(const BCElementData& e, const GuccioneLaw& law, double hourglass_modulus, double Ta,
                               double activation, const NodeMatrix& x, const NodeMatrix* v, NodeMatrix& f);

/// The same element with the physical hourglass control hg (guccione_hourglass_data; null: no
/// control). This is the kernel GuccioneForces uses. Forces are the exact gradient of the energy.
double guccione_element_forces(const BCElementData& e, const GuccioneHourglass* hg, const GuccioneLaw& law, double Ta,
                               double activation, const NodeMatrix& x, const NodeMatrix* v, NodeMatrix& f);

}  // namespace cardio::mechanics
