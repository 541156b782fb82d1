#pragma once
/// @file phantoms.hpp
/// Synthetic hearts without external data: the truncated-ellipsoid left ventricle of the cardiac
/// mechanics benchmark (Land et al. 2015, Proc. R. Soc. A 471:20150641, problems 2 and 3) with its
/// analytic fibre field, and a biventricular variant (an ellipsoidal right ventricle wrapped around
/// the +x side of that LV). All lengths in mm.
///
/// Ellipsoidal coordinates (Land et al. 2015, problem 2; fibre rule of problem 3 as in the
/// benchmark's reference script xyz_to_fiber.m): a shell between an inner surface (semi-axes a0,
/// b0, l0) and an outer one (a1, b1, l1) around `centre` is swept by
///   x = c + a(t) sin(u) cos(v),  y = b(t) sin(u) sin(v),  z = l(t) cos(u),
///   a(t) = a0 + t (a1 - a0) (same for b, l),  t in [0, 1] (0 endocardium, 1 epicardium),
///   u in [-pi, 0] (apex u = -pi; the base z = z_base lies at u = -acos(z_base / l)),  v in (-pi, pi].
/// With u negative, e_u = (dx/du)/|dx/du| points from apex to base along the meridian and
/// e_v = (dx/dv)/|dx/dv| = z_hat x (outward radial): counterclockwise seen from the base. The fibre is
///   f = sin(alpha) e_u + cos(alpha) e_v,  alpha(t) = alpha_endo + t (alpha_epi - alpha_endo),
/// with alpha_endo = +90 deg, alpha_epi = -90 deg in the benchmark (longitudinal at both surfaces,
/// circumferential at mid-wall). (e_v, e_u, outward normal) is right-handed, so this is the same
/// helix-angle convention as Bayer et al. 2012 (alpha from the circumferential direction towards the
/// apex-to-base direction; positive = right-handed helix at the endocardium).
#include <Eigen/Core>
#include <cstdint>

#include "cardio/imaging/volume.hpp"

