// Surfaces given as several patch files (data/inputs, cut from the real biventricular surface by
// scripts/make_input_examples.py): gaps stitched, open rims capped, errors that say where. References
// are independent of the code under test: vtkMassProperties of the original closed surface, and the
// cavity volumes of the original file closed by lids (hand-written divergence sums of
// SurfacesTest.RealBiventricularSurface).
#include <gtest/gtest.h>
#include <unistd.h>

#include <vtkCellArray.h>
#include <vtkIdList.h>
#include <vtkMassProperties.h>
#include <vtkNew.h>
#include <vtkPLYReader.h>
#include <vtkPLYWriter.h>
#include <vtkPolyData.h>
#include <vtkXMLPolyDataReader.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "cardio/core/error.hpp"
#include "cardio/surfaces/rasterize.hpp"

namespace fs = std::filesystem;
namespace surf = cardio::surfaces;

namespace {

const fs::path kData = fs::path(CARDIO_SOURCE_DIR) / "data";
const fs::path kPatches = kData / "inputs" / "biv_patches";
const fs::path kOpen = kData / "inputs" / "biv_open";
// The original file's cavities closed by fan lids over their rims [mm³]
// (SurfacesTest.RealBiventricularSurface computes them by hand from the file).
constexpr double kLvCavity = 148014, kRvCavity = 167387;

double original_tissue_volume() {
  vtkNew<vtkXMLPolyDataReader> r;
  r->SetFileName((kData / "biv_meanshape_surface.vtp").c_str());
  vtkNew<vtkMassProperties> mass;
  mass->SetInputConnection(r->GetOutputPort());
  mass->Update();
  return mass->GetVolume();
}

double voxel_volume(const surf::RasterizedSurface& r, std::int32_t label) {
  const auto n = std::count(r.labels.values.begin(), r.labels.values.end(), label);
  return double(n) * r.labels.grid.spacing.prod();
}

/// The four patches by role (classes as RasterizeOptions' defaults: base 1, epicardium 2, lv 3, rv 4).
std::vector<surf::SurfacePatch> four_patches(const fs::path& lv_file = kPatches / "lv_endocardium.ply") {
  return {
      {kPatches / "epicardium.ply", 2}, {lv_file, 3}, {kPatches / "rv_endocardium.ply", 4}, {kPatches / "base.ply", 1}};
}

surf::RasterizeOptions options() {
  surf::RasterizeOptions o;
  o.voxel_size_mm = 1.5;
  return o;
}

std::string error_of(const std::vector<surf::SurfacePatch>& patches, const surf::RasterizeOptions& o) {
  try {
    (void)surf::rasterize_surface(patches, o);
  } catch (const cardio::Error& e) {
    return e.what();
  }
  return "(no error)";
}

void expect_biv_volumes(const surf::RasterizedSurface& r, double tolerance) {
  const double tissue = original_tissue_volume();
  EXPECT_NEAR(voxel_volume(r, 1), tissue, tolerance * tissue);
  EXPECT_NEAR(r.tissue_volume_mm3, tissue, tolerance * tissue);
  ASSERT_EQ(r.cavity_names, (std::vector<std::string>{"lv", "rv"}));
  EXPECT_NEAR(voxel_volume(r, 2), kLvCavity, tolerance * kLvCavity);
  EXPECT_NEAR(voxel_volume(r, 3), kRvCavity, tolerance * kRvCavity);
  EXPECT_NEAR(r.cavity_volume_mm3[0], kLvCavity, tolerance * kLvCavity);
  EXPECT_NEAR(r.cavity_volume_mm3[1], kRvCavity, tolerance * kRvCavity);
}

}  // namespace

TEST(SurfacePatches, GapsBetweenPatchFilesAreStitched) {
  const surf::RasterizedSurface r = surf::rasterize_surface(four_patches(), options());
  ASSERT_FALSE(r.closures.empty());
  for (const surf::RimClosure& c : r.closures) {
    EXPECT_EQ(c.kind, surf::RimClosure::Kind::stitched) << c.patches;
    EXPECT_GT(c.gap_mm, 0.5) << c.patches;  // the rims are apart: the seam triangles were left out
    EXPECT_LE(c.gap_mm, 3.0) << c.patches;
    EXPECT_GT(c.triangles, 0);
  }
  EXPECT_EQ(r.merged_points, 0);  // nothing merged: the gaps are closed by new triangles only
  expect_biv_volumes(r, 0.03);
}

