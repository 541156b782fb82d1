/// @file rasterize.cpp
/// Surface -> label volume. VTK reads, merges points and voxelises (vtkPolyDataToImageStencil, even-odd
/// inside test per z slice); topology (closedness, orientation, components, endocardial boundary loops)
/// and the enclosed volumes (divergence theorem) are computed here on plain arrays so that the checks
/// give exact counts for the error messages and the lids can be built from oriented boundary loops.
#include "cardio/surfaces/rasterize.hpp"

#include <vtkCellArray.h>
#include <vtkCellData.h>
#include <vtkCleanPolyData.h>
#include <vtkCommand.h>
#include <vtkDataArray.h>
#include <vtkExecutive.h>
#include <vtkImageStencilData.h>
#include <vtkIntArray.h>
#include <vtkNew.h>
#include <vtkPLYReader.h>
#include <vtkPointData.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>
#include <vtkPolyDataReader.h>
#include <vtkPolyDataToImageStencil.h>
#include <vtkSTLReader.h>
#include <vtkSmartPointer.h>
#include <vtkTriangleFilter.h>
#include <vtkXMLPolyDataReader.h>

#include <Eigen/Geometry>

#include <algorithm>
#include <array>
#include <cctype>
#include <climits>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>

#include "cardio/core/error.hpp"