namespace cardio::phantoms {

/// Default labels of the phantoms.
struct PhantomLabels {
  std::int32_t outside = 0;
  std::int32_t lv_myocardium = 1;
  std::int32_t lv_cavity = 2;
  std::int32_t rv_myocardium = 3;  ///< RV free wall (biventricular phantom only)
  std::int32_t rv_cavity = 4;      ///< (biventricular phantom only)
};

/// A family of coaxial ellipsoids: semi-axes interpolate linearly between `inner`
/// (t = 0) and `outer` (t = 1); axes are x, y, z of the phantom frame; rotationally symmetric when
/// x and y semi-axes are equal.
struct EllipsoidShell {
  Eigen::Vector3d centre{0, 0, 0};
  Eigen::Vector3d inner{7, 7, 17};    ///< semi-axes (a0, b0, l0) [mm]
  Eigen::Vector3d outer{10, 10, 20};  ///< semi-axes (a1, b1, l1) [mm]
  Eigen::Vector3d semi_axes(double t) const { return inner + t * (outer - inner); }
};

/// Geometry of the benchmark LV (Land et al. 2015, problem 2): endocardium r_s = 7, r_l = 17;
/// epicardium r_s = 10, r_l = 20; base plane z = 5 (z up, apex at negative z).
struct LvGeometry {
  double endo_short = 7, endo_long = 17;
  double epi_short = 10, epi_long = 20;
  double z_base = 5;
  EllipsoidShell shell() const;
};

/// RV of the biventricular phantom: an ellipsoidal shell (endocardium `endo`, epicardium `epi`
/// semi-axes, thinner than the LV wall) centred at `centre` on the +x side of the LV. The RV cavity
/// is inside its endocardial ellipsoid but outside the LV epicardium; the RV free wall is between
/// its two ellipsoids, outside the LV epicardium. The LV wall between the cavities is the septum.
struct RvGeometry {
  Eigen::Vector3d centre{5, 0, 0};
  Eigen::Vector3d endo{10, 13, 17};
  Eigen::Vector3d epi{12, 15, 19};
  EllipsoidShell shell() const { return EllipsoidShell{centre, endo, epi}; }
};

/// Transmural helix-angle rule alpha(t) = endo + t (epi - endo) [deg].
struct HelixRule {
  double endo_deg = 90;
  double epi_deg = -90;
  /// Land et al. 2015, problem 3: +90 deg endocardium to -90 deg epicardium.
  static HelixRule land2015() { return {90, -90}; }
  /// Streeter-type: +60 deg endocardium to -60 deg epicardium (Streeter et al. 1969 range).
  static HelixRule streeter() { return {60, -60}; }
};

struct PhantomSpec {
  double voxel_size = 1.0;  ///< isotropic [mm]
  LvGeometry lv;
  bool biventricular = false;
  RvGeometry rv;
  HelixRule helix = HelixRule::land2015();
  PhantomLabels labels;
  /// Rotation applied to the whole phantom (proper orthonormal, det +1): the grid direction becomes
  /// R, the origin R * origin and the vectors R * f. Voxel values are those of the unrotated phantom.
  Eigen::Matrix3d rotation = Eigen::Matrix3d::Identity();
};

/// Labels and unit fibre / sheet vectors (physical axes; zero outside the myocardium).
/// The grid: spacing = voxel_size, voxel faces (not centres) on the base plane, no voxel centre on
/// the long axis, at least one empty voxel layer on every side of the heart (above the base too).
/// A voxel is LV myocardium if its centre (x, y, z) in the phantom frame has z <= z_base and lies
/// between the endocardial and epicardial ellipsoids (on or outside the endocardium, on or inside
/// the epicardium); LV cavity if z <= z_base and strictly inside the endocardium.
/// Fibres: LV myocardium from the LV shell with `helix`; RV free wall from the RV shell's own
/// ellipsoidal coordinates with the same rule (documented choice). Sheet: the outward normal of the
/// shell surface t = const through the voxel centre, Gram-Schmidt orthogonalised against the fibre
/// (normal = f x s completes a right-handed frame).
struct Phantom {
  imaging::LabelVolume labels;
  imaging::VectorVolume fibre;
  imaging::VectorVolume sheet;
};

Phantom make_phantom(const PhantomSpec& spec);

/// Voxels along x, y, z of make_phantom's grid, without building it (memory estimates). Doubles:
/// a tiny voxel size gives a huge count rather than an overflow.
Eigen::Vector3d phantom_grid_size(const PhantomSpec& spec);

/// Fibre and sheet (physical axes; unit, orthogonal) of the phantom's rule at a physical point p
/// [mm] of the myocardium with `label` (the RV shell for labels.rv_myocardium of a biventricular
/// phantom, else the LV shell): the rule make_phantom applies at voxel centres, evaluated anywhere
/// (the sampled-axes element takes it at its Gauss points).
struct FibreSheet {
  Eigen::Vector3d fibre, sheet;
};
FibreSheet phantom_fibre_sheet(const PhantomSpec& spec, std::int32_t label, const Eigen::Vector3d& p);

/// The smooth surfaces of a phantom (for fitting the voxel boundary onto them).
enum class PhantomSurface { lv_endocardium, lv_epicardium, rv_endocardium, rv_epicardium };

/// Projection of the physical point p [mm] onto a phantom surface along the ray from the surface's
/// centre: p' = c + (p - c) / |(p - c) / semi-axes| (phantom frame, rotated with the phantom). For
/// the benchmark LV (equal wall thickness along both semi-axes) this is the map between the shells
/// at fixed ellipsoidal (u, v).
Eigen::Vector3d project_onto_surface(const PhantomSpec& spec, PhantomSurface surface, const Eigen::Vector3d& p);

/// Point of an ellipsoid shell in ellipsoidal coordinates, with the local unit directions.
struct ShellCoordinates {
  double t = 0;            ///< transmural (0 inner surface, 1 outer); may leave [0, 1]
  double u = 0, v = 0;     ///< [rad]
  Eigen::Vector3d e_u;     ///< meridian tangent, apex -> base (orthogonalised against e_v)
  Eigen::Vector3d e_v;     ///< circumferential, counterclockwise seen from the base
  Eigen::Vector3d normal;  ///< outward unit normal of the surface t = const
};

/// Coordinates of point p (phantom frame) in the shell: t is the root of
/// ((x-c_x)/a(t))^2 + (y/b(t))^2 + ((z-c_z)/l(t))^2 = 1 (monotonic; bisection to 1e-14), valid
/// while all semi-axes stay positive. For p on the long axis, v = 0 is taken.
ShellCoordinates shell_coordinates(const EllipsoidShell& shell, const Eigen::Vector3d& p);

/// Analytic fibre of the rule at p: sin(alpha(t)) e_u + cos(alpha(t)) e_v, unit.
Eigen::Vector3d analytic_fibre(const EllipsoidShell& shell, const HelixRule& rule, const Eigen::Vector3d& p);

/// Helix angle [deg, (-90, 90]] of vector w at p (phantom frame): the angle of w projected on the
/// tangent plane, from e_v towards e_u. Axis sign is irrelevant (w and -w give the same angle).
double helix_angle_deg(const EllipsoidShell& shell, const Eigen::Vector3d& p, const Eigen::Vector3d& w);

/// Volume of the ellipsoid of semi-axes (r_s, r_s, r_l) centred at the origin below z = z_base
/// (z from -r_l to z_base): pi r_s^2 (z_base - z_base^3 / (3 r_l^2) + 2 r_l / 3). [mm^3]
double truncated_ellipsoid_volume(double r_s, double r_l, double z_base);

}  // namespace cardio::phantoms
