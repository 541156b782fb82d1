#pragma once
/// @file cavity_caps.hpp (private)
/// The working box of derive_cavities and the flat caps of a pool's openings.
#include <array>
#include <cstdint>
#include <vector>

#include "cardio/imaging/volume.hpp"

namespace cardio::imaging {

/// A box of voxels on an image's grid, i fastest; `lo` (may be negative) is the image index of box
/// voxel (0, 0, 0). Box voxels beyond the image are background.
struct BoxGrid {
  const Grid* grid = nullptr;  ///< the image's grid (not owned)
  Index3 lo{0, 0, 0}, size{0, 0, 0};

  std::int64_t n_voxels() const { return size[0] * size[1] * size[2]; }
  std::int64_t stride(int axis) const { return axis == 0 ? 1 : axis == 1 ? size[0] : size[0] * size[1]; }
  Index3 index(std::int64_t b) const { return {b % size[0], (b / size[0]) % size[1], b / (size[0] * size[1])}; }
  bool contains(const Index3& i) const {
    return i[0] >= 0 && i[1] >= 0 && i[2] >= 0 && i[0] < size[0] && i[1] < size[1] && i[2] < size[2];
  }
  std::int64_t linear(const Index3& i) const { return i[0] + size[0] * (i[1] + size[1] * i[2]); }
  /// The image's linear index of box voxel b, or -1 beyond the image.
  std::int64_t image_voxel(std::int64_t b) const {
    const Index3 i = index(b);
    const Index3 g{i[0] + lo[0], i[1] + lo[1], i[2] + lo[2]};
    return grid->contains(g[0], g[1], g[2]) ? grid->linear(g[0], g[1], g[2]) : -1;
  }
  /// Physical centre [mm] of box voxel b.
  Eigen::Vector3d point(std::int64_t b) const {
    const Index3 i = index(b);
    return grid->point(i[0] + lo[0], i[1] + lo[1], i[2] + lo[2]);
  }
  double voxel_volume() const { return grid->voxel_volume(); }
  /// [mm^2] area of a voxel face normal to each index axis.
  std::array<double, 3> face_areas() const {
    const Eigen::Vector3d& s = grid->spacing;
    return {s[1] * s[2], s[0] * s[2], s[0] * s[1]};
  }
};

struct CapReport {
  std::int64_t openings = 0;  ///< openings found (outside regions touching the pool)
  std::int64_t voxels = 0;    ///< voxels added to the pool
  std::int64_t refused = 0;   ///< openings left uncapped: their cap would outgrow the pool (a leak)
};

/// Caps each opening of pool `id` flat. The opening's outside voxels touching the pool are
/// grouped (26-connected); the plane of each group's rim (myocardium voxels beside it) is fitted
/// by least squares, and the outside voxels (not `filled`) that are on the pool's side of the rim's
/// top (the 90th percentile of the rim's heights above the plane), within `max_depth_mm` of it and
/// inside the rim (rim voxels all round, in projection) join the pool, grown face by face from the
/// pool. A cap with more voxels than the pool is refused (it leaked past a low rim; the opening
/// keeps its dent). `pool` is updated.
CapReport cap_openings(std::vector<std::uint8_t>& pool, std::uint8_t id, const std::vector<std::uint8_t>& myocardium,
                       const std::vector<std::uint8_t>& filled, const BoxGrid& box, double max_depth_mm);

}  // namespace cardio::imaging
