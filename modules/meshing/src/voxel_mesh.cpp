#include "cardio/meshing/voxel_mesh.hpp"

#include <algorithm>
#include <map>
#include <sstream>
#include <utility>

#include "cardio/core/error.hpp"
#include "cardio/core/parallel.hpp"

namespace cardio::meshing {
namespace {

using imaging::Grid;
using imaging::Index3;
using imaging::RoleVolume;

/// Lattice offsets of the 8 VTK hexahedron nodes (mesh.hpp). If the grid's index axes are
/// left-handed (det(direction) < 0, common for LPS images), the k offsets are mirrored so that
/// every element keeps a positive volume; the -k/+k voxel sides then map to local faces +z/-z.
struct Lattice {
  std::array<Index3, 8> offset;
  std::array<int, 6> face_of_side;
};

Lattice lattice_for(const Grid& g) {
  static constexpr std::array<Index3, 8> kVtk{
      {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}, {0, 0, 1}, {1, 0, 1}, {1, 1, 1}, {0, 1, 1}}};
  Lattice l{kVtk, {0, 1, 2, 3, 4, 5}};
  if (g.direction.determinant() < 0) {
    for (auto& o : l.offset) o[2] = 1 - o[2];
    l.face_of_side = {0, 1, 2, 3, 5, 4};
  }
  return l;
}

}  // namespace

Eigen::Matrix3Xd lattice_positions(const VoxelMesh& m) {
  const Lattice lattice = lattice_for(m.grid);
  Eigen::Matrix3Xd x(3, m.mesh.n_nodes());
  for (std::size_t e = 0; e < m.mesh.hexes.size(); ++e) {
    const Index3 ijk = m.grid.index(m.voxel[e]);
    for (int n = 0; n < 8; ++n) {  // corner ijk + offset of the voxel centred at ijk: index ijk + o - 1/2
      const Index3& o = lattice.offset[std::size_t(n)];
      x.col(m.mesh.hexes[e][std::size_t(n)]) = m.grid.point(
          Eigen::Vector3d(double(ijk[0] + o[0]) - 0.5, double(ijk[1] + o[1]) - 0.5, double(ijk[2] + o[2]) - 0.5));
    }
  }
  return x;
}

Eigen::Matrix3Xd surface_points(const CavitySurface& cavity, const Eigen::Matrix3Xd& x) {
  const auto n = static_cast<Eigen::Index>(cavity.nodes.size());
  Eigen::Matrix3Xd p(3, n + (cavity.has_lid() ? 1 : 0));
  // In parallel: the beat gathers every cavity's points each step (circulation's volume projection).
  parallel_for(n, [&](std::int64_t i) { p.col(i) = x.col(cavity.nodes[static_cast<std::size_t>(i)]); });
  if (cavity.has_lid()) {
    Eigen::Vector3d centre = Eigen::Vector3d::Zero();
    for (std::int32_t r : cavity.rim) centre += p.col(r);
    p.col(n) = centre / double(cavity.rim.size());
  }
  return p;
}

double cavity_volume(const CavitySurface& cavity, const Eigen::Matrix3Xd& x) {
  const Eigen::Matrix3Xd p = surface_points(cavity, x);
  double six_v = 0;  // Promayon et al. 1996, eq. of the enclosed volume: sum of signed tetrahedra
  for (const auto& t : cavity.triangles) six_v += p.col(t[0]).dot(p.col(t[1]).cross(p.col(t[2])));
  return six_v / 6.0;
}

