#pragma once
/// @file sampling.hpp
/// Fibre frames at arbitrary points of the myocardium (the samples of the sampled-axes element).
/// Rule-based fibres: the rule evaluated at the point (rule_frames_at). Image fibres, from the
/// per-voxel frames: trilinear interpolation of the structure tensors f f^T and s s^T
/// over the myocardium voxel centres around the point (weights renormalised over the myocardium
/// voxels present), then the leading eigenvector of the fibre tensor, and the leading eigenvector
/// of the sheet tensor projected orthogonal to f. Tensors, not vectors, are interpolated because a
/// fibre has no sign (f and -f are the same fibre), as in image DTI resampling.
#include <Eigen/Core>

#include "cardio/fibres/rule_based.hpp"
#include "cardio/imaging/volume.hpp"

namespace cardio::fibres {

struct PointFrames {
  Eigen::Matrix3Xd fibre;  ///< unit, 3 x points
  Eigen::Matrix3Xd sheet;  ///< unit, orthogonal to fibre
};

/// Frames at `points` [mm] from the voxel frames on `grid` (frames.voxels are linear indices of
/// it). A point with no myocardium voxel among its 8 neighbours takes the frame of the nearest
/// voxel of `fallback_voxel[p]` (the element's own voxel, an index into frames.voxels).
PointFrames interpolate_frames(const imaging::Grid& grid, const imaging::VoxelFrames& frames,
                               const Eigen::Matrix3Xd& points, const std::vector<std::int64_t>& fallback_voxel);

/// Rule-based (LDRB) frames evaluated at `points` [mm]: the rule's potentials and gradients
/// (rule_based_frames' `fields`) interpolated trilinearly over the myocardium voxel centres around
/// each point (weights renormalised), then the rule (ldrb_frame) applied there. A point with no
/// myocardium voxel around takes the inputs of `fallback_voxel[p]` (an index into fields.voxels).
PointFrames rule_frames_at(const imaging::Grid& grid, const LdrbFields& fields, const RuleAngles& angles,
                           const Eigen::Matrix3Xd& points, const std::vector<std::int64_t>& fallback_voxel);

}  // namespace cardio::fibres
