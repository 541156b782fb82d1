#include "cardio/io/vtu.hpp"

#include <vtkCellArray.h>
#include <vtkCellData.h>
#include <vtkDoubleArray.h>
#include <vtkIntArray.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkPoints.h>
#include <vtkUnstructuredGrid.h>
#include <vtkXMLUnstructuredGridWriter.h>

#include "cardio/core/atomic_file.hpp"
#include "cardio/core/error.hpp"

namespace cardio::io {
namespace {

vtkNew<vtkDoubleArray> vector_array(const char* name, const Eigen::Matrix3Xd& v) {
  vtkNew<vtkDoubleArray> a;
  a->SetName(name);
  a->SetNumberOfComponents(3);
  a->SetNumberOfTuples(v.cols());
  for (Eigen::Index i = 0; i < v.cols(); ++i) a->SetTuple3(i, v(0, i), v(1, i), v(2, i));
  return a;
}

}  // namespace

void write_vtu(const std::filesystem::path& file, const mechanics::HexMesh& mesh, const Eigen::Matrix3Xd& x,
               const std::vector<PointField>& extra) {
  CARDIO_CHECK(x.cols() == mesh.n_nodes(), "state has " << x.cols() << " nodes, mesh " << mesh.n_nodes());
  vtkNew<vtkPoints> pts;
  pts->SetDataTypeToDouble();
  pts->SetNumberOfPoints(mesh.n_nodes());
  for (Eigen::Index i = 0; i < mesh.rest.cols(); ++i) pts->SetPoint(i, mesh.rest(0, i), mesh.rest(1, i), mesh.rest(2, i));
  vtkNew<vtkUnstructuredGrid> grid;
  grid->SetPoints(pts);
  grid->Allocate(mesh.n_elements());
  for (const auto& h : mesh.hexes) {
    vtkIdType ids[8];
    for (int i = 0; i < 8; ++i) ids[i] = h[i];
    grid->InsertNextCell(VTK_HEXAHEDRON, 8, ids);
  }
  const Eigen::Matrix3Xd u = x - mesh.rest;
  grid->GetPointData()->AddArray(vector_array("displacement", u));
  grid->GetPointData()->SetActiveVectors("displacement");
  for (const PointField& pf : extra) {
    CARDIO_CHECK(pf.values.cols() == mesh.n_nodes(), "point field " << pf.name << " has wrong size");
    grid->GetPointData()->AddArray(vector_array(pf.name.c_str(), pf.values));
  }
  grid->GetCellData()->AddArray(vector_array("fibre", mesh.fibre));
  grid->GetCellData()->AddArray(vector_array("sheet", mesh.sheet));
  vtkNew<vtkIntArray> mat;
  mat->SetName("material");
  mat->SetNumberOfTuples(mesh.n_elements());
  for (std::int64_t e = 0; e < mesh.n_elements(); ++e) mat->SetValue(e, mesh.material[static_cast<std::size_t>(e)]);
  grid->GetCellData()->AddArray(mat);

  write_via_temp(file, [&](const std::filesystem::path& tmp) {
    vtkNew<vtkXMLUnstructuredGridWriter> w;
    w->SetFileName(tmp.c_str());
    w->SetInputData(grid);
    w->SetDataModeToAppended();
    w->EncodeAppendedDataOff();
    if (w->Write() != 1) CARDIO_FAIL("cannot write " << file.string() << " (VTK writer failed)");
  });
}

}  // namespace cardio::io
