#include "cardio/meshing/mesh_checks.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <unordered_set>
#include <utility>

namespace cardio::meshing {
namespace {

using imaging::Grid;
using imaging::Index3;
using imaging::RoleVolume;

constexpr std::uint8_t kNoRegion = 255;  ///< myocardium, or a base face (the cavity's opening)

/// The thin places found so far between one pair of regions.
struct Sites {
  std::int64_t voxels = 0, direct_contacts = 0;
  std::vector<Eigen::Vector3d> points;
  double spacing = std::numeric_limits<double>::infinity();
};

/// Region across `side` of myocardium voxel `v`: its role, outside beyond the border, or kNoRegion
/// for myocardium and for faces tagged base.
std::uint8_t region_across(const RoleVolume& roles, std::int64_t v, int side,
                           const std::unordered_set<std::int64_t>& base_faces) {
  const Grid& g = roles.role.grid;
  Index3 n = g.index(v);
  n[std::size_t(side / 2)] += (side % 2) ? 1 : -1;
  if (base_faces.count(v * 6 + side)) return kNoRegion;
  if (!g.contains(n[0], n[1], n[2])) return RoleVolume::kOutside;
  const std::uint8_t r = roles.role.at(n[0], n[1], n[2]);
  return r == RoleVolume::kMyocardium ? kNoRegion : r;
}

std::unordered_set<std::int64_t> base_face_keys(const BoundaryClassification& boundary) {
  std::unordered_set<std::int64_t> keys;
  for (const VoxelFace& f : boundary.faces)
    if (f.tag == SurfaceTag::kBase) keys.insert(f.voxel * 6 + f.side);
  return keys;
}

/// Myocardium voxels with different regions on the two sides along an axis; true if any.
bool add_thin_voxel(const RoleVolume& roles, std::int64_t v, const std::unordered_set<std::int64_t>& base_faces,
                    std::map<std::pair<std::uint8_t, std::uint8_t>, Sites>& sites) {
  const Grid& g = roles.role.grid;
  std::vector<std::pair<std::uint8_t, std::uint8_t>> counted;  // a voxel counts once per pair
  for (int axis = 0; axis < 3; ++axis) {
    const std::uint8_t a = region_across(roles, v, 2 * axis, base_faces);
    const std::uint8_t b = region_across(roles, v, 2 * axis + 1, base_faces);
    if (a == kNoRegion || b == kNoRegion || a == b) continue;
    const std::pair<std::uint8_t, std::uint8_t> pair{std::min(a, b), std::max(a, b)};
    Sites& s = sites[pair];
    s.spacing = std::min(s.spacing, g.spacing[axis]);
    if (std::find(counted.begin(), counted.end(), pair) != counted.end()) continue;
    counted.push_back(pair);
    const Index3 ijk = g.index(v);
    s.points.push_back(g.point(ijk[0], ijk[1], ijk[2]));
    ++s.voxels;
  }
  return !counted.empty();
}

/// Faces where two different cavities touch (each face once, from its lower-index voxel).
void add_direct_contacts(const RoleVolume& roles, std::int64_t v,
                         std::map<std::pair<std::uint8_t, std::uint8_t>, Sites>& sites) {
  const Grid& g = roles.role.grid;
  const std::uint8_t r = roles.role.values[std::size_t(v)];
  const Index3 ijk = g.index(v);
  for (int axis = 0; axis < 3; ++axis) {
    Index3 n = ijk;
    ++n[std::size_t(axis)];
    if (!g.contains(n[0], n[1], n[2])) continue;
    const std::uint8_t q = roles.role.at(n[0], n[1], n[2]);
    if (q < RoleVolume::kFirstCavity || q == r) continue;
    Sites& s = sites[{std::min(r, q), std::max(r, q)}];
    Eigen::Vector3d c{double(ijk[0]), double(ijk[1]), double(ijk[2])};
    c[axis] += 0.5;
    s.points.push_back(g.point(c));
    ++s.direct_contacts;
    s.spacing = std::min(s.spacing, g.spacing[axis]);
  }
}

/// The site nearest the centroid of the sites: a place in the wall, not beside it.
Eigen::Vector3d representative(const std::vector<Eigen::Vector3d>& points) {
  Eigen::Vector3d centroid = Eigen::Vector3d::Zero();
  for (const auto& p : points) centroid += p;
  centroid /= double(points.size());
  return *std::min_element(points.begin(), points.end(), [&](const auto& p, const auto& q) {
    return (p - centroid).squaredNorm() < (q - centroid).squaredNorm();
  });
}

}  // namespace

ThinWalls find_thin_walls(const RoleVolume& roles, const BoundaryClassification& boundary) {
  const std::unordered_set<std::int64_t> base_faces = base_face_keys(boundary);
  std::map<std::pair<std::uint8_t, std::uint8_t>, Sites> sites;
  ThinWalls out;
  for (std::int64_t v = 0; v < roles.role.grid.n_voxels(); ++v) {
    const std::uint8_t r = roles.role.values[std::size_t(v)];
    if (r == RoleVolume::kMyocardium)
      out.voxels += add_thin_voxel(roles, v, base_faces, sites);
    else if (r >= RoleVolume::kFirstCavity)
      add_direct_contacts(roles, v, sites);
  }
  for (const auto& [pair, s] : sites) {
    out.walls.push_back({pair.first, pair.second, s.voxels, s.direct_contacts, representative(s.points), s.spacing});
    out.direct_contacts += s.direct_contacts;
  }
  return out;
}

}  // namespace cardio::meshing
