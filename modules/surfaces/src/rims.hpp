#pragma once
/// @file rims.hpp
/// Closing the open rims of a surface given as patches (internal to surfaces): facing rims of two
/// patches are stitched with a strip of triangles, and the rest are capped if the user asks.
#include <functional>
#include <string>
#include <vector>

#include "cardio/surfaces/rasterize.hpp"
#include "triangle_mesh.hpp"

namespace cardio::surfaces::detail {

/// The name of a patch class for messages ("epicardium", "endocardium of 'lv'", ...).
using PatchNamer = std::function<std::string(int patch_class)>;

/// Width of the gap between two open loops [mm]: the symmetric Hausdorff distance between them as
/// polylines (the largest distance from a vertex of one to the other).
double loop_gap(const std::vector<Vec3>& points, const OpenLoop& a, const OpenLoop& b);

/// Fills the gaps between open loops of different patches that face each other within
/// `stitch_width_mm` (gap_fill.hpp) and, if `cap`, fans every loop left open to its centroid (class
/// `cap_class`). Returns what was closed, in order.
std::vector<RimClosure> close_rims(TriangleMesh& m, double stitch_width_mm, bool cap, int cap_class,
                                   const PatchNamer& name);

/// For an error: each open loop left (up to `max_loops`), with its patch, edge count, centroid and
/// the nearest other open loop's distance (closest and widest).
std::string describe_open_loops(const TriangleMesh& m, const PatchNamer& name, std::size_t max_loops = 5);

}  // namespace cardio::surfaces::detail
