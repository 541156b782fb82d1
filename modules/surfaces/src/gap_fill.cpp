/// @file gap_fill.cpp
/// Gap filling between patch rims (see gap_fill.hpp): orient the patches alike, find the rims that
/// face each other, bridge each gap's rims into one polygon, ear-clip it.
#include "gap_fill.hpp"

#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>

namespace cardio::surfaces::detail {
namespace {

/// An open loop directed as its triangles wind (the patch on its left, the gap on its right).
struct Rim {
  std::vector<std::int64_t> v;
  int patch = kNoPatch;
  int component = 0;         ///< connected component of the patch triangles it bounds
  std::vector<Vec3> out;     ///< per vertex: where the surface would continue past the rim
  std::vector<Vec3> normal;  ///< per vertex: the patch's normal
};

/// Connected components of the triangles over edges shared by exactly two, each wound alike
/// (breadth-first; a component that cannot be oriented is left as it is).
std::vector<int> orient_patches(TriangleMesh& m, const EdgeMap& edges) {
  std::vector<int> comp(m.tris.size(), -1);
  std::vector<std::size_t> queue;
  int n = 0;
  for (std::size_t seed = 0; seed < m.tris.size(); ++seed) {
    if (comp[seed] >= 0) continue;
    comp[seed] = n;
    queue.assign(1, seed);
    while (!queue.empty()) {
      const std::size_t t = queue.back();
      queue.pop_back();
      for (std::size_t e = 0; e < 3; ++e) {
        const std::int64_t a = m.tris[t][e], b = m.tris[t][(e + 1) % 3];
        const EdgeUse& u = edges.at(edge_key(a, b));
        if (u.count != 2) continue;
        const std::size_t o = std::size_t(u.t0 == std::int64_t(t) ? u.t1 : u.t0);
        if (comp[o] >= 0) continue;
        comp[o] = n;
        Tri& w = m.tris[o];
        for (std::size_t f = 0; f < 3; ++f)
          if (w[f] == a && w[(f + 1) % 3] == b) std::swap(w[1], w[2]);  // must run b -> a
        queue.push_back(o);
      }
    }
    ++n;
  }
  return comp;
}

/// Whether triangle t runs a -> b.
bool runs(const Tri& t, std::int64_t a, std::int64_t b) {
  for (std::size_t f = 0; f < 3; ++f)
    if (t[f] == a && t[(f + 1) % 3] == b) return true;
  return false;
}

std::vector<Rim> directed_rims(const TriangleMesh& m, const EdgeMap& edges, const std::vector<int>& comp) {
  std::vector<Rim> rims;
  for (const OpenLoop& loop : open_loops(m)) {
    Rim r;
    r.v = loop.vertices;
    r.patch = loop.patch;
    const std::int64_t t0 = edges.at(edge_key(r.v[0], r.v[1])).t0;
    if (!runs(m.tris[std::size_t(t0)], r.v[0], r.v[1])) std::reverse(r.v.begin(), r.v.end());
    r.component = comp[std::size_t(t0)];
    const std::size_t n = r.v.size();
    std::vector<Vec3> edge_out(n), edge_normal(n);
    for (std::size_t k = 0; k < n; ++k) {  // edge k: v[k] -> v[k+1], in its triangle's winding
      const std::int64_t a = r.v[k], b = r.v[(k + 1) % n];
      const EdgeUse& u = edges.at(edge_key(a, b));
      const Tri& t = m.tris[std::size_t(u.t0)];
      const std::int64_t c = t[0] != a && t[0] != b ? t[0] : t[1] != a && t[1] != b ? t[1] : t[2];
      const Vec3 ab = m.points[std::size_t(b)] - m.points[std::size_t(a)];
      edge_normal[k] = ab.cross(m.points[std::size_t(c)] - m.points[std::size_t(a)]).normalized();
      edge_out[k] = ab.cross(edge_normal[k]).normalized();  // away from the triangle, in its plane
    }
    for (std::size_t k = 0; k < n; ++k) {
      r.out.push_back((edge_out[k] + edge_out[(k + n - 1) % n]).normalized());
      r.normal.push_back((edge_normal[k] + edge_normal[(k + n - 1) % n]).normalized());
    }
    rims.push_back(std::move(r));
  }
  return rims;
}

/// The closest vertex pair by which rim a faces rim b.
struct Facing {
  std::size_t a = 0, b = 0;     ///< rims
  std::size_t ia = 0, ib = 0;   ///< vertex positions in them (as found, before any flip)
  std::int64_t va = 0, vb = 0;  ///< the vertices
  double distance = 0;
};

/// For each rim vertex, the nearest vertex of another patch's rim within `width` in the 60-degree cone
/// around its outward direction; returns the closest such pair of each rim pair, and the width of
/// the gap (largest partner distance) per rim in `reach`.
std::vector<Facing> facing_pairs(const TriangleMesh& m, const std::vector<Rim>& rims, double width,
                                 std::vector<double>& reach) {
  using Cell = std::array<std::int64_t, 3>;
  std::map<Cell, std::vector<std::pair<std::size_t, std::size_t>>> grid;  // spatial hash of rim vertices
  auto cell_of = [&](const Vec3& p) {
    return Cell{std::int64_t(std::floor(p.x() / width)), std::int64_t(std::floor(p.y() / width)),
                std::int64_t(std::floor(p.z() / width))};
  };
  for (std::size_t r = 0; r < rims.size(); ++r)
    for (std::size_t k = 0; k < rims[r].v.size(); ++k)
      grid[cell_of(m.points[std::size_t(rims[r].v[k])])].push_back({r, k});
  std::map<std::pair<std::size_t, std::size_t>, Facing> best;
  reach.assign(rims.size(), 0.0);
  for (std::size_t r = 0; r < rims.size(); ++r)
    for (std::size_t k = 0; k < rims[r].v.size(); ++k) {
      const Vec3& p = m.points[std::size_t(rims[r].v[k])];
      const Cell c = cell_of(p);
      Facing f{r, r, k, 0, rims[r].v[k], 0, width};
      for (std::int64_t dx = -1; dx <= 1; ++dx)
        for (std::int64_t dy = -1; dy <= 1; ++dy)
          for (std::int64_t dz = -1; dz <= 1; ++dz) {
            const auto it = grid.find({c[0] + dx, c[1] + dy, c[2] + dz});
            if (it == grid.end()) continue;
            for (const auto& [s, j] : it->second) {
              if (rims[s].patch == rims[r].patch) continue;
              const Vec3 d = m.points[std::size_t(rims[s].v[j])] - p;
              const double len = d.norm();
              if (len <= f.distance && d.dot(rims[r].out[k]) >= 0.5 * len)
                f = {r, s, k, j, rims[r].v[k], rims[s].v[j], len};
            }
          }
      if (f.b == r) continue;
      reach[r] = std::max(reach[r], f.distance);
      const auto key = std::minmax(f.a, f.b);
      const auto found = best.find(key);
      if (found == best.end() || f.distance < found->second.distance) best[key] = f;
    }
  std::vector<Facing> out;
  for (const auto& [key, f] : best) out.push_back(f);
  return out;
}

/// Winds the patch components alike: facing rims of consistently wound patches run in opposite
/// directions. Flips components (and their rims) by a breadth-first walk over the facing pairs.
void orient_components_alike(TriangleMesh& m, std::vector<Rim>& rims, const std::vector<int>& comp,
                             const std::vector<Facing>& pairs) {
  std::map<int, std::vector<std::pair<int, bool>>> links;  // component -> (other, must differ)
  for (const Facing& f : pairs) {
    const Rim &a = rims[f.a], &b = rims[f.b];
    auto tangent = [&](const Rim& r, std::size_t k) {
      const std::size_t n = r.v.size();
      return Vec3(m.points[std::size_t(r.v[(k + 1) % n])] - m.points[std::size_t(r.v[(k + n - 1) % n])]);
    };
    const bool differ = tangent(a, f.ia).dot(tangent(b, f.ib)) > 0;  // parallel: one of them is flipped
    links[a.component].push_back({b.component, differ});
    links[b.component].push_back({a.component, differ});
  }
  std::map<int, bool> flip;
  for (const auto& [seed, unused] : links) {
    if (flip.count(seed)) continue;
    flip[seed] = false;
    std::vector<int> queue{seed};
    while (!queue.empty()) {
      const int c = queue.back();
      queue.pop_back();
      for (const auto& [o, differ] : links[c])
        if (!flip.count(o)) {
          flip[o] = flip[c] != differ;
          queue.push_back(o);
        }
    }
  }
  for (std::size_t t = 0; t < m.tris.size(); ++t)
    if (flip.count(comp[t]) && flip[comp[t]]) std::swap(m.tris[t][1], m.tris[t][2]);
  for (Rim& r : rims)
    if (flip.count(r.component) && flip[r.component]) {
      std::reverse(r.v.begin(), r.v.end());
      std::reverse(r.out.begin(), r.out.end());
      std::reverse(r.normal.begin(), r.normal.end());
      for (Vec3& n : r.normal) n = -n;
    }
}

std::size_t find_root(std::vector<std::size_t>& parent, std::size_t x) {
  while (parent[x] != x) x = parent[x] = parent[parent[x]];
  return x;
}

}  // namespace

namespace {

/// The rims of one gap bridged into a single polygon (the gap on its right): each rim is spliced in
/// at its closest facing pair with a rim already in, as a hole is joined to a polygon's outline. The
/// bridge edges are added to `bridges`.
std::vector<std::int64_t> bridged_polygon(const std::vector<Rim>& rims, std::vector<std::size_t> members,
                                          const std::vector<Facing>& pairs, std::set<std::uint64_t>& bridges) {
  std::vector<std::int64_t> poly = rims[members[0]].v;
  std::set<std::size_t> in{members[0]};
  members.erase(members.begin());
  while (!members.empty()) {
    const Facing* bridge = nullptr;
    for (const Facing& f : pairs) {
      const bool joins = (in.count(f.a) && !in.count(f.b)) || (in.count(f.b) && !in.count(f.a));
      const bool member = std::count(members.begin(), members.end(), in.count(f.a) ? f.b : f.a) > 0;
      if (joins && member && (!bridge || f.distance < bridge->distance)) bridge = &f;
    }
    if (!bridge) break;  // not connected through facing pairs (cannot happen for a union-find gap)
    const bool a_in = in.count(bridge->a) > 0;
    const std::size_t add = a_in ? bridge->b : bridge->a;
    const std::int64_t p = a_in ? bridge->va : bridge->vb, q = a_in ? bridge->vb : bridge->va;
    bridges.insert(edge_key(p, q));
    const std::vector<std::int64_t>& hole = rims[add].v;
    const auto qpos = std::size_t(std::find(hole.begin(), hole.end(), q) - hole.begin());
    const auto ppos = std::find(poly.begin(), poly.end(), p);
    std::vector<std::int64_t> splice;
    for (std::size_t k = 0; k <= hole.size(); ++k) splice.push_back(hole[(qpos + k) % hole.size()]);
    splice.push_back(p);
    poly.insert(ppos + 1, splice.begin(), splice.end());
    in.insert(add);
    members.erase(std::find(members.begin(), members.end(), add));
  }
  return poly;
}

/// Ear clipping of a polygon in space whose inside is on the right of its direction, with the
/// patches' normal at each corner: the shortest new diagonal first among convex ears with an angle
/// of at least asin(s) at the corner, relaxing s when none is left. Returns the triangles (wound as
/// the patches), or nothing if an ear would need a diagonal longer than `max_diagonal`.
std::vector<Tri> ear_clip(std::vector<std::int64_t> poly, const std::vector<Vec3>& points,
                          const std::map<std::int64_t, Vec3>& normal, std::set<std::uint64_t>& edges,
                          double max_diagonal) {
  std::vector<Tri> out;
  static constexpr double kMinSine[] = {0.3, 0.05, 1e-9, -1.0};  // -1: accept reflex ears as a last resort
  while (poly.size() > 3) {
    const std::size_t n = poly.size();
    std::size_t best = n;
    double best_length = max_diagonal;
    for (double min_sine : kMinSine) {
      for (std::size_t i = 0; i < n; ++i) {
        const std::int64_t u = poly[(i + n - 1) % n], v = poly[i], w = poly[(i + 1) % n];
        if (u == w || u == v || v == w || edges.count(edge_key(u, w))) continue;
        const Vec3 &pu = points[std::size_t(u)], &pv = points[std::size_t(v)], &pw = points[std::size_t(w)];
        const Vec3 turn = (pv - pu).cross(pw - pv);
        const double sine = -turn.dot(normal.at(v)) / ((pv - pu).norm() * (pw - pv).norm());  // > 0: convex
        const double length = (pw - pu).norm();
        if (sine >= min_sine && length < best_length) best = i, best_length = length;
      }
      if (best < n) break;
    }
    if (best == n) return {};
    const std::int64_t u = poly[(best + n - 1) % n], v = poly[best], w = poly[(best + 1) % n];
    out.push_back({u, w, v});  // the gap is on the right of u -> v -> w: reversed, it winds as the patches
    edges.insert(edge_key(u, w));
    poly.erase(poly.begin() + std::ptrdiff_t(best));
  }
  if (poly.size() == 3) out.push_back({poly[0], poly[2], poly[1]});
  return out;
}

/// The class of a gap triangle: the one wall patch (not `base_class`) among its corners' rims, the
/// base if all are base, else none.
int gap_triangle_class(const Tri& t, const std::map<std::int64_t, int>& patch_of, int base_class) {
  std::set<int> walls;
  for (std::int64_t v : t)
    if (const int p = patch_of.at(v); p != base_class) walls.insert(p);
  if (walls.empty()) return base_class;
  return walls.size() == 1 ? *walls.begin() : kNoPatch;
}

}  // namespace

std::vector<FilledGap> fill_gaps(TriangleMesh& m, double width_mm, int base_class) {
  if (!(width_mm > 0)) return {};
  const EdgeMap edges = edge_uses(m.tris);
  const std::vector<int> comp = orient_patches(m, edges);
  std::vector<Rim> rims = directed_rims(m, edge_uses(m.tris), comp);
  std::vector<double> reach;
  const std::vector<Facing> pairs = facing_pairs(m, rims, width_mm, reach);
  orient_components_alike(m, rims, comp, pairs);

  std::vector<std::size_t> parent(rims.size());
  std::iota(parent.begin(), parent.end(), 0);
  for (const Facing& f : pairs) parent[find_root(parent, f.a)] = find_root(parent, f.b);
  std::map<std::size_t, std::vector<std::size_t>> gaps;
  for (std::size_t r = 0; r < rims.size(); ++r) gaps[find_root(parent, r)].push_back(r);

  std::set<std::uint64_t> edge_set;
  for (const auto& [k, u] : edge_uses(m.tris)) edge_set.insert(k);
  std::map<std::int64_t, Vec3> normal;
  std::map<std::int64_t, int> patch_of;
  for (const Rim& r : rims)
    for (std::size_t k = 0; k < r.v.size(); ++k) normal[r.v[k]] = r.normal[k], patch_of[r.v[k]] = r.patch;

  std::vector<FilledGap> filled;
  for (const auto& [root, members] : gaps) {
    if (members.size() < 2) continue;
    FilledGap g;
    for (std::size_t r : members) {
      g.rim_patches.push_back(rims[r].patch);
      g.rim_edges += std::int64_t(rims[r].v.size());
      g.width_mm = std::max(g.width_mm, reach[r]);
      for (std::int64_t v : rims[r].v) g.centre += m.points[std::size_t(v)];
    }
    g.centre /= double(g.rim_edges);
    std::set<std::uint64_t> trial = edge_set;
    const std::vector<Tri> tris =
        ear_clip(bridged_polygon(rims, members, pairs, trial), m.points, normal, trial, 3 * width_mm);
    if (tris.empty()) continue;  // left open: the closedness check says where
    edge_set = std::move(trial);
    for (const Tri& t : tris) {
      m.tris.push_back(t);
      m.patch.push_back(gap_triangle_class(t, patch_of, base_class));
    }
    g.triangles = std::int64_t(tris.size());
    filled.push_back(std::move(g));
  }
  return filled;
}

}  // namespace cardio::surfaces::detail
