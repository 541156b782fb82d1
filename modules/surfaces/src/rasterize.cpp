/// @file rasterize.cpp
/// Surface patches -> label volume: read and classify (surface_io), merge points, close the rims
/// (rims), check closed and manifold, orient (triangle_mesh), then voxelise with VTK
/// (vtkPolyDataToImageStencil, even-odd inside test per z slice) the myocardium and each cavity
/// closed by its lid.
#include "cardio/surfaces/rasterize.hpp"

#include <vtkCellArray.h>
#include <vtkImageStencilData.h>
#include <vtkNew.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>
#include <vtkPolyDataToImageStencil.h>

#include <Eigen/Geometry>
#include <algorithm>
#include <climits>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "cardio/core/error.hpp"
#include "rims.hpp"
#include "surface_io.hpp"
#include "triangle_mesh.hpp"

namespace cardio::surfaces {
namespace {

namespace fs = std::filesystem;
using namespace detail;

/// "surface file "a.vtp"" or "surface patches "a.ply", "b.ply"": the source in messages.
std::string source_name(const std::vector<SurfacePatch>& patches) {
  std::ostringstream os;
  os << (patches.size() == 1 ? "surface file " : "surface patches ");
  for (std::size_t p = 0; p < patches.size(); ++p) os << (p ? ", " : "") << patches[p].file;
  return os.str();
}

/// The role of a patch class in messages.
PatchNamer patch_namer(const RasterizeOptions& o) {
  return [o](int c) -> std::string {
    if (c == kNoPatch) return "seams between patches";
    for (const Endocardium& e : o.endocardia)
      if (e.patch_class == c) return "cavity '" + e.cavity_name + "' endocardium, class " + std::to_string(c);
    if (c == o.base_class) return "base, class " + std::to_string(c);
    if (c == o.epicardium_class) return "epicardium, class " + std::to_string(c);
    return "class " + std::to_string(c);
  };
}

/// " (cavity 'lv' endocardium, class 3: 12; epicardium, class 2: 4)": where a surface is open.
std::string open_edges_by_patch(const EdgeCounts& counts, const RasterizeOptions& o) {
  if (counts.open_by_patch.empty()) return "";
  const std::map<int, std::int64_t> sorted(counts.open_by_patch.begin(), counts.open_by_patch.end());
  const PatchNamer name = patch_namer(o);
  std::ostringstream os;
  for (const auto& [c, n] : sorted) os << (os.tellp() > 0 ? "; " : " (") << name(c) << ": " << n;
  os << ")";
  return os.str();
}

/// Checks the classes against the configuration: every class present must be configured and the
/// epicardium and each endocardium must be present, so that a misnumbered file fails loudly.
void check_classes(const std::vector<int>& cls, const RasterizeOptions& o, const std::string& source) {
  std::map<int, std::int64_t> count;
  std::int64_t seams = 0;
  for (int c : cls) (c == kNoPatch ? ++seams : ++count[c]);
  std::ostringstream present;
  for (const auto& [c, n] : count) present << (present.tellp() > 0 ? ", " : "") << c << " (" << n << " triangles)";
  if (seams > 0) present << "; " << seams << " seam triangles with mixed point classes";
  std::ostringstream config;
  config << "base " << o.base_class << ", epicardium " << o.epicardium_class;
  for (const auto& e : o.endocardia) config << ", endocardium " << e.patch_class << " '" << e.cavity_name << "'";

  std::set<int> known{o.base_class, o.epicardium_class};
  for (const auto& e : o.endocardia) known.insert(e.patch_class);
  for (const auto& [c, n] : count)
    if (!known.count(c))
      CARDIO_FAIL(source << ": class " << c << " of array '" << o.class_array << "' is none of the configured patches ("
                         << config.str() << "); classes present: " << present.str());
  auto require = [&](int c, const std::string& what) {
    if (!count.count(c))
      CARDIO_FAIL(source << " has no triangle of " << what << " class " << c << " in array '" << o.class_array
                         << "' (configured: " << config.str() << "); classes present: " << present.str());
  };
  require(o.epicardium_class, "epicardium");
  for (const auto& e : o.endocardia) require(e.patch_class, "endocardium '" + e.cavity_name + "'");
}

/// Voxelises the closed triangle set `tris` and writes `value` into its inside voxels (only into voxels
/// still 0 unless `overwrite`).
void fill_inside(const std::vector<Vec3>& points, const std::vector<Tri>& tris, imaging::LabelVolume& labels,
                 std::int32_t value, bool overwrite) {
  vtkNew<vtkPoints> p;
  p->SetDataTypeToDouble();
  p->SetNumberOfPoints(vtkIdType(points.size()));
  for (std::size_t i = 0; i < points.size(); ++i) p->SetPoint(vtkIdType(i), points[i].data());
  vtkNew<vtkCellArray> cells;
  cells->AllocateExact(vtkIdType(tris.size()), vtkIdType(3 * tris.size()));
  for (const Tri& t : tris) {
    const vtkIdType ids[3] = {t[0], t[1], t[2]};
    cells->InsertNextCell(3, ids);
  }
  vtkNew<vtkPolyData> pd;
  pd->SetPoints(p);
  pd->SetPolys(cells);

  const imaging::Grid& g = labels.grid;
  const int nx = int(g.size[0]), ny = int(g.size[1]), nz = int(g.size[2]);
  vtkNew<vtkPolyDataToImageStencil> s;
  s->SetInputData(pd);
  double origin[3] = {g.origin[0], g.origin[1], g.origin[2]};
  double spacing[3] = {g.spacing[0], g.spacing[1], g.spacing[2]};
  s->SetOutputOrigin(origin);
  s->SetOutputSpacing(spacing);
  s->SetOutputWholeExtent(0, nx - 1, 0, ny - 1, 0, nz - 1);
  s->Update();
  vtkImageStencilData* st = s->GetOutput();
  for (int k = 0; k < nz; ++k)
    for (int j = 0; j < ny; ++j) {
      int iter = 0, r1 = 0, r2 = 0;
      while (st->GetNextExtent(r1, r2, 0, nx - 1, j, k, iter))
        for (int i = r1; i <= r2; ++i) {
          std::int32_t& l = labels.at(i, j, k);
          if (overwrite || l == 0) l = value;
        }
    }
}

/// The source triangles of each fitted surface tag (see RasterizedSurface::patches).
std::map<std::string, TriangleSurface> source_patches(const TriangleMesh& m, const RasterizeOptions& o) {
  auto patch = [&](auto keep) {
    TriangleSurface s;
    s.points = m.points;
    for (std::size_t t = 0; t < m.tris.size(); ++t)
      if (keep(m.patch[t])) s.triangles.push_back(m.tris[t]);
    return s;
  };
  std::map<std::string, TriangleSurface> out;
  const bool classified = std::any_of(m.patch.begin(), m.patch.end(), [](int c) { return c != kNoPatch; });
  out["epicardium"] = patch([&](int c) { return !classified || c == o.epicardium_class; });
  for (const Endocardium& e : o.endocardia)
    out["endocardium_" + e.cavity_name] = patch([&](int c) { return c == e.patch_class; });
  return out;
}

/// Voxels along one axis of the rasterisation grid: the surface extent at voxel size h plus the
/// margin on both sides (a double: a tiny h gives a huge count, not an overflow).
double grid_voxels(double extent, const RasterizeOptions& o) {
  return std::ceil(extent / o.voxel_size_mm) + 2.0 * o.margin_voxels + 1;
}

void check_options(const RasterizeOptions& o) {
  if (!(o.voxel_size_mm > 0) || !std::isfinite(o.voxel_size_mm))
    CARDIO_FAIL("surface rasterisation: voxel size must be positive, got " << o.voxel_size_mm << " mm");
  if (!(o.merge_tolerance_mm >= 0) || !std::isfinite(o.merge_tolerance_mm))
    CARDIO_FAIL("surface rasterisation: merge tolerance must be >= 0, got " << o.merge_tolerance_mm << " mm");
  if (!(o.stitch_width_mm >= 0) || !std::isfinite(o.stitch_width_mm))
    CARDIO_FAIL("surface rasterisation: stitch width must be >= 0, got " << o.stitch_width_mm << " mm");
  if (o.margin_voxels < 1)
    CARDIO_FAIL("surface rasterisation: margin must be at least 1 voxel, got " << o.margin_voxels);
  std::set<int> classes{o.base_class, o.epicardium_class};
  if (classes.size() != 2) CARDIO_FAIL("surface rasterisation: base and epicardium classes must differ");
  std::set<std::string> names;
  for (const auto& e : o.endocardia) {
    if (!classes.insert(e.patch_class).second)
      CARDIO_FAIL("surface rasterisation: endocardium class " << e.patch_class << " ('" << e.cavity_name
                                                              << "') is used twice or equals base/epicardium");
    if (e.cavity_name.empty() || !names.insert(e.cavity_name).second)
      CARDIO_FAIL("surface rasterisation: cavity names must be non-empty and distinct ('" << e.cavity_name << "')");
  }
}

/// The classes of one patch file's triangles: its fixed class, or its class array checked against
/// the options (kNoPatch everywhere for a file without classes and no endocardia configured).
std::vector<int> patch_classes(const SurfacePatch& p, vtkPolyData* tri, const RasterizeOptions& o) {
  if (p.patch_class) return std::vector<int>(std::size_t(tri->GetNumberOfPolys()), *p.patch_class);
  std::vector<int> cls = triangle_classes(tri, o.class_array, p.file);
  if (!cls.empty()) return cls;
  if (!o.endocardia.empty()) {
    std::ostringstream cav;
    for (const auto& e : o.endocardia) cav << (cav.tellp() > 0 ? ", " : "") << e.cavity_name;
    CARDIO_FAIL("surface file " << p.file << " has no class array '" << o.class_array << "' (" << array_names(tri)
                                << ") but cavities are requested (" << cav.str() << ")"
                                << (lower(p.file.extension().string()) == ".stl" ? "; STL carries no arrays" : "")
                                << "; a surface without patches is accepted only as myocardium: configure "
                                   "no endocardia");
  }
  return std::vector<int>(std::size_t(tri->GetNumberOfPolys()), kNoPatch);
}

/// All patches in one mesh (not yet merged), their classes checked together.
TriangleMesh read_patches(const std::vector<SurfacePatch>& patches, const RasterizeOptions& o) {
  if (patches.empty()) CARDIO_FAIL("surface rasterisation: no surface file given");
  TriangleMesh all;
  bool classified = false;
  for (const SurfacePatch& p : patches) {
    vtkSmartPointer<vtkPolyData> tri = read_triangles(p.file);
    const TriangleMesh m = to_mesh(tri, patch_classes(p, tri, o));
    const auto offset = std::int64_t(all.points.size());
    all.points.insert(all.points.end(), m.points.begin(), m.points.end());
    for (std::size_t t = 0; t < m.tris.size(); ++t) {
      all.tris.push_back({m.tris[t][0] + offset, m.tris[t][1] + offset, m.tris[t][2] + offset});
      all.patch.push_back(m.patch[t]);
    }
    classified |= std::any_of(m.patch.begin(), m.patch.end(), [](int c) { return c != kNoPatch; });
  }
  if (classified) check_classes(all.patch, o, source_name(patches));
  return all;
}

/// Where edges are in more than two triangles (up to three, in a deterministic order), for an error.
std::string nonmanifold_places(const TriangleMesh& m, const EdgeMap& edges) {
  std::vector<std::uint64_t> keys;
  for (const auto& [k, u] : edges)
    if (u.count > 2) keys.push_back(k);
  std::sort(keys.begin(), keys.end());
  std::ostringstream os;
  os.precision(4);
  os << "non-manifold edges at";
  for (std::size_t i = 0; i < std::min<std::size_t>(3, keys.size()); ++i) {
    const Vec3 mid = (m.points[keys[i] >> 32] + m.points[keys[i] & 0xffffffffu]) / 2;
    os << (i ? "," : "") << " (" << mid.x() << ", " << mid.y() << ", " << mid.z() << ") mm";
  }
  os << " (duplicated triangles, or patches that overlap there)";
  return os.str();
}

/// Closedness: every edge shared by exactly two triangles; the error says where the surface is open.
void check_closed(const TriangleMesh& m, const EdgeMap& edges, const RasterizeOptions& o, const std::string& source) {
  const EdgeCounts counts = count_edges(m, edges);
  if (counts.open == 0 && counts.nonmanifold == 0) return;
  std::ostringstream os;
  os << source << " is not closed after merging points within " << o.merge_tolerance_mm << " mm";
  if (o.stitch_width_mm > 0) os << " and stitching rims within " << o.stitch_width_mm << " mm";
  os << ": " << counts.open << " boundary edges" << open_edges_by_patch(counts, o) << ", " << counts.nonmanifold
     << " non-manifold edges (a closed surface has every edge in exactly 2 triangles)";
  if (counts.nonmanifold > 0) os << "; " << nonmanifold_places(m, edges);
  if (counts.open > 0)
    os << "; " << describe_open_loops(m, patch_namer(o))
       << ". To close it: copies of one vertex a tiny distance apart join with a larger merge tolerance "
          "(merge_tolerance, a small fraction of an edge); gaps between the rims of different patches are "
          "stitched when their widest point is within stitch_width (now "
       << o.stitch_width_mm << " mm); a surface open by design (base, valves) is closed with cap_open_rims: true";
  CARDIO_FAIL(os.str());
}

/// The endocardial patch of class `cls` with a fan lid over each of its open loops (the open cup at
/// the base), as a closed triangle set on `points` (lid centroids appended).
std::vector<Tri> cavity_with_lid(const TriangleMesh& m, int cls, std::vector<Vec3>& points, std::int64_t& open_edges) {
  TriangleMesh patch{m.points, {}, {}};
  for (std::size_t t = 0; t < m.tris.size(); ++t)
    if (m.patch[t] == cls) {
      patch.tris.push_back(m.tris[t]);
      patch.patch.push_back(cls);
    }
  // Lid triangles run each open edge against its (oriented) patch triangle: the cup closes outward.
  const EdgeMap edges = edge_uses(patch.tris);
  std::vector<Tri> tris = patch.tris;
  open_edges = 0;
  for (const OpenLoop& loop : open_loops(patch)) {
    points.push_back(loop.centroid(m.points));
    const std::int64_t c = std::int64_t(points.size()) - 1;
    for (std::size_t k = 0; k < loop.vertices.size(); ++k) {
      const std::int64_t a = loop.vertices[k], b = loop.vertices[(k + 1) % loop.vertices.size()];
      const Tri& owner = patch.tris[std::size_t(edges.at(edge_key(a, b)).t0)];
      bool runs_ab = false;
      for (std::size_t f = 0; f < 3; ++f) runs_ab |= owner[f] == a && owner[(f + 1) % 3] == b;
      tris.push_back(runs_ab ? Tri{b, a, c} : Tri{a, b, c});
      ++open_edges;
    }
  }
  return tris;
}

/// The axis-aligned grid with the margin around `box` at the options' voxel size; refuses grids over
/// the memory guard.
imaging::Grid surface_grid(const Eigen::AlignedBox3d& box, const RasterizeOptions& o, const std::string& source) {
  const double h = o.voxel_size_mm;
  imaging::Grid grid;
  double n_est = 1;
  for (int a = 0; a < 3; ++a) {
    const double n = grid_voxels(box.max()[a] - box.min()[a], o);
    n_est *= n;
    if (!(n < double(INT_MAX)))
      CARDIO_FAIL(source << ": grid of " << n << " voxels along axis " << a << " at " << h
                         << " mm is absurd (surface extent " << box.max()[a] - box.min()[a] << " mm)");
    grid.size[std::size_t(a)] = std::int64_t(n);
  }
  if (!(n_est <= o.max_voxels))
    CARDIO_FAIL(source << ": rasterising at " << h << " mm needs " << n_est << " voxels (" << grid.size[0] << " x "
                       << grid.size[1] << " x " << grid.size[2] << ", " << n_est * 4 / 1e9
                       << " GB of labels), over the limit of " << o.max_voxels << " voxels; use a larger voxel size");
  grid.spacing = Vec3::Constant(h);
  grid.origin = box.min() - Vec3::Constant(h * o.margin_voxels);
  grid.direction.setIdentity();
  return grid;
}

/// The patches read, merged, their rims closed (recorded in r) and checked closed and manifold.
TriangleMesh closed_surface(const std::vector<SurfacePatch>& patches, const RasterizeOptions& o,
                            const std::string& source, RasterizedSurface& r) {
  TriangleMesh m = merge_points(read_patches(patches, o), o.merge_tolerance_mm, r.merged_points);
  for (const Vec3& p : m.points)
    if (!p.allFinite()) CARDIO_FAIL(source << " has non-finite point coordinates");
  if (m.tris.empty()) CARDIO_FAIL(source << " has no triangles left after merging points");
  CARDIO_CHECK(m.points.size() < (std::size_t(1) << 31), "too many points for the edge keys");
  r.closures = close_rims(m, o.stitch_width_mm, o.cap_open_rims, o.base_class, patch_namer(o));
  r.points = std::int64_t(m.points.size());
  r.triangles = std::int64_t(m.tris.size());
  check_closed(m, edge_uses(m.tris), o, source);
  return m;
}

}  // namespace

void check_surface_patches(const std::vector<SurfacePatch>& patches, const RasterizeOptions& o) {
  check_options(o);
  RasterizedSurface r;
  (void)closed_surface(patches, o, source_name(patches), r);
}

void check_surface_patches(const fs::path& file, const RasterizeOptions& o) {
  check_surface_patches(std::vector<SurfacePatch>{{file, {}}}, o);
}

RasterizedSurface rasterize_surface(const std::vector<SurfacePatch>& patches, const RasterizeOptions& o) {
  check_options(o);
  const std::string source = source_name(patches);
  RasterizedSurface r;
  TriangleMesh m = closed_surface(patches, o, source, r);
  const EdgeMap edges = edge_uses(m.tris);
  Eigen::AlignedBox3d box;
  for (const Vec3& p : m.points) box.extend(p);
  const Vec3 centre = box.center();  // reference point for the divergence sums (less cancellation)
  const Components components = orient_outward(m, edges, centre, source);
  r.patches = source_patches(m, o);
  r.tissue_volume_mm3 = even_odd_volume(m, components);  // as the voxelisation counts it

  r.labels.grid = surface_grid(box, o, source);
  r.labels.values.assign(std::size_t(r.labels.grid.n_voxels()), 0);
  for (std::size_t e = 0; e < o.endocardia.size(); ++e) {  // the first cavity wins overlaps
    std::vector<Vec3> points = m.points;
    std::int64_t open_edges = 0;
    const std::vector<Tri> tris = cavity_with_lid(m, o.endocardia[e].patch_class, points, open_edges);
    double vol6 = 0;
    for (const Tri& t : tris) vol6 += signed_volume6(points, t, centre);
    r.endocardium_boundary_edges.push_back(open_edges);
    r.cavity_names.push_back(o.endocardia[e].cavity_name);
    r.cavity_volume_mm3.push_back(std::abs(vol6) / 6);
    fill_inside(points, tris, r.labels, imaging::RoleVolume::kFirstCavity + std::int32_t(e), false);
  }
  fill_inside(m.points, m.tris, r.labels, imaging::RoleVolume::kMyocardium, true);
  return r;
}

RasterizedSurface rasterize_surface(const fs::path& file, const RasterizeOptions& o) {
  return rasterize_surface(std::vector<SurfacePatch>{{file, {}}}, o);
}

Eigen::Vector3d surface_grid_size(const std::vector<SurfacePatch>& patches, const RasterizeOptions& o) {
  check_options(o);
  // The points of the triangles (rasterize_surface drops vertices, lines and unused points).
  Eigen::AlignedBox3d box;
  for (const SurfacePatch& p : patches) {
    vtkSmartPointer<vtkPolyData> tri = read_triangles(p.file);
    const TriangleMesh m = to_mesh(tri, std::vector<int>(std::size_t(tri->GetNumberOfPolys()), kNoPatch));
    for (const Tri& t : m.tris)
      for (std::int64_t v : t)
        if (m.points[std::size_t(v)].allFinite()) box.extend(m.points[std::size_t(v)]);
  }
  if (box.isEmpty()) CARDIO_FAIL(source_name(patches) << " has no triangle with finite point coordinates");
  Eigen::Vector3d n;
  for (int a = 0; a < 3; ++a) n[a] = grid_voxels(box.max()[a] - box.min()[a], o);
  return n;
}

}  // namespace cardio::surfaces
