#pragma once
/// @file gap_fill.hpp
/// Closing the narrow gaps between the rims of surface patches (internal to surfaces).
///
/// The gaps between patches cut from one closed surface form a planar domain bounded by the rims
/// (the sphere minus the patches): a strip between two rims, or a network where three patches meet.
/// Each connected gap is found from the rims that face each other across it, turned into one polygon
/// by bridging its rims, and triangulated by ear clipping. New triangles use only the rims' own
/// points: nothing is moved or merged.
#include <vector>

#include "cardio/surfaces/rasterize.hpp"
#include "triangle_mesh.hpp"

namespace cardio::surfaces::detail {

/// A gap closed: its rims (open loops of `m`) and the triangles added.
struct FilledGap {
  std::vector<int> rim_patches;  ///< patch class of each rim bounding it
  std::int64_t rim_edges = 0;
  double width_mm = 0;  ///< the largest distance from a rim vertex to the rim it faces
  Vec3 centre = Vec3::Zero();
  std::int64_t triangles = 0;
};

/// Fills every gap between open loops of different patches that face each other within
/// `width_mm` (a loop faces another where the other's vertices lie within 60 degrees of the
/// direction in which its surface would continue past it). The patches' orientations are made
/// consistent first (a patch file may be wound either way). A triangle added takes the class of the
/// one patch other than `base_class` among its corners' rims, or kNoPatch. Gaps that cannot be
/// triangulated are left open (the closedness check reports them).
std::vector<FilledGap> fill_gaps(TriangleMesh& m, double width_mm, int base_class);

}  // namespace cardio::surfaces::detail
