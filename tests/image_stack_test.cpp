// A label image as a stack of 2-D slices through the cardiac command line (issue 15, item 2): the
// Land et al. 2015 LV phantom written slice by slice with ITK's own TIFF writer, meshed with the
// shipped example configs/inputs/image_stack.yaml with only the path and the spacing changed, and
// checked against the phantom's analytic volumes; `cardiac phantom --format tif` writing the
// stack the example reads; bad stacks refused before any mesh is written.
#include <gtest/gtest.h>
#include <vtkFeatureEdges.h>
#include <vtkNew.h>
#include <vtkPolyData.h>
#include <vtkXMLPolyDataReader.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cardio/imaging/image_io.hpp"
#include "cardio/phantoms/phantoms.hpp"
#include "itk_writers.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
using namespace cardio;
using namespace cardio::test_support;

namespace {

const std::string kExample = std::string(CARDIO_SOURCE_DIR) + "/configs/inputs/image_stack.yaml";

class ImageStack : public ::testing::Test {
 protected:
  CommandResult cardiac(const std::vector<std::string>& args) const {
    std::string cmd = "cd " + shell_quote(m_dir.string()) + " && " + shell_quote(CARDIAC_EXE);
    for (const auto& a : args) {
      cmd += ' ';  // not " " + ...: GCC 12 warns (-Wrestrict, PR 105329)
      cmd += shell_quote(a);
    }
    return run_command(cmd, m_dir);
  }
  TempDir m_tmp{"cardio_image_stack_test_"};
  fs::path m_dir = m_tmp.path();
};

/// The phantom's labels written as uint8 TIFF slices folder/lv_<k>.tif (no zero padding: only
/// natural order puts lv_10 after lv_9).
void write_tiff_stack(const imaging::LabelVolume& labels, const fs::path& folder) {
  fs::create_directories(folder);
  const auto nx = unsigned(labels.grid.size[0]), ny = unsigned(labels.grid.size[1]);
  for (std::int64_t k = 0; k < labels.grid.size[2]; ++k) {
    const auto first = labels.values.begin() + k * nx * ny;
    imaging::test::write_slice(folder / std::string("lv_").append(std::to_string(k)).append(".tif"), {nx, ny},
                               std::vector<std::uint8_t>(first, first + nx * ny));
  }
}

std::int64_t count_label(const imaging::LabelVolume& v, std::int32_t label) {
  return std::count(v.values.begin(), v.values.end(), label);
}

/// Boundary edges of a surface, counted by VTK (independently of the mesh stage's own check).
vtkIdType boundary_edges(const fs::path& vtp) {
  vtkNew<vtkXMLPolyDataReader> reader;
  reader->SetFileName(vtp.string().c_str());
  reader->Update();
  vtkNew<vtkFeatureEdges> edges;
  edges->SetInputConnection(reader->GetOutputPort());
  edges->BoundaryEdgesOn();
  edges->FeatureEdgesOff();
  edges->ManifoldEdgesOff();
  edges->NonManifoldEdgesOff();
  edges->Update();
  EXPECT_GT(reader->GetOutput()->GetNumberOfPolys(), 0) << vtp;
  return edges->GetOutput()->GetNumberOfLines();
}

TEST_F(ImageStack, ExampleConfigMeshesAnItkWrittenTiffStackOfTheLvPhantomWithin3Percent) {
  // 0.8 mm, not the example's 1 mm: the spacing given with --set must be the one used.
  phantoms::PhantomSpec spec;
  spec.voxel_size = 0.8;
  const imaging::LabelVolume labels = phantoms::make_phantom(spec).labels;
  write_tiff_stack(labels, m_dir / "slices");
  const CommandResult r =
      cardiac({"mesh", kExample, "-o", "out", "--set", "geometry.labels=" + (m_dir / "slices").string(), "--set",
               "geometry.stack.spacing=0.8 mm"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto report = nlohmann::json::parse(slurp(m_dir / "out" / "mesh_report.json"));
  const double h3 = 0.8 * 0.8 * 0.8;
  const double cavity = phantoms::truncated_ellipsoid_volume(7, 17, 5);
  const double tissue = phantoms::truncated_ellipsoid_volume(10, 20, 5) - cavity;
  const double mesh_tissue = report["tissue_volume_mL"].get<double>() * 1000;
  const auto& lv = report["cavities"].at(0);
  const double mesh_cavity = lv["cavity_volume_mL"].get<double>() * 1000;
  std::cout << "tissue " << mesh_tissue << " mm^3 (analytic " << tissue << ", voxels " << count_label(labels, 1) * h3
            << "); cavity " << mesh_cavity << " mm^3 (analytic " << cavity << ", voxels " << count_label(labels, 2) * h3
            << ")\n";
  EXPECT_NEAR(mesh_tissue / tissue, 1, 0.03);
  EXPECT_NEAR(mesh_cavity / cavity, 1, 0.03);
  EXPECT_NEAR(mesh_tissue / (count_label(labels, 1) * h3), 1, 0.03);
  EXPECT_NEAR(mesh_cavity / (count_label(labels, 2) * h3), 1, 0.03);
  EXPECT_EQ(lv["name"], "lv");
  EXPECT_EQ(lv["closed"], true);
  EXPECT_EQ(boundary_edges(m_dir / "out" / "cavity_lv.vtp"), 0);
  EXPECT_EQ(report["fibre_source"], "rule");
  EXPECT_HAS(report["fibre_sampling"].get<std::string>(), "rule");
  const auto& source = report["source"];
  EXPECT_EQ(source["slices"]["count"], labels.grid.size[2]);
  EXPECT_EQ(source["slices"]["first"], "lv_0.tif");
  EXPECT_EQ(source["slices"]["last"],
            std::string("lv_").append(std::to_string(labels.grid.size[2] - 1)).append(".tif"));
  EXPECT_EQ(source["grid"]["spacing_mm"], nlohmann::json({0.8, 0.8, 0.8}));
}

TEST_F(ImageStack, PhantomCommandWritesTheStackTheExampleReads) {
  const CommandResult r = cardiac({"phantom", "lv", "-o", "ph", "--format", "tif"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_HAS(r.out, "geometry.stack: {spacing: 1 mm");
  const imaging::LabelVolume expected = phantoms::make_phantom({}).labels;
  imaging::StackGeometry grid;
  for (int a = 0; a < 3; ++a) grid.origin_mm[std::size_t(a)] = expected.grid.origin[a];
  const imaging::LabelVolume back = imaging::read_label_image(m_dir / "ph" / "labels", grid);
  EXPECT_EQ(back.grid.size, expected.grid.size);
  EXPECT_LT((back.grid.origin - expected.grid.origin).norm(), 1e-12);
  EXPECT_EQ(back.values, expected.values);
  EXPECT_TRUE(fs::exists(m_dir / "ph" / "fibre.nrrd"));
  // The shipped example's origin is the 1 mm phantom's (as the command prints it).
  const auto at = r.out.find("origin: [");
  ASSERT_NE(at, std::string::npos) << r.out;
  EXPECT_HAS(slurp(kExample), r.out.substr(at, r.out.find(']', at) + 1 - at));
}

TEST_F(ImageStack, BadStacksAreRefusedBeforeMeshingAndLeaveNoMesh) {
  phantoms::PhantomSpec spec;
  write_tiff_stack(phantoms::make_phantom(spec).labels, m_dir / "slices");
  const std::string roles = "  roles: {myocardium: [1], cavities: [{name: lv, labels: [2]}]}\n";
  auto mesh = [&](const std::string& geometry) {
    std::ofstream(m_dir / "case.yaml") << "geometry:\n  source: image\n" << geometry << roles;
    const CommandResult r = cardiac({"mesh", "case.yaml", "-o", "out"});
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_FALSE(fs::exists(m_dir / "out" / "mesh.vtu"));
    EXPECT_FALSE(fs::exists(m_dir / "out" / "mesh_report.json"));
    EXPECT_EQ(cardiac({"validate", "case.yaml"}).code, 2);
    return r.err;
  };
  const std::string no_spacing = mesh("  labels: slices\n");
  EXPECT_HAS(no_spacing, "geometry.labels");
  EXPECT_HAS(no_spacing, "geometry.stack.spacing");

  imaging::test::write_slice(m_dir / "slices" / "lv_7.tif", {3, 4}, std::vector<std::uint8_t>(12, 1));
  const std::string sizes = mesh("  labels: slices/lv_*.tif\n  stack: {spacing: 1 mm}\n");
  EXPECT_HAS(sizes, "'lv_7.tif' is 3x4 pixels but the first slice 'lv_0.tif' is");

  imaging::write_label_image(phantoms::make_phantom(spec).labels, m_dir / "labels.nrrd");
  const std::string not_a_stack = mesh("  labels: labels.nrrd\n  stack: {spacing: [1 mm, 1 mm, 2 mm]}\n");
  EXPECT_HAS(not_a_stack, "geometry.stack");
  EXPECT_HAS(not_a_stack, "remove geometry.stack");

  const std::string empty_glob = mesh("  labels: slices/*.png\n  stack: {spacing: 1 mm}\n");
  EXPECT_HAS(empty_glob, "matches no file");
}

}  // namespace