std::string check_closed_surface(const CavitySurface& cavity, const Eigen::Matrix3Xd& x) {
  std::map<std::pair<std::int32_t, std::int32_t>, int> directed;
  for (const auto& t : cavity.triangles)
    for (int e = 0; e < 3; ++e) ++directed[{t[e], t[(e + 1) % 3]}];
  std::int64_t unmatched = 0;
  for (const auto& [edge, count] : directed) {
    const auto it = directed.find({edge.second, edge.first});
    if (it == directed.end() || it->second != count) ++unmatched;
  }
  std::ostringstream os;
  if (unmatched > 0) {
    os << "cavity surface '" << cavity.name << "' is not closed and consistently oriented: " << unmatched
       << " directed edges without their reverse";
    return os.str();
  }
  const double v = cavity_volume(cavity, x);
  if (!(v > 0)) {
    os << "cavity surface '" << cavity.name << "' encloses a non-positive volume (" << v << " mm^3)";
    return os.str();
  }
  return {};
}

IslandReport drop_islands(RoleVolume& roles, bool keep) {
  const Grid& g = roles.role.grid;
  auto& role = roles.role.values;
  std::vector<std::int32_t> component(role.size(), -1);
  std::vector<std::int64_t> sizes;
  std::vector<std::int64_t> stack;
  for (std::int64_t seed = 0; seed < g.n_voxels(); ++seed) {
    if (role[std::size_t(seed)] != RoleVolume::kMyocardium || component[std::size_t(seed)] >= 0) continue;
    const auto id = static_cast<std::int32_t>(sizes.size());
    std::int64_t size = 0;
    component[std::size_t(seed)] = id;
    stack.push_back(seed);
    while (!stack.empty()) {
      const std::int64_t v = stack.back();
      stack.pop_back();
      ++size;
      const Index3 ijk = g.index(v);
      for (int side = 0; side < 6; ++side) {
        Index3 n = ijk;
        n[side / 2] += (side % 2) ? 1 : -1;
        if (!g.contains(n[0], n[1], n[2])) continue;
        const std::int64_t w = g.linear(n[0], n[1], n[2]);
        if (role[std::size_t(w)] == RoleVolume::kMyocardium && component[std::size_t(w)] < 0) {
          component[std::size_t(w)] = id;
          stack.push_back(w);
        }
      }
    }
    sizes.push_back(size);
  }
  IslandReport report;
  report.components = static_cast<std::int64_t>(sizes.size());
  if (sizes.empty()) return report;
  const auto largest = static_cast<std::int32_t>(std::max_element(sizes.begin(), sizes.end()) - sizes.begin());
  for (std::size_t c = 0; c < sizes.size(); ++c) {
    if (static_cast<std::int32_t>(c) == largest || keep) {
      report.kept_voxels += sizes[c];
    } else {
      ++report.dropped_components;
      report.dropped_voxels += sizes[c];
    }
  }
  if (!keep && report.dropped_components > 0)
    for (std::size_t v = 0; v < role.size(); ++v)
      if (component[v] >= 0 && component[v] != largest) role[v] = RoleVolume::kOutside;
  return report;
}

