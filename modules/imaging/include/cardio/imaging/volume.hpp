#pragma once
/// @file volume.hpp
/// Voxel volumes in physical space, independent of ITK (ITK stays inside the imaging sources).
/// A voxel (i, j, k) has its centre at  x = origin + direction * diag(spacing) * (i, j, k)^T  [mm],
/// the ITK/NIfTI-in-LPS/RAS-as-stored convention: `direction` columns are the physical directions of
/// the index axes (orthonormal), `spacing` the voxel edge lengths along them. Voxels are stored with
/// i fastest: linear index = i + nx * (j + ny * k).
#include <Eigen/Core>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace cardio::imaging {

using Index3 = std::array<std::int64_t, 3>;

/// The sampling grid of a volume.
struct Grid {
  Index3 size{0, 0, 0};                                     ///< voxels along i, j, k
  Eigen::Vector3d spacing{1, 1, 1};                         ///< [mm]
  Eigen::Vector3d origin{0, 0, 0};                          ///< centre of voxel (0,0,0) [mm]
  Eigen::Matrix3d direction = Eigen::Matrix3d::Identity();  ///< columns: index axes in physical space

  std::int64_t n_voxels() const { return size[0] * size[1] * size[2]; }
  std::int64_t linear(std::int64_t i, std::int64_t j, std::int64_t k) const { return i + size[0] * (j + size[1] * k); }
  Index3 index(std::int64_t linear_index) const {
    const std::int64_t i = linear_index % size[0];
    const std::int64_t jk = linear_index / size[0];
    return {i, jk % size[1], jk / size[1]};
  }
  bool contains(std::int64_t i, std::int64_t j, std::int64_t k) const {
    return i >= 0 && j >= 0 && k >= 0 && i < size[0] && j < size[1] && k < size[2];
  }
  /// Physical position [mm] of a continuous index (voxel centres at integer indices).
  Eigen::Vector3d point(const Eigen::Vector3d& continuous_index) const {
    return origin + direction * spacing.cwiseProduct(continuous_index);
  }
  Eigen::Vector3d point(std::int64_t i, std::int64_t j, std::int64_t k) const {
    return point(Eigen::Vector3d(double(i), double(j), double(k)));
  }
  /// Continuous index of a physical point (inverse of point()).
  Eigen::Vector3d continuous_index(const Eigen::Vector3d& x) const {
    return (direction.transpose() * (x - origin)).cwiseQuotient(spacing);
  }
  double voxel_volume() const { return spacing.prod(); }
};

/// True if two grids sample the same points (size equal; spacing, origin, direction within tol,
/// relative to the spacing). `why` receives a description of the first difference.
bool same_grid(const Grid& a, const Grid& b, std::string* why = nullptr, double tol = 1e-6);

/// A scalar or vector field sampled on a grid.
template <class T>
struct Volume {
  Grid grid;
  std::vector<T> values;  ///< grid.n_voxels() values, i fastest

  T& at(std::int64_t i, std::int64_t j, std::int64_t k) {
    return values[static_cast<std::size_t>(grid.linear(i, j, k))];
  }
  const T& at(std::int64_t i, std::int64_t j, std::int64_t k) const {
    return values[static_cast<std::size_t>(grid.linear(i, j, k))];
  }
};

using LabelVolume = Volume<std::int32_t>;      ///< segmentation labels
using ScalarVolume = Volume<float>;            ///< e.g. an angle map
using VectorVolume = Volume<Eigen::Vector3f>;  ///< e.g. fibre directions (physical axes after import)

/// What each voxel is for the heart model, derived from the labels by the config's mapping.
/// role 0 = outside, 1 = myocardium, 2 + c = blood pool of cavity c (cavity_names[c]).
struct RoleVolume {
  static constexpr std::uint8_t kOutside = 0;
  static constexpr std::uint8_t kMyocardium = 1;
  static constexpr std::uint8_t kFirstCavity = 2;

  Volume<std::uint8_t> role;
  LabelVolume labels;                     ///< the original labels on the same grid (reported per element)
  std::vector<std::string> cavity_names;  ///< e.g. {"lv", "rv"}

  static std::uint8_t cavity_role(std::size_t c) { return static_cast<std::uint8_t>(kFirstCavity + c); }
};

}  // namespace cardio::imaging

namespace cardio::imaging {

/// Orthonormal material frames of the myocardium voxels: column m belongs to voxel voxels[m]
/// (linear index, ascending). The normal is n = f x s (right-handed).
struct VoxelFrames {
  std::vector<std::int64_t> voxels;
  Eigen::Matrix3Xd fibre;  ///< 3 x voxels.size(), unit
  Eigen::Matrix3Xd sheet;  ///< 3 x voxels.size(), unit, orthogonal to fibre
};

/// Linear indices of all voxels with the given role, ascending.
std::vector<std::int64_t> voxels_with_role(const RoleVolume& roles, std::uint8_t role);

}  // namespace cardio::imaging