TEST(SurfacePatches, APatchWoundTheOtherWayGivesTheSameHeart) {
  vtkNew<vtkPLYReader> read;
  read->SetFileName((kPatches / "lv_endocardium.ply").c_str());
  read->Update();
  vtkNew<vtkPolyData> flipped;
  flipped->DeepCopy(read->GetOutput());
  vtkNew<vtkCellArray> cells;
  vtkNew<vtkIdList> ids;
  vtkCellArray* polys = flipped->GetPolys();
  for (polys->InitTraversal(); polys->GetNextCell(ids);) {
    const vtkIdType t[3] = {ids->GetId(0), ids->GetId(2), ids->GetId(1)};
    cells->InsertNextCell(3, t);
  }
  flipped->SetPolys(cells);
  const fs::path file = fs::temp_directory_path() / ("cardio_flipped_lv_" + std::to_string(::getpid()) + ".ply");
  vtkNew<vtkPLYWriter> write;
  write->SetFileName(file.c_str());
  write->SetInputData(flipped);
  ASSERT_EQ(write->Write(), 1);
  const surf::RasterizedSurface a = surf::rasterize_surface(four_patches(), options());
  const surf::RasterizedSurface b = surf::rasterize_surface(four_patches(file), options());
  fs::remove(file);
  EXPECT_EQ(a.labels.values, b.labels.values);
  EXPECT_NEAR(a.tissue_volume_mm3, b.tissue_volume_mm3, 1e-9 * a.tissue_volume_mm3);
}

TEST(SurfacePatches, AGapWiderThanTheStitchWidthSaysWhereAndWhatToSet) {
  surf::RasterizeOptions o = options();
  o.stitch_width_mm = 0.5;
  const std::string msg = error_of(four_patches(), o);
  EXPECT_NE(msg.find("epicardium.ply"), std::string::npos) << msg;
  EXPECT_NE(msg.find("is not closed"), std::string::npos) << msg;
  EXPECT_NE(msg.find("open loops: "), std::string::npos) << msg;
  EXPECT_NE(msg.find(" edges around ("), std::string::npos) << msg;         // where
  EXPECT_NE(msg.find("mm away at its closest"), std::string::npos) << msg;  // how far the other rim is
  EXPECT_NE(msg.find("stitch_width (now 0.5 mm)"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("(no error)"), std::string::npos);
}

TEST(SurfacePatches, AMissingPatchLeavesARimOpenAndSaysWhichPatch) {
  std::vector<surf::SurfacePatch> three = four_patches();
  three.pop_back();  // no base
  const std::string msg = error_of(three, options());
  EXPECT_NE(msg.find("is not closed"), std::string::npos) << msg;
  EXPECT_NE(msg.find("epicardium, class 2"), std::string::npos) << msg;
  EXPECT_NE(msg.find("cap_open_rims"), std::string::npos) << msg;
}

TEST(SurfacePatches, OpenSurfacesAreCappedAtTheirRims) {
  surf::RasterizeOptions o = options();
  o.cap_open_rims = true;
  const std::vector<surf::SurfacePatch> open{
      {kOpen / "epicardium.vtk", 2}, {kOpen / "lv_endocardium.vtk", 3}, {kOpen / "rv_endocardium.vtk", 4}};
  const surf::RasterizedSurface r = surf::rasterize_surface(open, o);
  ASSERT_EQ(r.closures.size(), 3u);  // one cap per rim: epicardium, lv, rv (no rims face each other)
  for (const surf::RimClosure& c : r.closures) EXPECT_EQ(c.kind, surf::RimClosure::Kind::capped) << c.patches;
  expect_biv_volumes(r, 0.03);

  o.cap_open_rims = false;
  const std::string msg = error_of(open, o);
  EXPECT_NE(msg.find("3 open loops"), std::string::npos) << msg;
}

TEST(SurfacePatches, APatchGivenTwiceIsNonManifoldAndSaysWhere) {
  std::vector<surf::SurfacePatch> twice = four_patches();
  twice.push_back({kPatches / "base.ply", 1});  // its points merge with the first copy's
  const std::string msg = error_of(twice, options());
  EXPECT_NE(msg.find("non-manifold edges at ("), std::string::npos) << msg;
  EXPECT_NE(msg.find("duplicated triangles"), std::string::npos) << msg;
}
