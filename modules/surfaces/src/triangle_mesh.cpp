/// @file triangle_mesh.cpp
/// Topology and volumes of classified triangle meshes (see triangle_mesh.hpp).
#include "triangle_mesh.hpp"

#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>
#include <map>

#include "cardio/core/error.hpp"

namespace cardio::surfaces::detail {

std::uint64_t edge_key(std::int64_t a, std::int64_t b) {
  if (a > b) std::swap(a, b);
  return (std::uint64_t(a) << 32) | std::uint64_t(b);
}

EdgeMap edge_uses(const std::vector<Tri>& tris) {
  EdgeMap edges;
  edges.reserve(2 * tris.size());
  for (std::size_t t = 0; t < tris.size(); ++t)
    for (std::size_t e = 0; e < 3; ++e) {
      EdgeUse& u = edges[edge_key(tris[t][e], tris[t][(e + 1) % 3])];
      (u.count == 0 ? u.t0 : u.t1) = std::int64_t(t);
      ++u.count;
    }
  return edges;
}

Vec3 OpenLoop::centroid(const std::vector<Vec3>& points) const {
  Vec3 c = Vec3::Zero();
  for (std::int64_t v : vertices) c += points[std::size_t(v)];
  return c / double(std::max<std::size_t>(1, vertices.size()));
}

std::vector<OpenLoop> open_loops(const TriangleMesh& m) {
  const EdgeMap edges = edge_uses(m.tris);
  // Open edges sorted, so that the loops come out in the same order on every run.
  std::vector<std::pair<std::uint64_t, std::int64_t>> open;  // (key, triangle)
  for (const auto& [k, u] : edges)
    if (u.count == 1) open.emplace_back(k, u.t0);
  std::sort(open.begin(), open.end());
  std::map<std::int64_t, std::vector<std::size_t>> at;  // vertex -> its open edges
  auto ends = [&](std::size_t e) {
    return std::array<std::int64_t, 2>{std::int64_t(open[e].first >> 32), std::int64_t(open[e].first & 0xffffffffu)};
  };
  for (std::size_t e = 0; e < open.size(); ++e)
    for (std::int64_t v : ends(e)) at[v].push_back(e);

  std::vector<char> used(open.size(), 0);
  std::vector<OpenLoop> loops;
  for (std::size_t e0 = 0; e0 < open.size(); ++e0) {
    if (used[e0]) continue;
    OpenLoop loop;
    loop.patch = m.patch[std::size_t(open[e0].second)];
    const std::int64_t start = ends(e0)[0];
    std::int64_t v = start;
    bool closed = false;
    for (std::size_t e = e0; e < open.size();) {
      used[e] = 1;
      loop.vertices.push_back(v);
      const auto ab = ends(e);
      v = ab[0] == v ? ab[1] : ab[0];
      if (v == start) {
        closed = true;
        break;
      }
      std::size_t next = open.size();
      for (std::size_t f : at[v])
        if (!used[f]) {
          next = f;
          break;
        }
      e = next;
    }
    if (closed && loop.vertices.size() >= 3) loops.push_back(std::move(loop));
  }
  return loops;
}

EdgeCounts count_edges(const TriangleMesh& m, const EdgeMap& edges) {
  EdgeCounts c;
  for (const auto& [k, u] : edges) {
    c.nonmanifold += u.count > 2;
    if (u.count == 1) {
      ++c.open;
      ++c.open_by_patch[m.patch[std::size_t(u.t0)]];
    }
  }
  return c;
}

double signed_volume6(const std::vector<Vec3>& p, const Tri& t, const Vec3& o) {
  return (p[std::size_t(t[0])] - o).dot((p[std::size_t(t[1])] - o).cross(p[std::size_t(t[2])] - o));
}

namespace {

/// Whether triangle w runs the edge a -> b (in its stored order).
bool runs(const Tri& w, std::int64_t a, std::int64_t b) {
  for (std::size_t f = 0; f < 3; ++f)
    if (w[f] == a && w[(f + 1) % 3] == b) return true;
  return false;
}

/// Ray-parity inside test of q against the triangles of component c (Moller-Trumbore); majority over
/// three skew rays so that a ray grazing an edge cannot flip the answer.
bool inside_component(const TriangleMesh& m, const std::vector<int>& comp, int c, const Vec3& q) {
  static const std::array<Vec3, 3> dirs{Vec3(0.5773, 0.5918, 0.5627).normalized(),
                                        Vec3(-0.4127, 0.8139, -0.4091).normalized(),
                                        Vec3(0.7071, -0.3162, -0.6325).normalized()};
  int votes = 0;
  for (const Vec3& d : dirs) {
    int hits = 0;
    for (std::size_t t = 0; t < m.tris.size(); ++t) {
      if (comp[t] != c) continue;
      const Vec3& p0 = m.points[std::size_t(m.tris[t][0])];
      const Vec3 e1 = m.points[std::size_t(m.tris[t][1])] - p0, e2 = m.points[std::size_t(m.tris[t][2])] - p0;
      const Vec3 h = d.cross(e2);
      const double det = e1.dot(h);
      if (std::abs(det) < 1e-300) continue;
      const Vec3 s = q - p0;
      const double u = s.dot(h) / det;
      if (u < 0 || u > 1) continue;
      const Vec3 qv = s.cross(e1);
      const double v = d.dot(qv) / det;
      if (v < 0 || u + v > 1) continue;
      if (e2.dot(qv) / det > 0) ++hits;
    }
    votes += hits % 2;
  }
  return votes >= 2;
}

}  // namespace

Components orient_outward(TriangleMesh& m, const EdgeMap& edges, const Vec3& centre, const std::string& source) {
  Components out;
  out.of_triangle.assign(m.tris.size(), -1);
  std::vector<char> flip(m.tris.size(), 0);
  auto oriented = [&](std::size_t t) {
    Tri v = m.tris[t];
    if (flip[t]) std::swap(v[1], v[2]);
    return v;
  };
  std::vector<std::size_t> queue, members;
  for (std::size_t seed = 0; seed < m.tris.size(); ++seed) {
    if (out.of_triangle[seed] >= 0) continue;
    const int c = int(out.volume.size());
    out.of_triangle[seed] = c;
    queue.assign(1, seed);
    members.clear();
    while (!queue.empty()) {  // breadth-first over shared edges
      const std::size_t t = queue.back();
      queue.pop_back();
      members.push_back(t);
      const Tri v = oriented(t);
      for (std::size_t e = 0; e < 3; ++e) {
        const std::int64_t a = v[e], b = v[(e + 1) % 3];
        const EdgeUse& u = edges.at(edge_key(a, b));
        const std::size_t n = std::size_t(u.t0 == std::int64_t(t) ? u.t1 : u.t0);
        // The neighbour must run the shared edge b -> a; if it runs a -> b as stored, it is flipped.
        const char need = runs(m.tris[n], a, b) ? 1 : 0;
        if (out.of_triangle[n] < 0) {
          out.of_triangle[n] = c;
          flip[n] = need;
          queue.push_back(n);
        } else if (flip[n] != need) {
          CARDIO_FAIL(source << " cannot be oriented consistently (self-overlapping or duplicated triangles near "
                             << m.points[std::size_t(a)].transpose() << " mm)");
        }
      }
    }
    double vol6 = 0;
    for (std::size_t t : members) vol6 += signed_volume6(m.points, oriented(t), centre);
    if (vol6 < 0)
      for (std::size_t t : members) flip[t] ^= 1;
    out.volume.push_back(std::abs(vol6) / 6);
  }
  for (std::size_t t = 0; t < m.tris.size(); ++t) m.tris[t] = oriented(t);
  return out;
}

double even_odd_volume(const TriangleMesh& m, const Components& c) {
  const int n = int(c.volume.size());
  std::vector<std::vector<std::size_t>> members{std::size_t(n)};
  for (std::size_t t = 0; t < m.tris.size(); ++t) members[std::size_t(c.of_triangle[t])].push_back(t);
  double volume = 0;
  for (int k = 0; k < n; ++k) {
    // Nesting depth by a majority over up to 7 triangles spread over the component, so that a
    // component that pokes out of another near one spot (a cap above another) is still nested.
    int depth = 0;
    const std::vector<std::size_t>& tris = members[std::size_t(k)];
    for (int d = 0; d < n && n > 1; ++d) {
      if (d == k) continue;
      const std::size_t samples = std::min<std::size_t>(7, tris.size());
      std::size_t inside = 0;
      for (std::size_t s = 0; s < samples; ++s) {
        const Tri& t = m.tris[tris[s * tris.size() / samples]];
        const Vec3 q = (m.points[std::size_t(t[0])] + m.points[std::size_t(t[1])] + m.points[std::size_t(t[2])]) / 3;
        inside += inside_component(m, c.of_triangle, d, q);
      }
      depth += 2 * inside > samples;
    }
    volume += (depth % 2 == 0 ? 1 : -1) * c.volume[std::size_t(k)];
  }
  return volume;
}

}  // namespace cardio::surfaces::detail
