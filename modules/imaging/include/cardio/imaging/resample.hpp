#pragma once
/// @file resample.hpp
/// Resampling of label and fibre-axis volumes onto another grid (typically the element grid of
/// the mass-spring model). Both are bin-and-reduce operations: every source voxel is assigned to
/// the target voxel that contains its centre, then each target voxel reduces its bin (vote, or
/// structure tensor). Deterministic: bins are filled in ascending source order, no threads.
#include <cstdint>
#include <vector>

#include "cardio/imaging/volume.hpp"

namespace cardio::imaging {

/// Isotropic grid of edge `element_size_mm` covering the box of the source voxels:
/// same direction; along each index axis n = ceil(L / h) voxels (L = size * spacing, with a 1e-6
/// tolerance), so no source voxel is lost; the new box is centred on the old one (it overhangs by
/// less than h/2 per side, exactly 0 when L is a multiple of h). origin = centre of new voxel (0,0,0).
Grid resampled_grid(const Grid& source, double element_size_mm);

enum class LabelVote {
  /// Each source voxel votes for the target voxel containing its centre; the most frequent label
  /// wins; ties go to the smallest label value. Target voxels without votes (target finer than the
  /// source) take the nearest source voxel's label.
  majority,
  /// The label of the source voxel nearest to each target voxel centre.
  nearest,
};

/// Labels on `target`. Target voxels whose centre lies outside the source voxel box get label 0.
LabelVolume resample_labels(const LabelVolume& labels, const Grid& target, LabelVote vote);

/// Restricts which source voxels contribute to resample_axes.
struct AxisMask {
  const LabelVolume* labels = nullptr;  ///< on the fibre grid; nullptr: no mask
  std::vector<std::int32_t> keep;       ///< labels that count; empty: every non-zero label
};

/// Fibre axes on `target`: v and -v are the same axis, so vectors are averaged as structure
/// tensors: T = sum of u u^T over the unit source vectors u whose voxel centre lies in the target
/// voxel (zero, non-finite and masked-out vectors ignored); result = unit principal eigenvector,
/// signed to agree with the first contributing source vector. Target voxels without contributions
/// take the nearest source voxel's (normalised) vector if it is valid, otherwise zero; target
/// voxels whose centre lies outside the source box are zero.
VectorVolume resample_axes(const VectorVolume& fibres, const Grid& target, const AxisMask& mask = {});

}  // namespace cardio::imaging
