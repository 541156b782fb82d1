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

/// What the scan needs besides the roles: where the base is.
struct Scan {
  const RoleVolume& roles;
  std::unordered_set<std::int64_t> base_faces;  ///< voxel * 6 + side of the faces tagged base
  bool has_base = false;                        ///< some face is base: the axis is a base plane
  Eigen::Vector3d base_point, base_normal;
  double rim_band = 0;  ///< [mm] distance from the base plane within which the opening's rim lies
};

Scan make_scan(const RoleVolume& roles, const BoundaryClassification& boundary) {
  Scan scan{
      roles, {}, false, boundary.axis.base_point, boundary.axis.base_normal, 2 * roles.role.grid.spacing.maxCoeff()};
  for (const VoxelFace& f : boundary.faces)
    if (f.tag == SurfaceTag::kBase) scan.base_faces.insert(f.voxel * 6 + f.side);
  scan.has_base = !scan.base_faces.empty();
  return scan;
}

/// Outside across a face that looks towards the base, next to the base plane: the rim of a valve
/// opening that is not quite on the plane (real bases are not flat), not a wall.
bool opening_rim(const Scan& scan, const Index3& ijk, int side) {
  if (!scan.has_base) return false;
  const Grid& g = scan.roles.role.grid;
  const double height = (g.point(ijk[0], ijk[1], ijk[2]) - scan.base_point).dot(scan.base_normal);
  return std::abs(height) <= scan.rim_band && side_normal(g, VoxelSide(side)).dot(scan.base_normal) > 0.5;
}

/// Region across `side` of myocardium voxel `v`: its role, outside beyond the border, or kNoRegion
/// for myocardium, for faces tagged base and for the rim of an opening.
std::uint8_t region_across(const Scan& scan, std::int64_t v, int side) {
  const Grid& g = scan.roles.role.grid;
  const Index3 ijk = g.index(v);
  Index3 n = ijk;
  n[std::size_t(side / 2)] += (side % 2) ? 1 : -1;
  if (scan.base_faces.count(v * 6 + side)) return kNoRegion;
  const std::uint8_t r = g.contains(n[0], n[1], n[2]) ? scan.roles.role.at(n[0], n[1], n[2]) : RoleVolume::kOutside;
  if (r == RoleVolume::kMyocardium || (r == RoleVolume::kOutside && opening_rim(scan, ijk, side))) return kNoRegion;
  return r;
}

/// Myocardium voxels with different regions on the two sides along an axis; true if any.
bool add_thin_voxel(const Scan& scan, std::int64_t v, std::map<std::pair<std::uint8_t, std::uint8_t>, Sites>& sites) {
  const Grid& g = scan.roles.role.grid;
  std::vector<std::pair<std::uint8_t, std::uint8_t>> counted;  // a voxel counts once per pair
  for (int axis = 0; axis < 3; ++axis) {
    const std::uint8_t a = region_across(scan, v, 2 * axis);
    const std::uint8_t b = region_across(scan, v, 2 * axis + 1);
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
  const Scan scan = make_scan(roles, boundary);
  std::map<std::pair<std::uint8_t, std::uint8_t>, Sites> sites;
  ThinWalls out;
  for (std::int64_t v = 0; v < roles.role.grid.n_voxels(); ++v) {
    const std::uint8_t r = roles.role.values[std::size_t(v)];
    if (r == RoleVolume::kMyocardium)
      out.voxels += add_thin_voxel(scan, v, sites);
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
