#pragma once
/// @file rasterize.hpp
/// Triangulated heart surfaces with patch labels (e.g. Cobiveco / Bai et al. shapes), as one closed
/// file or as several patch files with gaps or open rims, turned into label volumes, so that surface
/// data enters the same voxel pipeline as segmentations. VTK does the reading, point merging and
/// voxelisation; it stays inside the sources.
#include <Eigen/Core>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cardio/imaging/volume.hpp"
#include "cardio/surfaces/projection.hpp"

namespace cardio::surfaces {

/// An endocardial patch (surface class value) and the cavity it bounds.
struct Endocardium {
  int patch_class = 0;
  std::string cavity_name;
};

struct RasterizeOptions {
  double voxel_size_mm = 1.0;  ///< isotropic grid spacing
  /// Points closer than this are merged before the closedness check (patches written without shared
  /// vertices). 0 merges only exactly coincident points.
  double merge_tolerance_mm = 1e-3;
  int margin_voxels = 2;  ///< empty voxels around the surface bounds, >= 1
  /// Patch-class array, point or cell data. A triangle's class is its cell value or, for point data,
  /// the class shared by all 3 of its points; triangles with mixed point classes (the seams between
  /// patches) belong to no patch but still bound the myocardium.
  std::string class_array = "class";
  int base_class = 1;
  int epicardium_class = 2;
  /// One cavity each, label 2 + position. Empty: the file needs no class array (e.g. STL, which carries
  /// none) and the whole closed surface becomes myocardium.
  std::vector<Endocardium> endocardia{{3, "lv"}, {4, "rv"}};
  /// Memory guard: refuse grids with more voxels than this (a LabelVolume costs 4 bytes a voxel).
  double max_voxels = 2e9;
  /// Open rims of two different patches whose gap (the Hausdorff distance between the two rims) is at
  /// most this are stitched with a strip of new triangles; points are never moved. 0: no stitching.
  double stitch_width_mm = 3.0;
  /// Fan every rim still open after stitching to its centroid, as base_class (surfaces open by design
  /// at the base or the valves). Off: an open rim is an error.
  bool cap_open_rims = false;
};

/// One surface file of a heart given as several. Its triangles are all of `patch_class` or, without
/// one, classified by the file's own RasterizeOptions::class_array.
struct SurfacePatch {
  std::filesystem::path file;
  std::optional<int> patch_class;
};

/// An open rim closed by stitching or capping, for the report.
struct RimClosure {
  enum class Kind { stitched, capped };
  Kind kind = Kind::stitched;
  std::string patches;                 ///< "epicardium + base", or the patch capped
  std::int64_t rim_edges = 0;          ///< edges of the rim(s) closed
  double gap_mm = 0;                   ///< stitched: the gap's width (Hausdorff distance of the rims)
  Eigen::Vector3d centre_mm{0, 0, 0};  ///< vertex centroid of the rim(s)
  std::int64_t triangles = 0;          ///< triangles added
};

struct RasterizedSurface {
  /// Axis-aligned grid (direction identity); 0 outside, 1 myocardium, 2 + c cavity c. Myocardium wins
  /// where a cavity overlaps it; where cavities overlap each other the earlier one wins.
  imaging::LabelVolume labels;
  std::vector<std::string> cavity_names;                 ///< in label order
  double tissue_volume_mm3 = 0;                          ///< enclosed by the whole surface (even-odd)
  std::vector<double> cavity_volume_mm3;                 ///< enclosed by endocardium + lid
  std::vector<std::int64_t> endocardium_boundary_edges;  ///< of each patch before the lid
  std::int64_t merged_points = 0;                        ///< points removed by the merge (used points before - after)
  std::int64_t points = 0;                               ///< after merging
  std::int64_t triangles = 0;                            ///< after merging (degenerate ones dropped)
  /// The merged source triangles by the mesh's surface tag name: "epicardium" (its patch, or the
  /// whole surface when the file has no classes) and "endocardium_<cavity>": the smooth surfaces
  /// the boundary fit projects onto.
  std::map<std::string, TriangleSurface> patches;
  std::vector<RimClosure> closures;  ///< rims stitched or capped, in order
};

/// Reads the patch files (.vtp, .vtk legacy polydata, .stl, .ply by extension), merges their points
/// within the merge tolerance, stitches facing rims of different patches and caps open rims (see
/// RasterizeOptions), checks that the result is closed and manifold, and voxelises myocardium and
/// cavities. A cavity is the inside of its endocardial patch closed by a lid: each boundary loop of
/// the patch (the open cup at the base) fanned to the loop's vertex centroid; an already closed patch
/// is used as is. Throws cardio::Error naming the files for unreadable input, missing classes, open
/// surfaces (each open loop with its patch, position and nearest rim, and what to set) and grids over
/// the memory guard.
RasterizedSurface rasterize_surface(const std::vector<SurfacePatch>& patches, const RasterizeOptions& options = {});
/// One file classified by its class array.
RasterizedSurface rasterize_surface(const std::filesystem::path& file, const RasterizeOptions& options = {});

/// The checks of rasterize_surface that need no grid: the files read as surfaces with triangles,
/// their patch classes fit the options (every class present is configured; the epicardium and
/// every endocardium are present), and the surface is closed and manifold once points are merged
/// and rims stitched or capped. For validating a config without rasterising (`cardiac validate`);
/// throws cardio::Error naming the files, as rasterize_surface does.
void check_surface_patches(const std::vector<SurfacePatch>& patches, const RasterizeOptions& options = {});
void check_surface_patches(const std::filesystem::path& file, const RasterizeOptions& options = {});

/// Voxels along x, y, z of the grid rasterize_surface would allocate for `file` at the options' voxel
/// size and margin, from the bounds of the points its triangles use (before merging points; merging
/// moves them by at most the merge tolerance), without allocating the grid: for memory estimates
/// from a config. Doubles: a tiny voxel size gives a huge count rather than an overflow.
/// Throws cardio::Error naming the file as rasterize_surface does for unreadable input.
Eigen::Vector3d surface_grid_size(const std::vector<SurfacePatch>& patches, const RasterizeOptions& options = {});

}  // namespace cardio::surfaces
