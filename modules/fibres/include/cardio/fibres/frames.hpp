#pragma once
/// @file frames.hpp
/// Material frames (fibre f, sheet s, normal n = f x s) of the myocardium voxels from imported
/// vector volumes, and their validation.
#include <cstdint>
#include <string>

#include "cardio/imaging/volume.hpp"

namespace cardio::fibres {

/// Frames of all myocardium voxels of `roles` (ascending linear index) from vectors sampled on the
/// same grid (resampling is done elsewhere; a grid mismatch throws cardio::Error naming what differs).
/// Per voxel: f = fibre / |fibre| (the sign of an axis is irrelevant and kept as given);
/// s = Gram-Schmidt of the sheet vector against f. Without a sheet volume, s comes from `fill`
/// (its sheet, orthogonalised against f; its normal if that sheet is parallel to f) or, without
/// `fill`, is the deterministic perpendicular: the physical axis e_k with the smallest |f_k| (lowest k
/// on ties), orthogonalised against f.
/// Invalid voxels: a fibre with a NaN/Inf component or zero length, or a given sheet that is NaN,
/// zero or parallel to the fibre (|s - (s.f) f| <= 1e-6 |s|). Without `fill` they throw cardio::Error
/// with their count, the (i,j,k) of the first one and `source_name`; with `fill` (frames of the same
/// myocardium voxels, e.g. rule_based_frames) their whole frame is taken from `fill` and their count
/// is stored in `*n_filled`. With `fill_invalid` false, `fill` only provides sheets and invalid
/// voxels are still an error (fibres given, `missing: error`).
imaging::VoxelFrames frames_from_vectors(const imaging::RoleVolume& roles, const imaging::VectorVolume& fibre,
                                         const imaging::VectorVolume* sheet, const imaging::VoxelFrames* fill,
                                         const std::string& source_name, std::int64_t* n_filled = nullptr,
                                         bool fill_invalid = true);

/// True if every frame is orthonormal and right-handed within `tol`: |f| = |s| = 1, |f.s| <= tol,
/// det[f, s, f x s] = 1, all finite, one column per voxel, voxels strictly ascending.
/// `why` receives the first violation (column, voxel and the offending value).
bool check_frames(const imaging::VoxelFrames& frames, double tol, std::string* why = nullptr);

}  // namespace cardio::fibres