namespace {

/// The cavity's endocardial quads (reversed: normals out of the blood pool) split into triangles,
/// closed over the rim by a fan to the lid centre. A rim edge is a directed quad edge not matched
/// by its reverse; the matching is by counts, so voxel staircases with edges shared by four faces
/// stay consistent.
CavitySurface make_cavity_surface(const std::string& name, const std::vector<mechanics::Quad>& quads) {
  CavitySurface cavity;
  cavity.name = name;
  for (const auto& q : quads) cavity.nodes.insert(cavity.nodes.end(), q.begin(), q.end());
  std::sort(cavity.nodes.begin(), cavity.nodes.end());
  cavity.nodes.erase(std::unique(cavity.nodes.begin(), cavity.nodes.end()), cavity.nodes.end());
  const auto local = [&](std::int32_t node) {
    return static_cast<std::int32_t>(std::lower_bound(cavity.nodes.begin(), cavity.nodes.end(), node) -
                                     cavity.nodes.begin());
  };
  std::map<std::pair<std::int32_t, std::int32_t>, int> directed;
  for (const auto& q : quads) {
    const std::array<std::int32_t, 4> r{local(q[0]), local(q[3]), local(q[2]), local(q[1])};  // reversed
    cavity.triangles.push_back({r[0], r[1], r[2]});
    cavity.triangles.push_back({r[0], r[2], r[3]});
    for (int e = 0; e < 4; ++e) ++directed[{r[e], r[(e + 1) % 4]}];
  }
  cavity.n_endocardial_triangles = static_cast<std::int64_t>(cavity.triangles.size());
  std::vector<std::pair<std::int32_t, std::int32_t>> rim_edges;
  for (const auto& [edge, count] : directed) {
    const auto it = directed.find({edge.second, edge.first});
    const int net = count - (it == directed.end() ? 0 : it->second);
    for (int k = 0; k < net; ++k) rim_edges.push_back(edge);
  }
  for (const auto& [u, v] : rim_edges) {
    cavity.rim.push_back(u);
    cavity.rim.push_back(v);
  }
  std::sort(cavity.rim.begin(), cavity.rim.end());
  cavity.rim.erase(std::unique(cavity.rim.begin(), cavity.rim.end()), cavity.rim.end());
  for (const auto& [u, v] : rim_edges) cavity.triangles.push_back({cavity.lid_centre(), v, u});

  std::map<std::pair<std::int32_t, std::int32_t>, int> undirected;
  for (const auto& t : cavity.triangles)
    for (int e = 0; e < 3; ++e) ++undirected[std::minmax(t[e], t[(e + 1) % 3])];
  for (const auto& [edge, count] : undirected) cavity.n_nonmanifold_edges += count > 2;
  return cavity;
}

}  // namespace

