#pragma once
/// @file projection.hpp
/// The smooth surfaces a voxel mesh's boundary is fitted to (meshing/boundary_fit.hpp), as
/// triangle sets, and closest-point projection onto them:
/// - surface input: the source surface's own patches (RasterizedSurface::patches);
/// - image input: the contour at 1/2 of each region's indicator, smoothed without shrinking
///   (a surface extracted from the labels, so a staircase of voxels becomes a smooth wall).
/// VTK does the smoothing, contouring and point location; it stays inside the sources.
#include <Eigen/Core>
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "cardio/imaging/volume.hpp"

namespace cardio::surfaces {

/// A triangulated surface [mm].
struct TriangleSurface {
  std::vector<Eigen::Vector3d> points;
  std::vector<std::array<std::int64_t, 3>> triangles;
};

/// Maps a point [mm] to the closest point [mm] of a surface.
using PointProjector = std::function<Eigen::Vector3d(const Eigen::Vector3d&)>;

/// Closest point on the triangles of `s` (a static cell locator; safe to call from several threads).
/// Throws cardio::Error if `s` has no triangle.
PointProjector closest_point_projector(const TriangleSurface& s);

/// The smooth surfaces of a role volume, keyed by the mesh's surface tag names: "epicardium" is
/// the boundary of the heart (myocardium and cavities), "endocardium_<cavity>" that of each
/// cavity. Each is the 1/2 contour of the region's 0/1 indicator (through the voxel faces),
/// smoothed by a windowed-sinc filter that does not shrink it; a region without voxels gives no
/// surface.
std::map<std::string, TriangleSurface> label_surfaces(const imaging::RoleVolume& roles);

}  // namespace cardio::surfaces
