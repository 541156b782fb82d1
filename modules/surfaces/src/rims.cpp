/// @file rims.cpp
/// Stitching and capping open rims (see rims.hpp). Facing rims are bridged, never merged: points stay
/// where the file put them, so a gap wider than the merge tolerance is closed by new triangles only.
#include "rims.hpp"

#include <set>

#include "gap_fill.hpp"

#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

namespace cardio::surfaces::detail {
namespace {

double point_segment_distance(const Vec3& p, const Vec3& a, const Vec3& b) {
  const Vec3 ab = b - a;
  const double len2 = ab.squaredNorm();
  const double s = len2 > 0 ? std::clamp((p - a).dot(ab) / len2, 0.0, 1.0) : 0.0;
  return (a + s * ab - p).norm();
}

/// The largest distance from a vertex of `a` to the polyline of `b`.
double directed_gap(const std::vector<Vec3>& points, const OpenLoop& a, const OpenLoop& b) {
  double worst = 0;
  const std::size_t n = b.vertices.size();
  for (std::int64_t v : a.vertices) {
    const Vec3& p = points[std::size_t(v)];
    double best = std::numeric_limits<double>::infinity();
    for (std::size_t k = 0; k < n; ++k)
      best = std::min(best, point_segment_distance(p, points[std::size_t(b.vertices[k])],
                                                   points[std::size_t(b.vertices[(k + 1) % n])]));
    worst = std::max(worst, best);
  }
  return worst;
}

void add_triangles(TriangleMesh& m, const std::vector<Tri>& tris, int cls) {
  for (const Tri& t : tris) {
    m.tris.push_back(t);
    m.patch.push_back(cls);
  }
}

}  // namespace

double loop_gap(const std::vector<Vec3>& points, const OpenLoop& a, const OpenLoop& b) {
  return std::max(directed_gap(points, a, b), directed_gap(points, b, a));
}

std::vector<RimClosure> close_rims(TriangleMesh& m, double stitch_width_mm, bool cap, int cap_class,
                                   const PatchNamer& name) {
  std::vector<RimClosure> done;
  for (const FilledGap& g : fill_gaps(m, stitch_width_mm, cap_class)) {
    std::string patches;
    for (int p : std::set<int>(g.rim_patches.begin(), g.rim_patches.end()))
      patches += (patches.empty() ? "" : " + ") + name(p);
    done.push_back({RimClosure::Kind::stitched, patches, g.rim_edges, g.width_mm, g.centre, g.triangles});
  }
  if (!cap) return done;
  for (const OpenLoop& loop : open_loops(m)) {
    const Vec3 centre = loop.centroid(m.points);
    m.points.push_back(centre);
    const std::int64_t c = std::int64_t(m.points.size()) - 1;
    std::vector<Tri> fan;
    for (std::size_t k = 0; k < loop.vertices.size(); ++k)
      fan.push_back({loop.vertices[k], loop.vertices[(k + 1) % loop.vertices.size()], c});
    add_triangles(m, fan, cap_class);
    done.push_back({RimClosure::Kind::capped, name(loop.patch), std::int64_t(loop.vertices.size()), 0.0, centre,
                    std::int64_t(fan.size())});
  }
  return done;
}

std::string describe_open_loops(const TriangleMesh& m, const PatchNamer& name, std::size_t max_loops) {
  const std::vector<OpenLoop> loops = open_loops(m);
  auto closest = [&](const OpenLoop& a, const OpenLoop& b) {  // smallest vertex distance
    double d = std::numeric_limits<double>::infinity();
    for (std::int64_t u : a.vertices)
      for (std::int64_t v : b.vertices) d = std::min(d, (m.points[std::size_t(u)] - m.points[std::size_t(v)]).norm());
    return d;
  };
  std::ostringstream os;
  os.precision(4);
  os << loops.size() << " open loop" << (loops.size() == 1 ? "" : "s");
  for (std::size_t l = 0; l < std::min(loops.size(), max_loops); ++l) {
    const OpenLoop& loop = loops[l];
    const Vec3 c = loop.centroid(m.points);
    os << (l == 0 ? ": " : "; ") << name(loop.patch) << ", " << loop.vertices.size() << " edges around (" << c.x()
       << ", " << c.y() << ", " << c.z() << ") mm";
    double near = std::numeric_limits<double>::infinity();
    std::size_t nearest = l;
    for (std::size_t k = 0; k < loops.size(); ++k)
      if (const double d = k == l ? near : closest(loop, loops[k]); d < near) near = d, nearest = k;
    if (nearest == l) continue;
    const OpenLoop& other = loops[nearest];
    os << "; the nearest open loop (" << name(other.patch) << ") is " << near << " mm away at its closest and "
       << loop_gap(m.points, loop, other) << " mm at its widest";
    if (other.patch == loop.patch) os << " (same patch: never stitched)";
  }
  if (loops.size() > max_loops) os << "; ...";
  return os.str();
}

}  // namespace cardio::surfaces::detail
