#include "cardio/surfaces/smoothing.hpp"

#include <vtkCellArray.h>
#include <vtkNew.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>
#include <vtkWindowedSincPolyDataFilter.h>

#include "cardio/core/error.hpp"
#include "windowed_sinc.hpp"

namespace cardio::surfaces {

void configure_windowed_sinc(vtkWindowedSincPolyDataFilter& smooth) {
  smooth.SetNumberOfIterations(kSmoothingIterations);
  smooth.SetPassBand(kSmoothingPassBand);
  smooth.NormalizeCoordinatesOn();  // about the bounding box's centre, scaled: the same filter at any size
  smooth.BoundarySmoothingOff();
  smooth.FeatureEdgeSmoothingOff();
  smooth.NonManifoldSmoothingOn();
}

Eigen::Matrix3Xd smoothed_points(const Eigen::Matrix3Xd& points,
                                 const std::vector<std::array<std::int32_t, 4>>& quads) {
  vtkNew<vtkPoints> pts;
  pts->SetDataTypeToDouble();
  pts->SetNumberOfPoints(vtkIdType(points.cols()));
  for (Eigen::Index i = 0; i < points.cols(); ++i) pts->SetPoint(vtkIdType(i), points.col(i).data());
  vtkNew<vtkCellArray> polys;
  for (std::size_t q = 0; q < quads.size(); ++q) {
    vtkIdType ids[4];
    for (int k = 0; k < 4; ++k) {
      const std::int32_t n = quads[q][std::size_t(k)];
      CARDIO_CHECK(n >= 0 && n < points.cols(),
                   "surface smoothing: quad " << q << " has point " << n << " of " << points.cols());
      ids[k] = n;
    }
    polys->InsertNextCell(4, ids);
  }
  vtkNew<vtkPolyData> surface;
  surface->SetPoints(pts);
  surface->SetPolys(polys);
  vtkNew<vtkWindowedSincPolyDataFilter> smooth;
  smooth->SetInputData(surface);
  configure_windowed_sinc(*smooth);
  smooth->Update();
  vtkPolyData* out = smooth->GetOutput();
  CARDIO_CHECK(out->GetNumberOfPoints() == points.cols(),
               "surface smoothing: VTK returned " << out->GetNumberOfPoints() << " points for " << points.cols());
  Eigen::Matrix3Xd smoothed(3, points.cols());
  for (Eigen::Index i = 0; i < points.cols(); ++i) out->GetPoint(vtkIdType(i), smoothed.col(i).data());
  return smoothed;
}

}  // namespace cardio::surfaces
