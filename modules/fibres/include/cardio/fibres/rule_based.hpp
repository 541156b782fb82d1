#pragma once
/// @file rule_based.hpp
/// Laplace-Dirichlet rule-based (LDRB) fibres after Bayer, Blake, Plank & Trayanova, Ann. Biomed.
/// Eng. 40(10):2243-2254 (2012), on the myocardium voxels.
///
/// Laplace problems (Bayer 2012, the four Laplace-Dirichlet problems), on the voxels owning tagged faces of
/// meshing::classify_boundary (a voxel owning faces of several tags takes the mean of their values;
/// faces not listed for a problem are zero-flux):
///   phi_epi: 1 epicardium, 0 every endocardium;   phi_lv: 1 LV endocardium, 0 epicardium and RV
///   endocardium;   phi_rv: 1 RV endocardium, 0 epicardium and LV endocardium;   psi_ab: 1 base faces,
///   0 apex voxel. The three transmural problems share their Dirichlet voxels with values summing to 1,
///   so phi_epi = 1 - phi_lv - phi_rv exactly (phi_lv = 1 - phi_epi without an RV): only two (one)
///   of them are solved.
///
/// Frames (Bayer 2012, supplementary algorithm: functions axis, orient, bislerp): at each voxel
///   axis(g_ab, g_t) = [e0 e1 e2], e1 = g_ab/|g_ab| (apex -> base), e2 = g_t orthogonalised against
///   e1 (transmural), e0 = e1 x e2 (circumferential);
///   orient(Q, a, b) = Q Rz(a) Rx(-b), i.e. Bayer's [[cos a, -sin a, 0], [sin a, cos a, 0], [0, 0, 1]]
///   [[1, 0, 0], [0, cos b, sin b], [0, -sin b, cos b]];
///   fibre = column 0 (helix angle a from e0 towards e1), sheet = column 2 (the transmural axis
///   turned by the sheet angle b about the fibre: s = cos b e2 + sin b (e2 x f)), normal = f x s.
/// With g_lv = grad phi_lv etc.: Q_lv = axis(g_ab, -g_lv), Q_rv = axis(g_ab, g_rv), Q_epi = axis(g_ab,
/// g_epi); septal depth d = phi_rv / (phi_lv + phi_rv); septal angles a_s(d) = a_endo (1 - 2d),
/// b_s(d) = b_endo (1 - 2d) (Bayer's alpha_s, beta_s); transmural e = phi_epi.
/// Deviation from Bayer (documented): Bayer slerps already-rotated frames, bislerp(orient(Q_endo,
/// a_s, b_s), orient(Q_epi, a_w(e), b_w(e)), e), which makes the helix angle quadratic in e
/// (a_endo + e^2 (a_epi - a_endo) where the frames agree) and, because bislerp takes the shortest of
/// the equivalent rotations, folds helix ranges wider than 90 deg (e.g. +60/-60) the wrong way.
/// Here bislerp (same quaternion construction: the variant of Q_a among Q_a R_k(pi), k = 0, x, y, z,
/// nearest to Q_b, then slerp) blends the unrotated axis frames, the angles are carried along in the
/// blended frame's sign convention (R_x: (-a, b), R_y: (-a, -b), R_z: (a, -b)) and interpolated
/// linearly with the same weights, then orient() is applied once:
///   (Q_endo, a_0, b_0) = blend(Q_lv, (a_s, b_s), Q_rv, (a_s, b_s), d)
///   (Q, a, b) = blend(Q_endo, (a_0, b_0), Q_epi, (a_epi, b_epi), e);   frame = orient(Q, a, b).
/// In the free walls the helix angle is then a_endo + e (a_epi - a_endo), linear in phi_epi; in the
/// septum it goes from +a_endo (LV side) to -a_endo (RV side) in the LV -> RV transmural frame, i.e.
/// +a_endo at both septal surfaces in each cavity's own outward convention, as in Bayer's rule.
/// Without an RV cavity it reduces to orient(axis(g_ab, g_epi), a(e), b(e)).
///
/// Gradients: voxel_gradient() (central / one-sided differences); on a problem's Dirichlet voxels,
/// whose one-sided differences follow the voxel staircase, the mean of the free 6-neighbours'
/// gradients instead; a gradient that still vanishes takes the sum of its neighbours'. Where no
/// transmural direction is defined (grad phi parallel to grad psi, e.g. at the apex) the direction
/// away from the long axis is used; such voxels are counted in RuleReport::degenerate_voxels.
#include <cstdint>
#include <string>
#include <vector>

#include "cardio/fibres/laplace.hpp"
#include "cardio/imaging/volume.hpp"
#include "cardio/meshing/boundary.hpp"

