#pragma once
/// @file axis.hpp
/// The left-ventricular long axis used by the cardiac strain directions (strain.hpp) and the AHA
/// segments (aha.hpp): a line through `point` with unit direction `direction` from apex to base.
#include <Eigen/Core>

#include "cardio/meshing/boundary.hpp"
#include "cardio/meshing/voxel_mesh.hpp"

namespace cardio::analysis {

/// A line: a point on the LV long axis [mm] and the direction from apex to base (any length > 0;
/// the functions normalise it and throw cardio::Error if it is zero or not finite).
struct CardiacAxis {
  Eigen::Vector3d point{0, 0, 0};
  Eigen::Vector3d direction{0, 0, 1};
};

/// `direction` normalised; throws cardio::Error if its length is not > 1e-12 or not finite.
Eigen::Vector3d unit_axis_direction(const CardiacAxis& axis);

/// The axis of the meshing stage: direction = base-plane normal (apex -> base), point = the apex.
/// The apex is a voxel centre, up to half a voxel off the true axis: prefer the cavity overload for
/// regional analysis (an axis 0.7 mm off-centre turns the sector boundaries of a 3 mm wall by ~5 deg).
CardiacAxis cardiac_axis(const meshing::LongAxis& long_axis);

/// Direction = base-plane normal; point = the volume centroid of the closed cavity surface (LV).
CardiacAxis cardiac_axis(const meshing::LongAxis& long_axis, const meshing::CavitySurface& lv_cavity,
                         const Eigen::Matrix3Xd& x);

/// Volume centroid [mm] of a closed, outward-oriented cavity surface at positions x (the lid
/// included): sum over triangles of the signed tetrahedron (c0, x0, x1, x2) volume times its centroid,
/// divided by the enclosed volume (divergence theorem; exact for the triangulated solid).
/// Throws cardio::Error if the enclosed volume is not positive.
Eigen::Vector3d cavity_centroid(const meshing::CavitySurface& cavity, const Eigen::Matrix3Xd& x);

/// The endocardial apex: the cavity surface point (lid excluded) farthest towards the apex along
/// `direction` (smallest axial coordinate; ties to the first point). [mm]
Eigen::Vector3d endocardial_apex(const meshing::CavitySurface& lv_cavity, const Eigen::Matrix3Xd& x,
                                 const Eigen::Vector3d& direction);

/// Where the long axis leaves the cavity towards the apex: the line through the cavity's volume
/// centroid along `direction` (apex -> base) crossed with the endocardial triangles (lid excluded),
/// the crossing farthest towards the apex. Unlike the lowest point (endocardial_apex), it does not
/// wander across a blunt apex when the mesh or the axis moves a little, so a pacing site placed
/// there is the same anatomical place on any voxelisation. Falls back to endocardial_apex if the
/// line meets no triangle (a crescent-shaped cavity whose centroid lies outside it). [mm]
Eigen::Vector3d axial_apex(const meshing::CavitySurface& cavity, const Eigen::Matrix3Xd& x,
                           const Eigen::Vector3d& direction);

}  // namespace cardio::analysis
