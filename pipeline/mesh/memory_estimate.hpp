#pragma once
/// @file memory_estimate.hpp
/// The memory a heart config's meshing needs, estimated from the config before anything large is
/// allocated (issue 14): the source grid (box: size / voxel size; phantom: its grid; image: the
/// header; surface: its bounds / voxel size), the grid meshed (resampled to geometry.element_size
/// if set) and the elements, with the byte model of the memory guard (docs/config.md, "Memory").
/// Counts are doubles: a tiny voxel size gives a huge estimate, never an overflow.
#include <Eigen/Core>
#include <string>

#include "cardio/config/config.hpp"
#include "config/mesh_config.hpp"

namespace cardio::pipeline {

/// Bytes per voxel of the source grid while it is imported.
constexpr double kBoxBytesPerVoxel = 4;       ///< the int32 labels
constexpr double kPhantomBytesPerVoxel = 28;  ///< labels + fibre + sheet (3 floats each)
constexpr double kSurfaceBytesPerVoxel = 16;  ///< labels and the rasteriser's stencils (surfaces guard)
/// An image: the stored pixels plus the int32 labels they are converted to.
constexpr double kImageLabelBytesPerVoxel = 4;
/// Bytes per voxel of the grid that is meshed: role copy, resampled labels, boundary bookkeeping.
constexpr double kMeshGridBytesPerVoxel = 10;
// Bytes per element: meshing::kBytesPerElementEstimate (mesh, fibres and the simulation state).

struct MemoryEstimate {
  /// The config key that sets the largest part of the estimate, e.g. "geometry.box.voxel_size",
  /// "geometry.element_size" or "geometry.labels" (the image's own grid), and its value as text.
  std::string key;
  std::string value;
  Eigen::Vector3d source_grid = Eigen::Vector3d::Zero();  ///< voxels along x, y, z of the imported grid
  Eigen::Vector3d mesh_grid = Eigen::Vector3d::Zero();    ///< of the grid meshed (= source_grid without resampling)
  /// Elements: a lower bound (the box's voxels; the phantom's LV wall volume / element volume), 0 when
  /// not known before the labels are read (image, surface: the mesh stage checks them after import).
  double elements = 0;
  double source_bytes = 0;  ///< the imported grid
  double mesh_bytes = 0;    ///< the meshed grid and the elements

  double bytes() const { return source_bytes + mesh_bytes; }
  /// e.g. "a grid of 402 x 402 x 501 voxels (81.0 million) and about 25.9 million elements, about 29.6 GB"
  std::string describe() const;
};

/// The estimate for a parsed heart config. Reads only the image header (source: image) or the
/// surface's points (source: surface); their read errors are thrown as cardio::Error naming the file.
MemoryEstimate estimate_mesh_memory(const MeshConfig& config);

/// Throws cardio::Error "FILE:LINE:COL: KEY: ..." located at the estimate's key in `doc`, with the
/// estimated bytes, the grid and the limit, if the estimate exceeds `available_bytes`.
void check_mesh_memory(const MemoryEstimate& estimate, config::Document& doc, double available_bytes);

/// "1.50 GB" for any non-negative byte count (also beyond 2^64: "1e+13 GB").
std::string bytes_text(double bytes);

}  // namespace cardio::pipeline
