#pragma once
/// @file endocardial_strain.hpp
/// Global longitudinal and circumferential strain of the LV as echocardiography defines them
/// (EACVI/ASE consensus, Voigt et al. 2015, J Am Soc Echocardiogr 28:183): strain tangent to the
/// LV endocardial surface, along its meridian (apex -> base) and around it, averaged over the
/// endocardium of the LV only. docs/analysis.md, "Global strain on the LV endocardium", has the
/// formulas and why the element means along the fixed axis (strain.hpp) are not GLS.
#include <Eigen/Core>
#include <cstdint>
#include <vector>

#include "cardio/analysis/strain.hpp"
#include "cardio/mechanics/mesh.hpp"

namespace cardio::analysis {

/// The element owning each boundary quad: the one element that has all 4 of its nodes.
/// Throws cardio::Error naming the quad if no element (or more than one: not a boundary face) has them.
std::vector<std::int64_t> face_owners(const mechanics::HexMesh& mesh, const std::vector<mechanics::Quad>& faces);

/// Per face, at the reference configuration x_ref (the one the strain is measured from): with n the
/// unit normal of the quad (vector area (x2 - x0) x (x3 - x1) / 2, exact for a bilinear quad) and
/// l the unit axis direction (apex -> base),
///   meridional t_l = l - (l.n) n,   unit m = t_l / |t_l|,   circumferential c = n x m,
///   weight = area |t_l|  (zero where the wall is normal to the axis: the apical cap, whose
///   meridian is undefined, does not count; elsewhere a contour-length weight like echo's).
/// Faces with |t_l| <= 1e-9 get weight 0 and m = c = 0.
struct EndocardialFrame {
  std::vector<std::int64_t> owner;  ///< element owning each face
  Eigen::Matrix3Xd meridional;      ///< unit m per face (apex -> base)
  Eigen::Matrix3Xd circumferential;
  Eigen::VectorXd weight;  ///< [mm^2]
};

/// The frame of `faces` (owned by `owner`, see face_owners) at positions x_ref [mm].
/// Throws cardio::Error on size mismatch, a zero axis direction, or all weights zero.
EndocardialFrame endocardial_frame(const std::vector<mechanics::Quad>& faces, const std::vector<std::int64_t>& owner,
                                   const Eigen::Matrix3Xd& x_ref, const Eigen::Vector3d& axis_direction);

/// Engineering global strains (fractions; x 100 for %).
struct EndocardialStrain {
  double longitudinal = 0;     ///< GLS
  double circumferential = 0;  ///< GCS
};

/// The weighted means over the faces of e = sqrt(1 + 2 t.E t) - 1, t = m (GLS) or c (GCS), with E
/// the Green-Lagrange strain (strains.E, measured from the configuration the frame was built at)
/// of the face's owning element. Both use the weights of the frame. NaN if an element's
/// 1 + 2 t.E t < 0 (no real stretch).
EndocardialStrain endocardial_strain(const EndocardialFrame& frame, const ElementStrains& strains);

}  // namespace cardio::analysis