VoxelMesh build_voxel_mesh(const RoleVolume& roles, const BoundaryClassification& boundary,
                           const imaging::VoxelFrames& frames, double density) {
  const Grid& g = roles.role.grid;
  VoxelMesh out;
  out.grid = g;
  out.axis = boundary.axis;
  out.tag_names = boundary.tag_names;
  out.voxel = imaging::voxels_with_role(roles, RoleVolume::kMyocardium);
  CARDIO_CHECK(!out.voxel.empty(), "no myocardium voxel to mesh");
  CARDIO_CHECK(frames.voxels == out.voxel, "frames must be given for exactly the myocardium voxels ("
                                               << frames.voxels.size() << " frames, " << out.voxel.size()
                                               << " voxels)");
  const auto n_elements = static_cast<std::int64_t>(out.voxel.size());
  CARDIO_CHECK(n_elements < std::int64_t(1) << 31, "too many elements for 32-bit node ids: " << n_elements);

  // Node ids: the voxel corners used by myocardium voxels, numbered in corner order inside the
  // myocardium's bounding box (deterministic, and neighbours share nodes by construction).
  Index3 lo{g.size[0], g.size[1], g.size[2]}, hi{-1, -1, -1};
  for (std::int64_t v : out.voxel) {
    const Index3 ijk = g.index(v);
    for (int a = 0; a < 3; ++a) {
      lo[a] = std::min(lo[a], ijk[a]);
      hi[a] = std::max(hi[a], ijk[a]);
    }
  }
  const Index3 corners{hi[0] - lo[0] + 2, hi[1] - lo[1] + 2, hi[2] - lo[2] + 2};
  const auto corner_index = [&](const Index3& c) { return c[0] + corners[0] * (c[1] + corners[1] * c[2]); };
  std::vector<std::int32_t> node_of_corner(static_cast<std::size_t>(corners[0] * corners[1] * corners[2]), -1);
  const Lattice lattice = lattice_for(g);
  for (std::int64_t v : out.voxel) {
    const Index3 ijk = g.index(v);
    for (const Index3& o : lattice.offset)
      node_of_corner[std::size_t(corner_index({ijk[0] - lo[0] + o[0], ijk[1] - lo[1] + o[1], ijk[2] - lo[2] + o[2]}))] =
          0;
  }
  std::int32_t n_nodes = 0;
  for (auto& id : node_of_corner)
    if (id == 0) id = n_nodes++;
  out.mesh.rest.resize(3, n_nodes);
  for (std::int64_t c = 0; c < static_cast<std::int64_t>(node_of_corner.size()); ++c) {
    const std::int32_t id = node_of_corner[std::size_t(c)];
    if (id < 0) continue;
    const std::int64_t ci = c % corners[0], cj = (c / corners[0]) % corners[1], ck = c / (corners[0] * corners[1]);
    // Corner (ci, cj, ck) of the box is at continuous index lo + c - 1/2.
    out.mesh.rest.col(id) =
        g.point(Eigen::Vector3d(double(lo[0] + ci) - 0.5, double(lo[1] + cj) - 0.5, double(lo[2] + ck) - 0.5));
  }

  out.mesh.hexes.resize(std::size_t(n_elements));
  out.label.resize(std::size_t(n_elements));
  for (std::int64_t e = 0; e < n_elements; ++e) {
    const Index3 ijk = g.index(out.voxel[std::size_t(e)]);
    for (int n = 0; n < 8; ++n) {
      const Index3& o = lattice.offset[std::size_t(n)];
      out.mesh.hexes[std::size_t(e)][std::size_t(n)] = node_of_corner[std::size_t(
          corner_index({ijk[0] - lo[0] + o[0], ijk[1] - lo[1] + o[1], ijk[2] - lo[2] + o[2]}))];
    }
    out.label[std::size_t(e)] = roles.labels.values[std::size_t(out.voxel[std::size_t(e)])];
  }
  out.labels_used = out.label;
  std::sort(out.labels_used.begin(), out.labels_used.end());
  out.labels_used.erase(std::unique(out.labels_used.begin(), out.labels_used.end()), out.labels_used.end());
  CARDIO_CHECK(out.labels_used.size() < 65536, "too many distinct myocardium labels");
  out.mesh.material.resize(std::size_t(n_elements));
  for (std::int64_t e = 0; e < n_elements; ++e)
    out.mesh.material[std::size_t(e)] = static_cast<std::uint16_t>(
        std::lower_bound(out.labels_used.begin(), out.labels_used.end(), out.label[std::size_t(e)]) -
        out.labels_used.begin());
  out.mesh.fibre = frames.fibre;
  out.mesh.sheet = frames.sheet;

  out.volume = mechanics::element_volumes(out.mesh, out.mesh.rest);
  out.mass = mechanics::lumped_masses(out.mesh, std::vector<double>(out.labels_used.size(), density));

  // Tagged boundary quads, in the order of the classification (by voxel, then side).
  std::vector<std::vector<mechanics::Quad>> endocardium(roles.cavity_names.size());
  for (const VoxelFace& f : boundary.faces) {
    const auto it = std::lower_bound(out.voxel.begin(), out.voxel.end(), f.voxel);
    CARDIO_CHECK(it != out.voxel.end() && *it == f.voxel, "boundary face of a voxel that is not meshed");
    const auto& hex = out.mesh.hexes[std::size_t(it - out.voxel.begin())];
    const auto& local = mechanics::kHexFaces[std::size_t(lattice.face_of_side[f.side])];
    const mechanics::Quad q{hex[std::size_t(local[0])], hex[std::size_t(local[1])], hex[std::size_t(local[2])],
                            hex[std::size_t(local[3])]};
    out.surface_quads.push_back(q);
    out.surface_tag.push_back(f.tag);
    if (f.tag >= SurfaceTag::kFirstEndocardium) endocardium[f.tag - SurfaceTag::kFirstEndocardium].push_back(q);
  }
  for (std::size_t c = 0; c < endocardium.size(); ++c) {
    if (endocardium[c].empty()) continue;  // the cavity does not touch the meshed myocardium
    out.cavities.push_back(make_cavity_surface(roles.cavity_names[c], endocardium[c]));
  }
  return out;
}

}  // namespace cardio::meshing
