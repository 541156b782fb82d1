#pragma once
/// @file laplace.hpp
/// Laplace problems on a voxel domain (the Laplace-Dirichlet step of Bayer et al. 2012, Ann. Biomed.
/// Eng. 40(10):2243-2254), discretised by finite differences on the voxel centres.
#include <Eigen/Core>
#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "cardio/imaging/volume.hpp"

namespace cardio::fibres {

/// Iterative solver settings. CG stops when |b - A x| <= tolerance * |b| (Euclidean norms over the
/// free unknowns, Eigen's criterion) or after max_iterations (then cardio::Error).
struct LaplaceSolverOptions {
  double tolerance = 1e-8;
  int max_iterations = 20000;
};

struct LaplaceStats {
  std::string name;
  std::int64_t unknowns = 0;   ///< free voxels
  std::int64_t dirichlet = 0;  ///< voxels with a fixed value
  int iterations = 0;
  double relative_residual = 0;  ///< |b - A x| / |b| at exit
  double seconds = 0;
};

/// A set of voxels of a grid with their 6-neighbourhood inside the set.
struct VoxelDomain {
  imaging::Grid grid;
  std::vector<std::int64_t> voxels;                     ///< linear indices, strictly ascending
  std::vector<std::array<std::int32_t, 6>> neighbours;  ///< per voxel, by side (0 -i, 1 +i, 2 -j, 3 +j,
                                                        ///< 4 -k, 5 +k): domain index or -1
  std::int64_t size() const { return static_cast<std::int64_t>(voxels.size()); }
  /// Build the neighbour table (throws cardio::Error if `voxels` is not strictly ascending or out of
  /// the grid).
  static VoxelDomain build(const imaging::Grid& grid, std::vector<std::int64_t> voxels);
};

/// Solves div grad u = 0 on the domain voxels. 7-point stencil on voxel centres: neighbour q of p
/// along index axis a (both in the domain) couples with weight 1/h_a^2; a missing neighbour (not in
/// the domain or beyond the grid) is a zero-flux face. `fixed[m]` is the Dirichlet value of domain
/// voxel m, or NaN if free. Dirichlet voxels are eliminated; the SPD system of the free voxels is
/// solved by Eigen's ConjugateGradient (row-major matrix with full storage so that the product runs in
/// parallel, diagonal preconditioner; deterministic at any thread count; about 100 bytes per unknown).
/// `initial` (optional, per domain voxel) is the starting guess for the free voxels.
/// Every 6-connected component of free voxels must touch a Dirichlet voxel, else cardio::Error.
std::vector<double> solve_voxel_laplace(const VoxelDomain& domain, const std::vector<double>& fixed,
                                        const LaplaceSolverOptions& options, LaplaceStats* stats = nullptr,
                                        const std::vector<double>* initial = nullptr);

/// Gradient [1/mm] of a field on the domain voxels: central differences along each index axis,
/// one-sided where one neighbour is outside the domain, zero along an axis with neither neighbour;
/// converted to physical axes by grad_x = direction * diag(1/spacing) * grad_index. Column m
/// belongs to domain voxel m.
Eigen::Matrix3Xd voxel_gradient(const VoxelDomain& domain, const std::vector<double>& values);

}  // namespace cardio::fibres