namespace cardio::surfaces {
namespace {

namespace fs = std::filesystem;
using Vec3 = Eigen::Vector3d;
using Tri = std::array<std::int64_t, 3>;

/// Triangle not belonging to any patch (seam triangle with mixed point classes, or no class array).
constexpr int kNoPatch = std::numeric_limits<int>::min();

/// " (cavity 'lv' endocardium, class 3: 12; epicardium, class 2: 4)": where a surface is open.
std::string open_edges_by_patch(const std::map<int, std::int64_t>& count, const RasterizeOptions& o) {
  if (count.empty()) return "";
  std::ostringstream os;
  os << " (";
  bool first = true;
  for (const auto& [c, n] : count) {
    os << (first ? "" : "; ");
    first = false;
    const auto endo = std::find_if(o.endocardia.begin(), o.endocardia.end(),
                                   [&](const Endocardium& e) { return e.patch_class == c; });
    if (c == kNoPatch)
      os << "seams between patches";
    else if (endo != o.endocardia.end())
      os << "cavity '" << endo->cavity_name << "' endocardium, class " << c;
    else if (c == o.base_class)
      os << "base, class " << c;
    else if (c == o.epicardium_class)
      os << "epicardium, class " << c;
    else
      os << "class " << c;
    os << ": " << n;
  }
  os << ")";
  return os.str();
}
constexpr const char* kPatchArray = "cardio_patch";

/// Collects VTK error text so that it ends up in the cardio::Error instead of on stderr (an observed
/// ErrorEvent is not printed by VTK).
class MessageCollector final : public vtkCommand {
 public:
  static MessageCollector* New() { return new MessageCollector; }
  void Execute(vtkObject*, unsigned long, void* call_data) override {
    if (call_data == nullptr) return;
    std::string m = static_cast<const char*>(call_data);
    // Drop VTK's "ERROR: In file.cxx, line N" line, "vtkClass (0x...): " prefix and line breaks.
    if (m.rfind("ERROR: In ", 0) == 0 || m.rfind("Warning: In ", 0) == 0)
      if (const auto nl = m.find('\n'); nl != std::string::npos) m = m.substr(nl + 1);
    if (const auto p = m.find("): "); p != std::string::npos && p < 80) m = m.substr(p + 3);
    while (!m.empty() && (m.back() == '\n' || m.back() == '\r')) m.pop_back();
    std::replace(m.begin(), m.end(), '\n', ' ');
    if (!text.empty()) text += "; ";
    text += m;
  }
  std::string text;
};

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return s;
}

std::string array_names(vtkPolyData* pd) {
  auto names = [](vtkFieldData* fd) {
    std::string s;
    for (int a = 0; a < fd->GetNumberOfArrays(); ++a) {
      const char* n = fd->GetArrayName(a);
      s += (s.empty() ? "" : ", ") + std::string(n ? n : "(unnamed)");
    }
    return s.empty() ? std::string("none") : s;
  };
  return "point arrays: " + names(pd->GetPointData()) + "; cell arrays: " + names(pd->GetCellData());
}

vtkSmartPointer<vtkPolyData> read_surface(const fs::path& file) {
  std::error_code ec;
  if (!fs::exists(file, ec)) CARDIO_FAIL("surface file " << file << " does not exist");
  if (!fs::is_regular_file(file, ec)) CARDIO_FAIL("surface file " << file << " is not a regular file");
  if (fs::file_size(file, ec) == 0) CARDIO_FAIL("surface file " << file << " is empty");
  if (!std::ifstream(file)) CARDIO_FAIL("surface file " << file << " cannot be opened for reading");

  const std::string ext = lower(file.extension().string());
  const std::string name = file.string();
  vtkNew<MessageCollector> errors;
  vtkNew<MessageCollector> warnings;  // collected only to keep stderr quiet
  auto observe = [&](vtkAlgorithm* r) {
    r->AddObserver(vtkCommand::ErrorEvent, errors);
    r->AddObserver(vtkCommand::WarningEvent, warnings);
    r->GetExecutive()->AddObserver(vtkCommand::ErrorEvent, errors);
  };
  vtkSmartPointer<vtkAlgorithm> reader;
  if (ext == ".vtp") {
    auto r = vtkSmartPointer<vtkXMLPolyDataReader>::New();
    observe(r);
    r->SetReaderErrorObserver(errors);
    r->SetParserErrorObserver(errors);
    if (!r->CanReadFile(name.c_str())) CARDIO_FAIL("surface file " << file << " is not a VTK XML PolyData (.vtp) file");
    r->SetFileName(name.c_str());
    reader = r;
  } else if (ext == ".vtk") {
    auto r = vtkSmartPointer<vtkPolyDataReader>::New();
    observe(r);
    r->SetFileName(name.c_str());
    if (!r->IsFilePolyData())
      CARDIO_FAIL("surface file " << file << " is not legacy VTK polydata"
                                  << (errors->text.empty() ? "" : " (" + errors->text + ")"));
    reader = r;
  } else if (ext == ".stl") {
    auto r = vtkSmartPointer<vtkSTLReader>::New();
    observe(r);
    r->SetFileName(name.c_str());
    reader = r;
  } else if (ext == ".ply") {
    if (!vtkPLYReader::CanReadFile(name.c_str())) CARDIO_FAIL("surface file " << file << " is not a PLY file");
    auto r = vtkSmartPointer<vtkPLYReader>::New();
    observe(r);
    r->SetFileName(name.c_str());
    reader = r;
  } else {
    CARDIO_FAIL("surface file " << file << " has unsupported extension '" << ext
                                << "'; expected .vtp, .vtk (legacy polydata), .stl or .ply");
  }
  reader->Update();
  auto* out = vtkPolyData::SafeDownCast(reader->GetOutputDataObject(0));
  if (!errors->text.empty()) CARDIO_FAIL("cannot read surface file " << file << ": " << errors->text);
  if (out == nullptr || out->GetNumberOfPolys() + out->GetNumberOfStrips() == 0)
    CARDIO_FAIL("surface file " << file << " contains no triangles (" << (out ? out->GetNumberOfPoints() : 0)
                                << " points, " << (out ? out->GetNumberOfCells() : 0) << " cells)");
  auto copy = vtkSmartPointer<vtkPolyData>::New();
  copy->ShallowCopy(out);
  return copy;
}

/// Integer value of a class array entry; refuses non-integral values (e.g. interpolated classes).
int class_value(vtkDataArray* a, vtkIdType i, const fs::path& file) {
  const double v = a->GetComponent(i, 0);
  if (!(std::abs(v) < 2e9) || v != std::round(v))
    CARDIO_FAIL("surface file " << file << ": class array '" << a->GetName() << "' has non-integer value " << v
                                << " at entry " << i);
  return static_cast<int>(v);
}

/// Per-triangle patch class of a triangulated surface (see RasterizeOptions::class_array), or an empty
/// vector if the array is absent.
std::vector<int> triangle_classes(vtkPolyData* tri, const std::string& array, const fs::path& file) {
  vtkDataArray* cell = tri->GetCellData()->GetArray(array.c_str());
  vtkDataArray* point = tri->GetPointData()->GetArray(array.c_str());
  if (cell == nullptr && point == nullptr) return {};
  vtkDataArray* a = cell ? cell : point;  // cell data is unambiguous, preferred if both exist
  if (a->GetNumberOfComponents() != 1)
    CARDIO_FAIL("surface file " << file << ": class array '" << array << "' has " << a->GetNumberOfComponents()
                                << " components, expected 1");
  const vtkIdType n = tri->GetNumberOfPolys();
  std::vector<int> cls(static_cast<std::size_t>(n), kNoPatch);
  vtkCellArray* polys = tri->GetPolys();
  polys->InitTraversal();
  vtkIdType npts = 0;
  const vtkIdType* pts = nullptr;
  for (vtkIdType t = 0; polys->GetNextCell(npts, pts); ++t) {
    if (cell) {
      cls[std::size_t(t)] = class_value(a, t, file);
    } else {
      const int c0 = class_value(a, pts[0], file);
      if (c0 == class_value(a, pts[1], file) && c0 == class_value(a, pts[2], file)) cls[std::size_t(t)] = c0;
    }
  }
  return cls;
}

/// Checks the classes against the configuration: every class present must be configured and the
/// epicardium and each endocardium must be present, so that a misnumbered file fails loudly.
void check_classes(const std::vector<int>& cls, const RasterizeOptions& o, const fs::path& file) {
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
      CARDIO_FAIL("surface file " << file << ": class " << c << " of array '" << o.class_array
                                  << "' is none of the configured patches (" << config.str()
                                  << "); classes present: " << present.str());
  auto require = [&](int c, const std::string& what) {
    if (!count.count(c))
      CARDIO_FAIL("surface file " << file << " has no triangle of " << what << " class " << c << " in array '"
                                  << o.class_array << "' (configured: " << config.str()
                                  << "); classes present: " << present.str());
  };
  require(o.epicardium_class, "epicardium");
  for (const auto& e : o.endocardia) require(e.patch_class, "endocardium '" + e.cavity_name + "'");
}

struct Mesh {
  std::vector<Vec3> points;
  std::vector<Tri> tris;
  std::vector<int> patch;
};

std::uint64_t edge_key(std::int64_t a, std::int64_t b) {
  if (a > b) std::swap(a, b);
  return (std::uint64_t(a) << 32) | std::uint64_t(b);
}

/// 6 x the signed volume of the tetrahedron (o, triangle): summed over a closed surface, 6 x its volume.
double signed_volume6(const std::vector<Vec3>& p, const Tri& t, const Vec3& o) {
  return (p[std::size_t(t[0])] - o).dot((p[std::size_t(t[1])] - o).cross(p[std::size_t(t[2])] - o));
}

/// Ray-parity inside test of q against the triangles of `comp` == c (Moller-Trumbore); majority over three
/// skew rays so that a ray grazing an edge cannot flip the answer.
bool inside_component(const Mesh& m, const std::vector<int>& comp, int c, const Vec3& q) {
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
std::map<std::string, TriangleSurface> source_patches(const Mesh& m, const RasterizeOptions& o) {
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

/// The surface split into triangles (polygons and strips split, vertices and lines dropped).
vtkSmartPointer<vtkPolyData> triangulated(vtkPolyData* raw) {
  vtkNew<vtkTriangleFilter> triangulate;
  triangulate->SetInputData(raw);
  triangulate->PassVertsOff();
  triangulate->PassLinesOff();
  triangulate->Update();
  auto tri = vtkSmartPointer<vtkPolyData>::New();
  tri->ShallowCopy(triangulate->GetOutput());
  return tri;
}

/// Per-triangle classes of `tri` checked against the options (kNoPatch everywhere for a file without
/// classes and no endocardia configured).
std::vector<int> checked_classes(vtkPolyData* raw, vtkPolyData* tri, const RasterizeOptions& o, const fs::path& file) {
  // Classes are taken on the file's own connectivity, before merging, so that duplicated seam vertices
  // with different classes cannot mix patches.
  std::vector<int> cls = triangle_classes(tri, o.class_array, file);
  if (cls.empty()) {
    if (!o.endocardia.empty()) {
      std::ostringstream cav;
      for (const auto& e : o.endocardia) cav << (cav.tellp() > 0 ? ", " : "") << e.cavity_name;
      CARDIO_FAIL("surface file " << file << " has no class array '" << o.class_array << "' (" << array_names(raw)
                                  << ") but cavities are requested (" << cav.str() << ")"
                                  << (lower(file.extension().string()) == ".stl" ? "; STL carries no arrays" : "")
                                  << "; a surface without patches is accepted only as myocardium: configure "
                                     "no endocardia");
    }
    cls.assign(std::size_t(tri->GetNumberOfPolys()), kNoPatch);
  } else {
    check_classes(cls, o, file);
  }
  return cls;
}

}  // namespace

void check_surface_patches(const fs::path& file, const RasterizeOptions& o) {
  check_options(o);
  vtkSmartPointer<vtkPolyData> raw = read_surface(file);
  (void)checked_classes(raw, triangulated(raw), o, file);
}

RasterizedSurface rasterize_surface(const fs::path& file, const RasterizeOptions& o) {
  check_options(o);
  vtkSmartPointer<vtkPolyData> raw = read_surface(file);
  vtkSmartPointer<vtkPolyData> tri = triangulated(raw);
  const std::vector<int> cls = checked_classes(raw, tri, o, file);
  vtkNew<vtkIntArray> patch;
  patch->SetName(kPatchArray);
  patch->SetNumberOfValues(vtkIdType(cls.size()));
  for (std::size_t t = 0; t < cls.size(); ++t) patch->SetValue(vtkIdType(t), cls[t]);
  vtkNew<vtkPolyData> classified;
  classified->SetPoints(tri->GetPoints());
  classified->SetPolys(tri->GetPolys());
  classified->GetCellData()->AddArray(patch);

  std::int64_t used_before = 0;
  {
    std::vector<char> used(std::size_t(tri->GetNumberOfPoints()), 0);
    vtkCellArray* polys = tri->GetPolys();
    polys->InitTraversal();
    vtkIdType npts = 0;
    const vtkIdType* pts = nullptr;
    while (polys->GetNextCell(npts, pts))
      for (vtkIdType a = 0; a < npts; ++a) used[std::size_t(pts[a])] = 1;
    used_before = std::count(used.begin(), used.end(), 1);
  }

  // Merge coincident points (patches written without shared vertices). Triangles that collapse are
  // dropped rather than turned into lines.
  vtkNew<vtkCleanPolyData> clean;
  clean->SetInputData(classified);
  clean->PointMergingOn();
  clean->ToleranceIsAbsoluteOn();
  clean->SetAbsoluteTolerance(o.merge_tolerance_mm);
  clean->ConvertLinesToPointsOff();
  clean->ConvertPolysToLinesOff();
  clean->ConvertStripsToPolysOff();
  clean->Update();
  vtkPolyData* merged = clean->GetOutput();

  Mesh m;
  m.points.resize(std::size_t(merged->GetNumberOfPoints()));
  for (std::size_t i = 0; i < m.points.size(); ++i) merged->GetPoint(vtkIdType(i), m.points[i].data());
  CARDIO_CHECK(m.points.size() < (std::size_t(1) << 32), "too many points for the edge keys");
  {
    auto* mp = vtkIntArray::SafeDownCast(merged->GetCellData()->GetArray(kPatchArray));
    CARDIO_CHECK(mp != nullptr, "patch array lost in vtkCleanPolyData");
    vtkCellArray* polys = merged->GetPolys();
    polys->InitTraversal();
    vtkIdType npts = 0;
    const vtkIdType* pts = nullptr;
    // vtkCleanPolyData outputs verts, lines, polys in that order; only polys exist here.
    for (vtkIdType c = merged->GetNumberOfVerts() + merged->GetNumberOfLines(); polys->GetNextCell(npts, pts); ++c) {
      if (npts != 3) continue;
      m.tris.push_back({pts[0], pts[1], pts[2]});
      m.patch.push_back(mp->GetValue(c));
    }
  }
  for (const Vec3& p : m.points)
    if (!p.allFinite()) CARDIO_FAIL("surface file " << file << " has non-finite point coordinates");
  if (m.tris.empty()) CARDIO_FAIL("surface file " << file << " has no triangles left after merging points");

  RasterizedSurface r;
  r.points = std::int64_t(m.points.size());
  r.triangles = std::int64_t(m.tris.size());
  r.merged_points = used_before - r.points;

  // Closedness: every edge shared by exactly two triangles.
  struct EdgeUse {
    int count = 0;
    std::int64_t t0 = -1, t1 = -1;
  };
  std::unordered_map<std::uint64_t, EdgeUse> edges;
  edges.reserve(2 * m.tris.size());
  for (std::size_t t = 0; t < m.tris.size(); ++t)
    for (int e = 0; e < 3; ++e) {
      EdgeUse& u = edges[edge_key(m.tris[t][std::size_t(e)], m.tris[t][std::size_t((e + 1) % 3)])];
      (u.count == 0 ? u.t0 : u.t1) = std::int64_t(t);
      ++u.count;
    }
  std::int64_t boundary = 0, nonmanifold = 0;
  std::map<int, std::int64_t> open_by_patch;  // boundary edges by the patch of their one triangle
  for (const auto& [k, u] : edges) {
    boundary += u.count == 1;
    nonmanifold += u.count > 2;
    if (u.count == 1) ++open_by_patch[m.patch[std::size_t(u.t0)]];
  }
  if (boundary > 0 || nonmanifold > 0)
    CARDIO_FAIL("surface file " << file << " is not closed after merging points within " << o.merge_tolerance_mm
                                << " mm: " << boundary << " boundary edges" << open_edges_by_patch(open_by_patch, o)
                                << ", " << nonmanifold
                                << " non-manifold edges (a closed surface has every edge in exactly 2 "
                                   "triangles); if its patches do not share vertices, try a larger merge "
                                   "tolerance");

  // Orient each connected component consistently (breadth-first over shared edges), outward.
  std::vector<int> comp(m.tris.size(), -1);
  std::vector<double> comp_volume;  // outward (positive) volume of each component
  Eigen::AlignedBox3d box;
  for (const Vec3& p : m.points) box.extend(p);
  const Vec3 centre = box.center();  // reference point for the divergence sums (less cancellation)
  {
    std::vector<char> flip(m.tris.size(), 0);
    auto oriented = [&](std::size_t t) {
      Tri v = m.tris[t];
      if (flip[t]) std::swap(v[1], v[2]);
      return v;
    };
    std::vector<std::size_t> queue;
    for (std::size_t seed = 0; seed < m.tris.size(); ++seed) {
      if (comp[seed] >= 0) continue;
      const int c = int(comp_volume.size());
      comp[seed] = c;
      queue.assign(1, seed);
      std::vector<std::size_t> members;
      while (!queue.empty()) {
        const std::size_t t = queue.back();
        queue.pop_back();
        members.push_back(t);
        const Tri v = oriented(t);
        for (int e = 0; e < 3; ++e) {
          const std::int64_t a = v[std::size_t(e)], b = v[std::size_t((e + 1) % 3)];
          const EdgeUse& u = edges.at(edge_key(a, b));
          const std::size_t n = std::size_t(u.t0 == std::int64_t(t) ? u.t1 : u.t0);
          // The neighbour must run the shared edge b -> a; if it runs a -> b as stored, it is flipped.
          const Tri& w = m.tris[n];
          bool runs_ab = false;
          for (int f = 0; f < 3; ++f) runs_ab |= (w[std::size_t(f)] == a && w[std::size_t((f + 1) % 3)] == b);
          const char need = runs_ab ? 1 : 0;
          if (comp[n] < 0) {
            comp[n] = c;
            flip[n] = need;
            queue.push_back(n);
          } else if (flip[n] != need) {
            CARDIO_FAIL("surface file " << file
                                        << " cannot be oriented consistently (self-overlapping or "
                                           "duplicated triangles near point "
                                        << a << ")");
          }
        }
      }
      double vol6 = 0;
      for (std::size_t t : members) vol6 += signed_volume6(m.points, oriented(t), centre);
      if (vol6 < 0)
        for (std::size_t t : members) flip[t] ^= 1;
      comp_volume.push_back(std::abs(vol6) / 6);
    }
    for (std::size_t t = 0; t < m.tris.size(); ++t) m.tris[t] = oriented(t);
  }

  r.patches = source_patches(m, o);

  // Tissue volume by the even-odd rule (as the voxelisation): a component nested inside an odd number of
  // others (e.g. a closed endocardium inside the epicardium) is a hole.
  r.tissue_volume_mm3 = 0;
  for (int c = 0; c < int(comp_volume.size()); ++c) {
    int depth = 0;
    if (comp_volume.size() > 1) {
      const std::size_t t = std::size_t(std::find(comp.begin(), comp.end(), c) - comp.begin());
      const Vec3 q = (m.points[std::size_t(m.tris[t][0])] + m.points[std::size_t(m.tris[t][1])] +
                      m.points[std::size_t(m.tris[t][2])]) /
                     3;
      for (int d = 0; d < int(comp_volume.size()); ++d) depth += (d != c && inside_component(m, comp, d, q));
    }
    r.tissue_volume_mm3 += (depth % 2 == 0 ? 1 : -1) * comp_volume[std::size_t(c)];
  }

  // Grid and memory guard, before any voxel is allocated.
  const double h = o.voxel_size_mm;
  imaging::Grid grid;
  double n_est = 1;
  for (int a = 0; a < 3; ++a) {
    const double n = grid_voxels(box.max()[a] - box.min()[a], o);
    n_est *= n;
    if (!(n < double(INT_MAX)))
      CARDIO_FAIL("surface file " << file << ": grid of " << n << " voxels along axis " << a << " at " << h
                                  << " mm is absurd (surface extent " << box.max()[a] - box.min()[a] << " mm)");
    grid.size[std::size_t(a)] = std::int64_t(n);
  }
  if (!(n_est <= o.max_voxels))
    CARDIO_FAIL("surface file " << file << ": rasterising at " << h << " mm needs " << n_est << " voxels ("
                                << grid.size[0] << " x " << grid.size[1] << " x " << grid.size[2] << ", "
                                << n_est * 4 / 1e9 << " GB of labels), over the limit of " << o.max_voxels
                                << " voxels; use a larger voxel size");
  grid.spacing = Vec3::Constant(h);
  grid.origin = box.min() - Vec3::Constant(h * o.margin_voxels);
  grid.direction.setIdentity();
  r.labels.grid = grid;
  r.labels.values.assign(std::size_t(grid.n_voxels()), 0);

  // Cavities: endocardial patch + a fan lid over each boundary loop, first cavity wins overlaps.
  for (std::size_t e = 0; e < o.endocardia.size(); ++e) {
    const Endocardium& endo = o.endocardia[e];
    std::vector<Tri> tris;
    for (std::size_t t = 0; t < m.tris.size(); ++t)
      if (m.patch[t] == endo.patch_class) tris.push_back(m.tris[t]);
    // Boundary half-edges: patch edges used once, in the patch's orientation.
    std::unordered_map<std::uint64_t, std::pair<int, std::array<std::int64_t, 2>>> pe;
    for (const Tri& t : tris)
      for (int k = 0; k < 3; ++k) {
        const std::int64_t a = t[std::size_t(k)], b = t[std::size_t((k + 1) % 3)];
        auto& u = pe[edge_key(a, b)];
        ++u.first;
        u.second = {a, b};
      }
    std::vector<std::array<std::int64_t, 2>> half;
    for (const auto& [k, u] : pe)
      if (u.first == 1) half.push_back(u.second);
    std::sort(half.begin(), half.end());  // deterministic loop order
    r.endocardium_boundary_edges.push_back(std::int64_t(half.size()));

    std::vector<Vec3> points = m.points;  // lid centroids are appended
    std::unordered_map<std::int64_t, std::vector<std::size_t>> from;
    for (std::size_t i = 0; i < half.size(); ++i) from[half[i][0]].push_back(i);
    std::vector<char> used(half.size(), 0);
    for (std::size_t i0 = 0; i0 < half.size(); ++i0) {
      if (used[i0]) continue;
      std::vector<std::size_t> loop;
      const std::int64_t start = half[i0][0];
      for (std::size_t i = i0;;) {
        used[i] = 1;
        loop.push_back(i);
        const std::int64_t v = half[i][1];
        if (v == start) break;
        auto it = from.find(v);
        std::size_t next = half.size();
        if (it != from.end())
          for (std::size_t j : it->second)
            if (!used[j]) {
              next = j;
              break;
            }
        if (next == half.size())
          CARDIO_FAIL("surface file " << file << ": the boundary of endocardium '" << endo.cavity_name << "' (class "
                                      << endo.patch_class << ") does not form closed loops");
        i = next;
      }
      Vec3 c = Vec3::Zero();
      for (std::size_t i : loop) c += m.points[std::size_t(half[i][0])];
      points.push_back(c / double(loop.size()));
      const std::int64_t ci = std::int64_t(points.size()) - 1;
      for (std::size_t i : loop) tris.push_back({half[i][1], half[i][0], ci});  // reversed: closes the cup
    }
    double vol6 = 0;
    for (const Tri& t : tris) vol6 += signed_volume6(points, t, centre);
    r.cavity_names.push_back(endo.cavity_name);
    r.cavity_volume_mm3.push_back(std::abs(vol6) / 6);
    fill_inside(points, tris, r.labels, imaging::RoleVolume::kFirstCavity + std::int32_t(e), false);
  }
  fill_inside(m.points, m.tris, r.labels, imaging::RoleVolume::kMyocardium, true);
  return r;
}

Eigen::Vector3d surface_grid_size(const fs::path& file, const RasterizeOptions& o) {
  check_options(o);
  vtkSmartPointer<vtkPolyData> pd = read_surface(file);
  // The points of polygons and strips (rasterize_surface drops vertices, lines and unused points).
  Eigen::AlignedBox3d box;
  for (vtkCellArray* cells : {pd->GetPolys(), pd->GetStrips()}) {
    if (cells == nullptr) continue;
    cells->InitTraversal();
    vtkIdType npts = 0;
    const vtkIdType* pts = nullptr;
    while (cells->GetNextCell(npts, pts))
      for (vtkIdType a = 0; a < npts; ++a) {
        Vec3 p;
        pd->GetPoint(pts[a], p.data());
        if (p.allFinite()) box.extend(p);
      }
  }
  if (box.isEmpty()) CARDIO_FAIL("surface file " << file << " has no triangle with finite point coordinates");
  Eigen::Vector3d n;
  for (int a = 0; a < 3; ++a) n[a] = grid_voxels(box.max()[a] - box.min()[a], o);
  return n;
}

}  // namespace cardio::surfaces
