#include "cardio/io/vtu.hpp"

#include <vtkCellArray.h>
#include <vtkCellData.h>
#include <vtkCommand.h>
#include <vtkDataArray.h>
#include <vtkDoubleArray.h>
#include <vtkErrorCode.h>
#include <vtkExecutive.h>
#include <vtkFieldData.h>
#include <vtkFloatArray.h>
#include <vtkIntArray.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>
#include <vtkStringArray.h>
#include <vtkTypeInt32Array.h>
#include <vtkUnstructuredGrid.h>
#include <vtkXMLPolyDataWriter.h>
#include <vtkXMLUnstructuredGridWriter.h>
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

#include "cardio/core/atomic_file.hpp"
#include "cardio/core/error.hpp"

namespace cardio::io {
namespace {

/// A VTK array of `values` (column-major, one tuple per column) of element type T.
template <class Array, class T, class Values>
vtkSmartPointer<vtkDataArray> typed_array(const Values& values) {
  auto a = vtkSmartPointer<Array>::New();
  a->SetNumberOfComponents(static_cast<int>(values.rows()));
  a->SetNumberOfTuples(values.cols());
  T* out = a->GetPointer(0);
  const Eigen::Index n = values.size();
  for (Eigen::Index k = 0; k < n; ++k) out[k] = static_cast<T>(values.data()[k]);
  return a;
}

vtkSmartPointer<vtkDataArray> make_array(const Field& f, Storage storage) {
  vtkSmartPointer<vtkDataArray> a = f.integer                   ? typed_array<vtkIntArray, int>(f.values)
                                    : storage == Storage::frame ? typed_array<vtkFloatArray, float>(f.values)
                                                                : typed_array<vtkDoubleArray, double>(f.values);
  a->SetName(f.name.c_str());
  return a;
}

vtkNew<vtkPoints> make_points(const Eigen::Matrix3Xd& x, Storage storage = Storage::full) {
  vtkNew<vtkPoints> pts;
  pts->SetData(storage == Storage::frame ? typed_array<vtkFloatArray, float>(x)
                                         : typed_array<vtkDoubleArray, double>(x));
  return pts;
}

void add_fields(vtkDataSetAttributes* data, const std::vector<Field>& fields, Eigen::Index count, const char* where,
                Storage storage = Storage::full) {
  for (const Field& f : fields) {
    CARDIO_CHECK(f.values.cols() == count,
                 where << " field " << f.name << " has " << f.values.cols() << " values, expected " << count);
    data->AddArray(make_array(f, storage));
  }
}

/// Takes the VTK errors and warnings of a writer and its pipeline instead of letting VTK print them:
/// a failure is reported once, as a cardio::Error whose first words name the file.
class VtkMessages : public vtkCommand {
 public:
  static VtkMessages* New() { return new VtkMessages; }
  void Execute(vtkObject* caller, unsigned long event, void* data) override {
    if (event != vtkCommand::ErrorEvent) return;  // warnings: silenced, a complete file is fine
    ++errors;
    // The executive's "returned failure for request" only dumps its request: no reason in it.
    if (!first.empty() || data == nullptr || vtkExecutive::SafeDownCast(caller)) return;
    // "ERROR: In FILE, line N\nCLASS (0x...): MESSAGE": keep MESSAGE.
    std::istringstream lines(static_cast<const char*>(data));
    std::string line;
    while (std::getline(lines, line))
      if (const auto at = line.find("): "); at != std::string::npos && line.rfind("ERROR: In", 0) != 0) {
        first = line.substr(at + 3);
        return;
      }
  }
  std::string first;
  int errors = 0;
};

/// VTK's XML writers return success even when the disk fills up, and lose the error of the last
/// buffer's flush when they close the file: a complete file ends with the closing tag.
void verify_xml_file(const std::filesystem::path& file, const std::filesystem::path& tmp) {
  static const std::string kEnd = "</VTKFile>\n";
  std::ifstream in(tmp, std::ios::binary | std::ios::ate);
  const std::streamoff size = in ? static_cast<std::streamoff>(in.tellg()) : -1;
  std::string tail(kEnd.size(), '\0');
  if (size >= static_cast<std::streamoff>(kEnd.size())) {
    in.seekg(size - static_cast<std::streamoff>(kEnd.size()));
    in.read(tail.data(), static_cast<std::streamsize>(tail.size()));
  }
  if (!in || tail != kEnd)
    CARDIO_FAIL("cannot write " << file.string() << ": the file is incomplete (" << std::max<std::streamoff>(size, 0)
                                << " bytes written; disk full?)");
}

template <class Writer, class Data>
void write_xml(const std::filesystem::path& file, Data* data, Storage storage = Storage::full) {
  write_via_temp(file, [&](const std::filesystem::path& tmp) {
    vtkNew<Writer> w;
    vtkNew<VtkMessages> messages;
    for (vtkObject* o : {static_cast<vtkObject*>(w.Get()), static_cast<vtkObject*>(w->GetExecutive())})
      for (unsigned long event : {vtkCommand::ErrorEvent, vtkCommand::WarningEvent}) o->AddObserver(event, messages);
    w->SetFileName(tmp.c_str());
    w->SetInputData(data);
    w->SetDataModeToAppended();
    w->EncodeAppendedDataOff();
    // zlib level 1 compresses double data about as well as VTK's default level (5), in less time.
    // Frames: LZ4, 6 % of the default case's CPU time with zlib level 1 (docs/performance.md).
    if (storage == Storage::frame) w->SetCompressorTypeToLZ4();
    w->SetCompressionLevel(1);
    errno = 0;
    const int ok = w->Write();
    const int write_errno = errno;  // VTK calls any failed stream write "out of disk space"
    const unsigned long code = w->GetErrorCode();
    if (ok != 1 || code != vtkErrorCode::NoError || messages->errors > 0) {
      const std::string reason = code == vtkErrorCode::NoError ? std::string("VTK writer failed")
                                 : write_errno != 0            ? std::string(std::strerror(write_errno))
                                                               : vtkErrorCode::GetStringFromErrorCode(code);
      CARDIO_FAIL("cannot write " << file.string() << ": " << reason
                                  << (messages->first.empty() ? "" : " (VTK: " + messages->first + ")"));
    }
    verify_xml_file(file, tmp);
  });
}

vtkNew<vtkUnstructuredGrid> hex_grid(const mechanics::HexMesh& mesh, Storage storage = Storage::full) {
  vtkNew<vtkUnstructuredGrid> grid;
  grid->SetPoints(make_points(mesh.rest, storage));
  // 32-bit connectivity where the node ids fit: half the bytes of VTK's default 64-bit ids.
  CARDIO_CHECK(mesh.n_nodes() <= std::numeric_limits<std::int32_t>::max(),
               "the mesh has " << mesh.n_nodes() << " nodes: more than a VTK file with 32-bit ids holds");
  vtkNew<vtkTypeInt32Array> offsets, connectivity;
  offsets->SetNumberOfValues(mesh.n_elements() + 1);
  connectivity->SetNumberOfValues(8 * mesh.n_elements());
  for (std::int64_t e = 0; e <= mesh.n_elements(); ++e) offsets->SetValue(e, std::int32_t(8 * e));
  for (std::int64_t e = 0; e < mesh.n_elements(); ++e)
    for (int i = 0; i < 8; ++i) connectivity->SetValue(8 * e + i, std::int32_t(mesh.hexes[std::size_t(e)][i]));
  vtkNew<vtkCellArray> cells;
  cells->SetData(offsets, connectivity);
  grid->SetCells(VTK_HEXAHEDRON, cells);
  return grid;
}

Field material_field(const mechanics::HexMesh& mesh) {
  Field f{"material", Eigen::MatrixXd(1, mesh.n_elements()), true};
  for (std::int64_t e = 0; e < mesh.n_elements(); ++e) f.values(0, e) = mesh.material[std::size_t(e)];
  return f;
}

void add_strings(vtkFieldData* data, const std::vector<FieldStrings>& strings) {
  for (const FieldStrings& s : strings) {
    vtkNew<vtkStringArray> a;
    a->SetName(s.name.c_str());
    for (const auto& v : s.values) a->InsertNextValue(v);
    data->AddArray(a);
  }
}

}  // namespace

void write_mesh_vtu(const std::filesystem::path& file, const mechanics::HexMesh& mesh,
                    const std::vector<Field>& point_fields, const std::vector<Field>& cell_fields,
                    const std::vector<FieldStrings>& field_data) {
  auto grid = hex_grid(mesh);
  add_fields(grid->GetPointData(), point_fields, mesh.n_nodes(), "point");
  add_fields(grid->GetCellData(), cell_fields, mesh.n_elements(), "cell");
  add_strings(grid->GetFieldData(), field_data);
  write_xml<vtkXMLUnstructuredGridWriter>(file, grid.Get());
}

void write_vtu(const std::filesystem::path& file, const mechanics::HexMesh& mesh, const Eigen::Matrix3Xd& x,
               const std::vector<Field>& extra, const std::vector<Field>& extra_cells, Storage storage) {
  CARDIO_CHECK(x.cols() == mesh.n_nodes(), "state has " << x.cols() << " nodes, mesh " << mesh.n_nodes());
  auto grid = hex_grid(mesh, storage);
  add_fields(grid->GetPointData(), {{"displacement", x - mesh.rest}}, mesh.n_nodes(), "point", storage);
  grid->GetPointData()->SetActiveVectors("displacement");
  add_fields(grid->GetPointData(), extra, mesh.n_nodes(), "point", storage);
  add_fields(grid->GetCellData(), {{"fibre", mesh.fibre}, {"sheet", mesh.sheet}, material_field(mesh)},
             mesh.n_elements(), "cell", storage);
  add_fields(grid->GetCellData(), extra_cells, mesh.n_elements(), "cell", storage);
  write_xml<vtkXMLUnstructuredGridWriter>(file, grid.Get(), storage);
}

void write_vtp(const std::filesystem::path& file, const Eigen::Matrix3Xd& points,
               const std::vector<std::vector<std::int64_t>>& polygons, const std::vector<Field>& cell_fields,
               const std::vector<FieldStrings>& field_data) {
  vtkNew<vtkPolyData> poly;
  poly->SetPoints(make_points(points));
  vtkNew<vtkCellArray> cells;
  for (const auto& p : polygons) {
    cells->InsertNextCell(static_cast<vtkIdType>(p.size()));
    for (std::int64_t id : p) {
      CARDIO_CHECK(id >= 0 && id < points.cols(), "polygon point id " << id << " out of range");
      cells->InsertCellPoint(id);
    }
  }
  poly->SetPolys(cells);
  add_fields(poly->GetCellData(), cell_fields, static_cast<Eigen::Index>(polygons.size()), "cell");
  add_strings(poly->GetFieldData(), field_data);
  write_xml<vtkXMLPolyDataWriter>(file, poly.Get());
}

}  // namespace cardio::io
