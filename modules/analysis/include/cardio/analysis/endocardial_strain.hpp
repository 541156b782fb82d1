#pragma once
/// @file endocardial_strain.hpp
/// Global longitudinal and circumferential strain of the LV as echocardiography defines them
/// (EACVI/ASE consensus, Voigt et al. 2015, J Am Soc Echocardiogr 28:183): strain tangent to the
/// LV endocardial surface, along its meridian (apex -> base) and around it, averaged over the
/// endocardium of the LV only. Speckle tracking follows a smooth endocardial border, so the strain
/// is that of the endocardial surface smoothed (surfaces/smoothing.hpp), not of its voxel faces:
/// the steps of a voxel surface hinge as the wall contracts, and their faces shorten far less than
/// the wall does. docs/analysis.md, "Global strain on the LV endocardium", has the formulas and
/// the measurements.
#include <Eigen/Core>
#include <cstdint>
#include <vector>

#include "cardio/mechanics/mesh.hpp"

namespace cardio::analysis {

/// The endocardial faces as a surface of their own: its nodes (mesh node ids) and the faces in
/// local indices into them.
struct EndocardialSurface {
  std::vector<std::int32_t> nodes;
  std::vector<mechanics::Quad> quads;
};

/// The surface of `faces` (quads of mesh node ids). Throws cardio::Error on a negative node id.
EndocardialSurface endocardial_surface(const std::vector<mechanics::Quad>& faces);

/// The smoothed positions [mm] of the surface's nodes, taken from the mesh positions x.
Eigen::Matrix3Xd smoothed_positions(const EndocardialSurface& s, const Eigen::Matrix3Xd& x);

/// Per face of the smoothed surface at the reference configuration y_ref (the one the strain is
/// measured from): with a, b the face's tangents at its centre (mean opposite edges) and n the
/// unit normal along a x b, l the unit axis direction (apex -> base),
///   meridional t_l = l - (l.n) n,   unit m = t_l / |t_l|,   circumferential c = n x m,
///   weight = |a x b| |t_l|  (zero where the wall is normal to the axis: the apical cap, whose
///   meridian is undefined, does not count; elsewhere a contour-length weight like echo's).
/// Faces with |t_l| <= 1e-9 get weight 0.
struct EndocardialFrame {
  Eigen::Matrix3Xd meridional;  ///< unit m per face (apex -> base)
  Eigen::Matrix3Xd circumferential;
  Eigen::Matrix3Xd tangent_a, tangent_b;  ///< a and b at y_ref
  Eigen::VectorXd weight;                 ///< [mm^2]
};

/// The frame of `s` at smoothed reference positions y_ref (smoothed_positions).
/// Throws cardio::Error on size mismatch, a zero axis direction, or all weights zero.
EndocardialFrame endocardial_frame(const EndocardialSurface& s, const Eigen::Matrix3Xd& y_ref,
                                   const Eigen::Vector3d& axis_direction);

/// Engineering global strains (fractions; x 100 for %).
struct EndocardialStrain {
  double longitudinal = 0;     ///< GLS
  double circumferential = 0;  ///< GCS
};

/// The weighted means over the faces of the stretch minus 1 along m (GLS) and c (GCS) of the map
/// from the reference face to the face at smoothed positions y: with t = alpha a + beta b at the
/// reference, F t = alpha a' + beta b' (a', b' the tangents at y), e = |F t| - 1.
EndocardialStrain endocardial_strain(const EndocardialFrame& frame, const EndocardialSurface& s,
                                     const Eigen::Matrix3Xd& y);

}  // namespace cardio::analysis
