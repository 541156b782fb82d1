#pragma once
/// @file material.hpp
/// Material constants users give, and their calibration into the moduli of the spring
/// elements. The derivation is in docs/calibration.md. Units: kPa, mg/mm^3.
#include <Eigen/Core>
#include <array>

namespace cardio::mechanics {

/// Linear elastic constants, transversely isotropic about the fibre axis f (isotropic when
/// E_fibre == E_cross and G_fibre == E/(2(1+nu))).
struct ElasticConstants {
  double E_fibre = 0;   ///< Young's modulus along f [kPa]
  double E_cross = 0;   ///< Young's modulus along s and n [kPa]
  double G_fibre = 0;   ///< shear modulus in the f-s and f-n planes [kPa]
  double nu_cross = 0;  ///< Poisson ratio in the s-n plane (contraction along n for a pull along s);
                        ///< may exceed 1/2 for strongly anisotropic, nearly incompressible tissue

  /// Isotropic material from (E, nu); requires E > 0, -1 < nu < 0.5.
  static ElasticConstants isotropic(double E, double nu);
  /// Transversely isotropic from E_f, E_c, G and the cross-plane Poisson ratio nu.
  static ElasticConstants transversely_isotropic(double E_f, double E_c, double G, double nu);
  /// Transversely isotropic from E_f, E_c, G and the bulk modulus K (nu_cross solved for).
  static ElasticConstants transversely_isotropic_bulk(double E_f, double E_c, double G, double K);
};

/// Axial spring law of one axis (docs/calibration.md sec. 3; the non-linear springs B&C 2000 announce in sec. 6). With
/// stretch lambda = |l|/r and E = (lambda^2 - 1)/2 the first Piola stress along the axis is
///  linear:       P = d (lambda - 1)
///  exponential:  P = lambda S,  S = C b E exp(b E^2)   (Guccione-type, C = d / b)
/// so both have the small-strain axial modulus d. Force on the axis = A P, A = V0 / r.
struct AxisLaw {
  enum class Kind { linear, exponential };
  Kind kind = Kind::linear;
  double modulus = 0;  ///< small-strain axial modulus d [kPa]
  double b = 0;        ///< exponential exponent b (dimensionless)
};

/// Moduli of the Bourguignon-Cani element for one material, independent of element size.
/// Per element the kernel turns them into spring constants with the element's rest volume
/// V0 and axis lengths r_a (docs/calibration.md): k_a = V0 d_a / r_a^2 (axial),
/// K_ab = G_ab V0 (angular, energy K/2 (cos - c)^2), kappa V0 (Jacobian volume term),
/// k_v = 3 r_v h / 2 (paper's radial volume springs, h = V0^(1/3)), k_hg = g h / 6 (hourglass).
struct BCModuli {
  std::array<AxisLaw, 3> axial;          ///< laws along f, s, n
  std::array<double, 3> shear{0, 0, 0};  ///< angular moduli G_fs, G_fn, G_sn [kPa]
  double bulk_jacobian = 0;              ///< kappa of the J = det F volume term [kPa]
  double radial = 0;                     ///< r_v: normal-coupling modulus of radial springs [kPa]
  double hourglass = 0;                  ///< g: hourglass-control modulus [kPa]
  double damping_time = 0;               ///< tau [ms]: damping coefficient kd = tau * k
};

/// Options of the calibration.
struct BCCalibration {
  /// Share of the normal coupling carried by the paper's radial volume springs, as a fraction
  /// of the largest admissible value min(lambda', G_fs, G_sn); the rest goes to the J term.
  /// The radial springs are tied to the cube corners, so the calibration is exact only for
  /// frames aligned with the voxel axes when this is > 0 (docs/calibration.md).
  double radial_share = 0.0;
  /// Hourglass modulus relative to the smallest Young's modulus (1 matches the bending
  /// energy of a cube in its x-z hourglass mode).
  double hourglass_factor = 1.0;
  /// Whether the element keeps volume terms at all (false: axial + angular springs only).
  bool volume_terms = true;
  AxisLaw::Kind law = AxisLaw::Kind::linear;
  std::array<double, 3> exponent{0, 0, 0};  ///< b_f, b_s, b_n for the exponential law
  double damping_time = 0;
};

/// Calibrate the Bourguignon-Cani element to the constants (throws cardio::Error if the
/// constants are outside what the element can represent, naming the constraint).
BCModuli calibrate_bourguignon_cani(const ElasticConstants& c, const BCCalibration& options);

/// Spring constants of Baudet's cube for (E, nu) and cube side h [mm] (Baudet et al. 2007,
/// eqs. 7-9): k_edge = E h (4 nu + 1) / (8 (1 + nu)), k_diag = 3 E h / (8 (1 + nu)),
/// corrective coefficient gamma = (4 nu - 1) / 2 (docs/calibration.md relates it to eq. 9).
struct BaudetConstants {
  double k_edge = 0;        ///< [mN/mm]
  double k_diag = 0;        ///< [mN/mm]
  double gamma = 0;         ///< corrective-force coefficient (dimensionless)
  double hourglass = 0;     ///< hourglass stiffness k_hg [mN/mm] (our addition, see docs)
  double damping_time = 0;  ///< [ms]
};
/// hourglass_factor scales k_hg = E h / 6 (0 = the paper's element alone). The edge springs
/// already resist bending, so the default only removes the spring set's zero-energy modes.
BaudetConstants calibrate_baudet(double E, double nu, double h, double damping_time, double hourglass_factor = 0.05);

/// 6x6 Voigt stiffness (order 11, 22, 33, 23, 13, 12; engineering shear strains) in the
/// material frame (f, s, n) of the small-strain response the calibrated element has. Built
/// from the moduli alone (no simulation), it predicts the experiments of the tests.
Eigen::Matrix<double, 6, 6> stiffness_voigt(const BCModuli& m);

/// Rotate a Voigt stiffness from the material frame R = [f s n] to the global frame.
Eigen::Matrix<double, 6, 6> rotate_voigt(const Eigen::Matrix<double, 6, 6>& C, const Eigen::Matrix3d& R);

}  // namespace cardio::mechanics