namespace cardio::fibres {

/// Rule angles [rad]. Defaults alpha_endo = 40, alpha_epi = -50, beta_endo = -65, beta_epi = 25 deg:
/// the values of Bayer et al. 2012 as carried by the LDRB implementations that cite it (the paper's
/// own text was not available to check). The helix angle is measured from the circumferential
/// direction e0 towards the apex-to-base direction e1 (positive: right-handed helix), the sheet angle
/// from the outward transmural direction about the fibre.
struct RuleAngles {
  double helix_endo = 40.0 * 3.14159265358979323846 / 180;
  double helix_epi = -50.0 * 3.14159265358979323846 / 180;
  double sheet_endo = -65.0 * 3.14159265358979323846 / 180;
  double sheet_epi = 25.0 * 3.14159265358979323846 / 180;
  /// Cavity names (roles.cavity_names) of the ventricles; with a single cavity it is the LV whatever
  /// its name. Faces of any other cavity are treated as epicardium.
  std::string lv_cavity = "lv";
  std::string rv_cavity = "rv";
};

struct RuleReport {
  std::vector<LaplaceStats> problems;  ///< one per Laplace problem solved
  bool biventricular = false;
  std::int64_t degenerate_voxels = 0;  ///< voxels where a gradient vanished or was parallel to another
  double seconds = 0;                  ///< total
  /// Per myocardium voxel (order of the returned frames): the Laplace solutions.
  std::vector<double> phi_epi, phi_lv, phi_rv, psi_ab;
};

/// The rule's inputs at one point: the transmural potentials and the gradients (of psi_ab,
/// phi_epi, phi_lv, phi_rv; the last two only with an RV), a voxel's own or interpolated.
struct LdrbPoint {
  double phi_epi = 0, phi_lv = 0, phi_rv = 0;
  Eigen::Vector3d g_ab = Eigen::Vector3d::Zero(), g_epi = Eigen::Vector3d::Zero();
  Eigen::Vector3d g_lv = Eigen::Vector3d::Zero(), g_rv = Eigen::Vector3d::Zero();
  Eigen::Vector3d position = Eigen::Vector3d::Zero();  ///< [mm]: the fallback direction where the rule has none
};

/// What it takes to evaluate the rule anywhere in the myocardium: the per-voxel inputs (same order
/// as the frames' voxels) and the geometry of the fallbacks.
struct LdrbFields {
  std::vector<std::int64_t> voxels;
  std::vector<LdrbPoint> points;
  bool biventricular = false;
  meshing::LongAxis axis;
  Eigen::Matrix3d grid_direction = Eigen::Matrix3d::Identity();
  double tiny = 0;  ///< [1/mm] gradients at most this long count as vanishing
};

/// The rule's frame at a point (fibre = column 0, sheet = column 2, normal = column 1 x ...: the
/// orient() frame); `degenerate` is set where a gradient vanished or no transmural direction exists.
Eigen::Matrix3d ldrb_frame(const LdrbPoint& p, const LdrbFields& fields, const RuleAngles& angles, bool& degenerate);

/// Rule-based frames of all myocardium voxels (ascending linear index). Needs base faces and the
/// apex voxel (BaseSpec automatic or plane). Throws cardio::Error on unusable input (no LV cavity,
/// no base faces, a myocardium region without boundary conditions, no solver convergence).
/// `fields`, if given, receives what evaluating the rule elsewhere needs (fibres/sampling.hpp).
imaging::VoxelFrames rule_based_frames(const imaging::RoleVolume& roles,
                                       const meshing::BoundaryClassification& boundary, const RuleAngles& angles = {},
                                       RuleReport* report = nullptr, const LaplaceSolverOptions& solver = {},
                                       LdrbFields* fields = nullptr);

/// Bayer 2012 axis(): columns e0 (= e1 x e2), e1 (= u/|u|), e2 (v orthogonalised against e1).
/// Returns false (and leaves q unchanged) if u vanishes or v is parallel to u.
bool ldrb_axis(const Eigen::Vector3d& u, const Eigen::Vector3d& v, Eigen::Matrix3d& q);

/// Bayer 2012 orient(): q Rz(alpha) Rx(-beta) (angles in rad).
Eigen::Matrix3d ldrb_orient(const Eigen::Matrix3d& q, double alpha, double beta);

/// Blend of two rotations (Bayer 2012 bislerp): the variant qa R_k(pi) (k = 0, x, y, z, which spans
/// the same axes) nearest to qb, slerped towards qb by t in [0, 1]. `variant` receives k (0..3).
Eigen::Matrix3d ldrb_bislerp(const Eigen::Matrix3d& qa, const Eigen::Matrix3d& qb, double t, int* variant = nullptr);

}  // namespace cardio::fibres
