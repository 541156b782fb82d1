/// @file projection.cpp
/// Smooth surfaces for the boundary fit: closest points by vtkStaticCellLocator; label surfaces by
/// vtkFlyingEdges3D + vtkWindowedSincPolyDataFilter on the index grid, mapped to physical space
/// here (so that oblique image directions are honoured whatever VTK's image classes support).
#include "cardio/surfaces/projection.hpp"

#include <vtkCellArray.h>
#include <vtkFloatArray.h>
#include <vtkFlyingEdges3D.h>
#include <vtkGenericCell.h>
#include <vtkImageData.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>
#include <vtkSmartPointer.h>
#include <vtkStaticCellLocator.h>
#include <vtkWindowedSincPolyDataFilter.h>

#include <memory>

#include "cardio/core/error.hpp"
#include "windowed_sinc.hpp"

namespace cardio::surfaces {
namespace {

vtkSmartPointer<vtkPolyData> to_polydata(const TriangleSurface& s) {
  vtkNew<vtkPoints> points;
  points->SetDataTypeToDouble();
  points->SetNumberOfPoints(vtkIdType(s.points.size()));
  for (std::size_t i = 0; i < s.points.size(); ++i) points->SetPoint(vtkIdType(i), s.points[i].data());
  vtkNew<vtkCellArray> tris;
  for (const auto& t : s.triangles) {
    const vtkIdType ids[3] = {vtkIdType(t[0]), vtkIdType(t[1]), vtkIdType(t[2])};
    tris->InsertNextCell(3, ids);
  }
  auto pd = vtkSmartPointer<vtkPolyData>::New();
  pd->SetPoints(points);
  pd->SetPolys(tris);
  return pd;
}

/// The 1/2 contour of a 0/1 indicator on the index grid of `grid`, smoothed, in physical space.
TriangleSurface smoothed_contour(const imaging::Grid& grid, const std::vector<float>& indicator) {
  vtkNew<vtkImageData> image;
  image->SetDimensions(int(grid.size[0]), int(grid.size[1]), int(grid.size[2]));
  vtkNew<vtkFloatArray> values;
  values->SetNumberOfValues(vtkIdType(indicator.size()));
  for (std::size_t v = 0; v < indicator.size(); ++v) values->SetValue(vtkIdType(v), indicator[v]);
  image->GetPointData()->SetScalars(values);

  vtkNew<vtkFlyingEdges3D> contour;
  contour->SetInputData(image);
  contour->SetValue(0, 0.5);
  contour->ComputeNormalsOff();
  contour->ComputeGradientsOff();
  contour->ComputeScalarsOff();
  vtkNew<vtkWindowedSincPolyDataFilter> smooth;
  smooth->SetInputConnection(contour->GetOutputPort());
  configure_windowed_sinc(*smooth);  // windowed_sinc.hpp: the steps go, the surface does not shrink
  smooth->Update();
  vtkPolyData* pd = smooth->GetOutput();

  TriangleSurface s;
  s.points.resize(std::size_t(pd->GetNumberOfPoints()));
  for (std::size_t i = 0; i < s.points.size(); ++i) {
    Eigen::Vector3d ijk;
    pd->GetPoint(vtkIdType(i), ijk.data());
    s.points[i] = grid.point(ijk);
  }
  vtkCellArray* polys = pd->GetPolys();
  polys->InitTraversal();
  vtkIdType n = 0;
  const vtkIdType* ids = nullptr;
  while (polys->GetNextCell(n, ids))
    if (n == 3) s.triangles.push_back({ids[0], ids[1], ids[2]});
  return s;
}

}  // namespace

PointProjector closest_point_projector(const TriangleSurface& s) {
  CARDIO_CHECK(!s.triangles.empty(), "closest-point projection onto a surface without triangles");
  struct Located {
    vtkSmartPointer<vtkPolyData> surface;
    vtkSmartPointer<vtkStaticCellLocator> locator;
  };
  auto located = std::make_shared<Located>();
  located->surface = to_polydata(s);
  located->locator = vtkSmartPointer<vtkStaticCellLocator>::New();
  located->locator->SetDataSet(located->surface);
  located->locator->BuildLocator();
  return [located](const Eigen::Vector3d& p) {
    vtkNew<vtkGenericCell> cell;  // per call: the locator's own scratch cell is not thread-safe
    Eigen::Vector3d q;
    vtkIdType cell_id = -1;
    int sub_id = 0;
    double dist2 = 0;
    located->locator->FindClosestPoint(p.data(), q.data(), cell, cell_id, sub_id, dist2);
    return q;
  };
}

std::map<std::string, TriangleSurface> label_surfaces(const imaging::RoleVolume& roles) {
  const imaging::Grid& grid = roles.role.grid;
  const auto& role = roles.role.values;
  std::map<std::string, TriangleSurface> out;
  auto add = [&](const std::string& name, auto inside) {
    std::vector<float> indicator(role.size());
    bool any = false;
    for (std::size_t v = 0; v < role.size(); ++v) {
      indicator[v] = inside(role[v]) ? 1.0f : 0.0f;
      any |= indicator[v] > 0;
    }
    if (!any) return;
    TriangleSurface s = smoothed_contour(grid, indicator);
    if (!s.triangles.empty()) out[name] = std::move(s);
  };
  add("epicardium", [](std::uint8_t r) { return r != imaging::RoleVolume::kOutside; });
  for (std::size_t c = 0; c < roles.cavity_names.size(); ++c)
    add("endocardium_" + roles.cavity_names[c],
        [c](std::uint8_t r) { return r == imaging::RoleVolume::cavity_role(c); });
  return out;
}

}  // namespace cardio::surfaces
