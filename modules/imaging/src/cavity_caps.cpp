// Flat caps in the openings of a derived blood pool (see cavity_caps.hpp).
#include "cavity_caps.hpp"

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <bit>
#include <cmath>
#include <numbers>
#include <utility>

namespace cardio::imaging {
namespace {

/// Box voxel b shifted by d, or -1 beyond the box.
std::int64_t neighbour(const BoxGrid& box, std::int64_t b, const Index3& d) {
  Index3 i = box.index(b);
  for (int a = 0; a < 3; ++a) i[a] += d[a];
  return box.contains(i) ? box.linear(i) : -1;
}

const std::vector<Index3>& face_offsets() {
  static const std::vector<Index3> o{{-1, 0, 0}, {1, 0, 0}, {0, -1, 0}, {0, 1, 0}, {0, 0, -1}, {0, 0, 1}};
  return o;
}

const std::vector<Index3>& all_offsets() {
  static const std::vector<Index3> o = [] {
    std::vector<Index3> v;
    for (std::int64_t k = -1; k <= 1; ++k)
      for (std::int64_t j = -1; j <= 1; ++j)
        for (std::int64_t i = -1; i <= 1; ++i)
          if (i || j || k) v.push_back({i, j, k});
    return v;
  }();
  return o;
}

/// The outside voxels face-adjacent to the pool, grouped into 26-connected openings.
std::vector<std::vector<std::int64_t>> openings_of(const std::vector<std::uint8_t>& pool, std::uint8_t id,
                                                   const std::vector<std::uint8_t>& filled, const BoxGrid& box) {
  std::vector<std::uint8_t> mouth(pool.size(), 0);  // 1: mouth voxel, 2: grouped
  for (std::int64_t b = 0; b < box.n_voxels(); ++b) {
    if (pool[std::size_t(b)] != id) continue;
    for (const Index3& d : face_offsets())
      if (const std::int64_t nb = neighbour(box, b, d); nb >= 0 && !filled[std::size_t(nb)]) mouth[std::size_t(nb)] = 1;
  }
  std::vector<std::vector<std::int64_t>> groups;
  for (std::int64_t seed = 0; seed < box.n_voxels(); ++seed) {
    if (mouth[std::size_t(seed)] != 1) continue;
    std::vector<std::int64_t> group{seed};
    mouth[std::size_t(seed)] = 2;
    for (std::size_t q = 0; q < group.size(); ++q)
      for (const Index3& d : all_offsets())
        if (const std::int64_t nb = neighbour(box, group[q], d); nb >= 0 && mouth[std::size_t(nb)] == 1) {
          mouth[std::size_t(nb)] = 2;
          group.push_back(nb);
        }
    groups.push_back(std::move(group));
  }
  return groups;
}

/// The least-squares plane of an opening's rim, its normal pointing away from the pool.
struct RimPlane {
  Eigen::Vector3d centre, normal, u, v;
  std::vector<Eigen::Vector2d> rim;  ///< the wall at the opening projected into the plane (u, v)
  double top = 0;                    ///< [mm] height of the rim's top (90th percentile)
  double height(const Eigen::Vector3d& x) const { return (x - centre).dot(normal); }
  /// Wall voxels in at least 15 of 16 directions around x's projection (a point beyond a convex rim
  /// sees it in at most half of them; one direction may miss between discrete voxels).
  bool inside(const Eigen::Vector3d& x) const {
    const Eigen::Vector2d q((x - centre).dot(u), (x - centre).dot(v));
    constexpr int kSectors = 16, kMinSectors = 15;
    std::uint32_t seen = 0;
    for (const Eigen::Vector2d& p : rim) {
      const double angle = std::atan2(p.y() - q.y(), p.x() - q.x()) + std::numbers::pi;  // [0, 2 pi]
      seen |= 1u << std::min(kSectors - 1, int(angle / (2 * std::numbers::pi) * kSectors));
    }
    return std::popcount(seen) >= kMinSectors;
  }
};

/// The wall at the opening, projected into its plane: the myocardium voxels within two voxels
/// below the rim's top and within two voxels of the rim's radius. Wider than the rim itself, which
/// has gaps where the closing filled the corner between the wall and the cap.
std::vector<Eigen::Vector2d> wall_around(const RimPlane& plane, double radius,
                                         const std::vector<std::uint8_t>& myocardium, const BoxGrid& box) {
  const Eigen::Vector3d n_index = box.grid->direction.transpose() * plane.normal;
  const double band = 2 * n_index.cwiseAbs().dot(box.grid->spacing);
  const double reach = radius + 2 * box.grid->spacing.maxCoeff();
  std::vector<Eigen::Vector2d> wall;
  for (std::int64_t b = 0; b < box.n_voxels(); ++b) {
    if (!myocardium[std::size_t(b)]) continue;
    const Eigen::Vector3d p = box.point(b);
    const double h = plane.height(p);
    if (h > plane.top || h < plane.top - band) continue;
    const Eigen::Vector2d q((p - plane.centre).dot(plane.u), (p - plane.centre).dot(plane.v));
    if (q.norm() <= reach) wall.push_back(q);
  }
  return wall;
}

bool fit_rim_plane(const std::vector<std::int64_t>& opening, const std::vector<std::uint8_t>& myocardium,
                   const Eigen::Vector3d& pool_centre, const BoxGrid& box, RimPlane& plane) {
  std::vector<std::uint8_t> is_rim(myocardium.size(), 0);
  std::vector<Eigen::Vector3d> rim;
  for (const std::int64_t b : opening)
    for (const Index3& d : all_offsets())
      if (const std::int64_t nb = neighbour(box, b, d);
          nb >= 0 && myocardium[std::size_t(nb)] && !is_rim[std::size_t(nb)]) {
        is_rim[std::size_t(nb)] = 1;
        rim.push_back(box.point(nb));
      }
  if (rim.size() < 3) return false;
  Eigen::Vector3d centre = Eigen::Vector3d::Zero();
  for (const auto& p : rim) centre += p;
  centre /= double(rim.size());
  Eigen::Matrix3d cov = Eigen::Matrix3d::Zero();
  for (const auto& p : rim) cov += (p - centre) * (p - centre).transpose();
  const Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> eig(cov);  // ascending eigenvalues
  plane.centre = centre;
  plane.normal = eig.eigenvectors().col(0);
  if (plane.normal.dot(centre - pool_centre) < 0) plane.normal = -plane.normal;
  plane.u = eig.eigenvectors().col(2);
  plane.v = plane.normal.cross(plane.u);
  // The rim also holds wall voxels beside the pool below the opening; the cap ends at its top,
  // where the wall was cut (a high percentile: one stray voxel does not lift it).
  std::vector<double> heights;
  double radius = 0;
  for (const auto& p : rim) {
    heights.push_back(plane.height(p));
    radius = std::max(radius, (p - centre - plane.height(p) * plane.normal).norm());
  }
  std::sort(heights.begin(), heights.end());
  plane.top = heights[std::size_t(0.9 * double(heights.size() - 1))] + 1e-6;
  plane.rim = wall_around(plane, radius, myocardium, box);
  return true;
}

/// Centre [mm] and voxel count of pool `id`.
std::pair<Eigen::Vector3d, std::int64_t> pool_centre(const std::vector<std::uint8_t>& pool, std::uint8_t id,
                                                     const BoxGrid& box) {
  Eigen::Vector3d sum = Eigen::Vector3d::Zero();
  std::int64_t n = 0;
  for (std::int64_t b = 0; b < box.n_voxels(); ++b)
    if (pool[std::size_t(b)] == id) sum += box.point(b), ++n;
  return {sum / double(std::max<std::int64_t>(n, 1)), n};
}

}  // namespace

CapReport cap_openings(std::vector<std::uint8_t>& pool, std::uint8_t id, const std::vector<std::uint8_t>& myocardium,
                       const std::vector<std::uint8_t>& filled, const BoxGrid& box, double max_depth_mm) {
  CapReport report;
  const auto [centre, pool_voxels] = pool_centre(pool, id, box);
  for (const std::vector<std::int64_t>& opening : openings_of(pool, id, filled, box)) {
    ++report.openings;
    RimPlane plane;
    if (!fit_rim_plane(opening, myocardium, centre, box, plane)) continue;
    auto joins = [&](std::int64_t b) {
      if (b < 0 || filled[std::size_t(b)] || pool[std::size_t(b)]) return false;
      const double h = plane.height(box.point(b));
      return h <= plane.top && h >= plane.top - max_depth_mm && plane.inside(box.point(b));
    };
    std::vector<std::int64_t> cap;  // grown breadth first, face by face
    for (const std::int64_t b : opening)
      if (joins(b)) pool[std::size_t(b)] = id, cap.push_back(b);
    for (std::size_t q = 0; q < cap.size(); ++q)
      for (const Index3& d : face_offsets())
        if (const std::int64_t nb = neighbour(box, cap[q], d); joins(nb)) pool[std::size_t(nb)] = id, cap.push_back(nb);
    // A dent is a fraction of its pool; a cap larger than the pool has leaked past a low rim.
    if (std::int64_t(cap.size()) > pool_voxels) {
      for (const std::int64_t b : cap) pool[std::size_t(b)] = 0;
      ++report.refused;
      continue;
    }
    report.voxels += std::int64_t(cap.size());
  }
  return report;
}

}  // namespace cardio::imaging
