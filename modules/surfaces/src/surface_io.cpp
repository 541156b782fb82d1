/// @file surface_io.cpp
/// Surface files -> classified triangle meshes (see surface_io.hpp).
#include "surface_io.hpp"

#include <vtkCellArray.h>
#include <vtkCellData.h>
#include <vtkCleanPolyData.h>
#include <vtkCommand.h>
#include <vtkDataArray.h>
#include <vtkExecutive.h>
#include <vtkIntArray.h>
#include <vtkNew.h>
#include <vtkPLYReader.h>
#include <vtkPointData.h>
#include <vtkPoints.h>
#include <vtkPolyDataReader.h>
#include <vtkSTLReader.h>
#include <vtkTriangleFilter.h>
#include <vtkXMLPolyDataReader.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>

#include "cardio/core/error.hpp"

namespace cardio::surfaces::detail {
namespace {

namespace fs = std::filesystem;
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

}  // namespace

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

vtkSmartPointer<vtkPolyData> read_triangles(const fs::path& file) { return triangulated(read_surface(file)); }

TriangleMesh to_mesh(vtkPolyData* tri, const std::vector<int>& cls) {
  TriangleMesh m;
  m.points.resize(std::size_t(tri->GetNumberOfPoints()));
  for (std::size_t i = 0; i < m.points.size(); ++i) tri->GetPoint(vtkIdType(i), m.points[i].data());
  vtkCellArray* polys = tri->GetPolys();
  polys->InitTraversal();
  vtkIdType npts = 0;
  const vtkIdType* pts = nullptr;
  for (std::size_t t = 0; polys->GetNextCell(npts, pts); ++t) {
    if (npts != 3) continue;
    m.tris.push_back({pts[0], pts[1], pts[2]});
    m.patch.push_back(cls[t]);
  }
  return m;
}

TriangleMesh merge_points(const TriangleMesh& m, double tolerance, std::int64_t& merged_points) {
  vtkNew<vtkPoints> points;
  points->SetDataTypeToDouble();
  points->SetNumberOfPoints(vtkIdType(m.points.size()));
  for (std::size_t i = 0; i < m.points.size(); ++i) points->SetPoint(vtkIdType(i), m.points[i].data());
  vtkNew<vtkCellArray> cells;
  vtkNew<vtkIntArray> patch;
  patch->SetName(kPatchArray);
  std::vector<char> used(m.points.size(), 0);
  for (std::size_t t = 0; t < m.tris.size(); ++t) {
    const vtkIdType ids[3] = {m.tris[t][0], m.tris[t][1], m.tris[t][2]};
    cells->InsertNextCell(3, ids);
    patch->InsertNextValue(m.patch[t]);
    for (vtkIdType v : ids) used[std::size_t(v)] = 1;
  }
  vtkNew<vtkPolyData> pd;
  pd->SetPoints(points);
  pd->SetPolys(cells);
  pd->GetCellData()->AddArray(patch);

  // Triangles that collapse are dropped rather than turned into lines.
  vtkNew<vtkCleanPolyData> clean;
  clean->SetInputData(pd);
  clean->PointMergingOn();
  clean->ToleranceIsAbsoluteOn();
  clean->SetAbsoluteTolerance(tolerance);
  clean->ConvertLinesToPointsOff();
  clean->ConvertPolysToLinesOff();
  clean->ConvertStripsToPolysOff();
  clean->Update();
  vtkPolyData* merged = clean->GetOutput();
  auto* mp = vtkIntArray::SafeDownCast(merged->GetCellData()->GetArray(kPatchArray));
  CARDIO_CHECK(mp != nullptr, "patch array lost in vtkCleanPolyData");
  CARDIO_CHECK(merged->GetNumberOfVerts() + merged->GetNumberOfLines() == 0, "vtkCleanPolyData made lines");
  std::vector<int> cls(std::size_t(merged->GetNumberOfPolys()));
  for (std::size_t t = 0; t < cls.size(); ++t) cls[t] = mp->GetValue(vtkIdType(t));
  TriangleMesh out = to_mesh(merged, cls);
  merged_points += std::int64_t(std::count(used.begin(), used.end(), 1)) - std::int64_t(out.points.size());
  return out;
}

}  // namespace cardio::surfaces::detail
