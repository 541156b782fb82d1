// Issue 15, surfaces as labs have them, through `cardiac mesh` on the shipped example configs
// (configs/inputs/surface_patches.yaml, open_surfaces.yaml): the mesh's volumes against the original
// closed surface (vtkMassProperties-checked in surfaces_tests: tissue 144 764 mm³; cavities closed by
// lids 148 014 and 167 387 mm³), and the bad inputs: a gap wider than the stitching width, a patch
// missing, conflicting keys, `endocardia: []` (no cavities, not the default pair). A failed mesh
// leaves no mesh.vtu and no mesh_report.json.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace fs = std::filesystem;

namespace {

using namespace cardio::test_support;

const std::string kConfigs = std::string(CARDIO_SOURCE_DIR) + "/configs/";
constexpr double kTissueMl = 144.764, kLvMl = 148.014, kRvMl = 167.387;

class SurfaceInputs : public ::testing::Test {
 protected:
  CommandResult cardiac(std::vector<std::string> args) const {
    std::string cmd = "cd " + shell_quote(m_dir.string()) + " && " + shell_quote(CARDIAC_EXE);
    for (const auto& a : args) {
      cmd += ' ';
      cmd += shell_quote(a);
    }
    return run_command(cmd, m_dir);
  }
  nlohmann::json report() const { return nlohmann::json::parse(slurp(m_out / "mesh_report.json")); }
  void expect_no_mesh() const {
    EXPECT_FALSE(fs::exists(m_out / "mesh.vtu"));
    EXPECT_FALSE(fs::exists(m_out / "mesh_report.json"));
  }
  TempDir m_tmp{"cardio_surface_inputs_"};
  fs::path m_dir = m_tmp.path();
  fs::path m_out = m_dir / "out";
};

void expect_biv_volumes(const nlohmann::json& r) {
  EXPECT_NEAR(r["tissue_volume_mL"].get<double>(), kTissueMl, 0.03 * kTissueMl);
  ASSERT_EQ(r["cavities"].size(), 2u);
  for (const auto& c : r["cavities"]) {
    EXPECT_TRUE(c["closed"].get<bool>()) << c["name"];
    const double reference = c["name"] == "lv" ? kLvMl : kRvMl;
    EXPECT_NEAR(c["cavity_volume_mL"].get<double>(), reference, 0.03 * reference) << c["name"];
  }
  EXPECT_EQ(r["fibre_source"], "rule");
}

}  // namespace

TEST_F(SurfaceInputs, PatchFilesWithGapsMeshLikeTheClosedSurface) {
  const CommandResult r = cardiac({"mesh", kConfigs + "inputs/surface_patches.yaml", "-o", m_out.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json rep = report();
  expect_biv_volumes(rep);
  const auto& rims = rep["source"]["rims_closed"];
  ASSERT_FALSE(rims.empty());
  for (const auto& s : rims) {
    EXPECT_EQ(s["kind"], "stitched");
    EXPECT_LE(s["gap_mm"].get<double>(), 3.0);
  }
  EXPECT_EQ(rep["source"]["patches"].size(), 4u);
}

TEST_F(SurfaceInputs, OpenFittedSurfacesAreCapped) {
  const CommandResult r = cardiac({"mesh", kConfigs + "inputs/open_surfaces.yaml", "-o", m_out.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json rep = report();
  expect_biv_volumes(rep);
  EXPECT_EQ(rep["source"]["rims_closed"].size(), 3u);
  for (const auto& c : rep["source"]["rims_closed"]) EXPECT_EQ(c["kind"], "capped");
}

TEST_F(SurfaceInputs, AGapWiderThanTheStitchWidthIsAnErrorAndNoMesh) {
  const CommandResult r = cardiac({"mesh", kConfigs + "inputs/surface_patches.yaml", "-o", m_out.string(), "--set",
                                   "geometry.surface.stitch_width=0.5 mm"});
  EXPECT_EQ(r.code, 2) << r.err;  // found by the input checks, before any stage
  EXPECT_NE(r.err.find("is not closed after merging points within 0.001 mm and stitching rims within 0.5 mm"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("mm away at its closest"), std::string::npos) << r.err;
  expect_no_mesh();
  // `cardiac validate` finds it too, at the patches key, without meshing.
  const CommandResult v =
      cardiac({"validate", kConfigs + "inputs/surface_patches.yaml", "--set", "geometry.surface.stitch_width=0.5 mm"});
  EXPECT_EQ(v.code, 2) << v.err;
  EXPECT_NE(v.err.find("geometry.surface.patches: "), std::string::npos) << v.err;
  EXPECT_NE(v.err.find("is not closed"), std::string::npos) << v.err;
}

TEST_F(SurfaceInputs, AMissingPatchSaysWhichRimIsOpenAndNoMesh) {
  // Without the RV endocardium the rims around the RV opening face nothing.
  const std::string data = std::string(CARDIO_SOURCE_DIR) + "/data/inputs/biv_patches/";
  const fs::path config = m_dir / "three_patches.yaml";
  std::ofstream(config)
      << "geometry:\n  source: surface\n  surface:\n    voxel_size: 2 mm\n    patches:\n"
      << "      - {file: " << data << "epicardium.ply, role: epicardium}\n"
      << "      - {file: " << data << "lv_endocardium.ply, role: endocardium, cavity: lv}\n"
      << "      - {file: " << data
      << "base.ply, role: base}\nfibres: {source: uniform, direction: [1, 0, 0], sheet_direction: [0, 1, 0]}\n";
  const CommandResult r = cardiac({"mesh", config.string(), "-o", m_out.string()});
  EXPECT_EQ(r.code, 2) << r.err;  // found by the input checks, before any stage
  EXPECT_NE(r.err.find("open loop"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("cap_open_rims"), std::string::npos) << r.err;
  expect_no_mesh();
}

TEST_F(SurfaceInputs, AnEmptyEndocardiaListMeansNoCavitiesNotTheDefaults) {
  const CommandResult r = cardiac({"mesh", kConfigs + "biv_surface.yaml", "-o", m_out.string(), "--set",
                                   "geometry.surface.endocardia=[]", "--set", "fibres.source=uniform", "--set",
                                   "fibres.direction=[1, 0, 0]", "--set", "fibres.sheet_direction=[0, 1, 0]"});
  // The file has LV and RV classes: with no endocardia they are unconfigured classes, an invalid input.
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("class 3 of array 'class' is none of the configured patches"), std::string::npos) << r.err;
  expect_no_mesh();
}

TEST_F(SurfaceInputs, OneFileOrPatchesNotBoth) {
  const CommandResult r = cardiac({"mesh", kConfigs + "inputs/surface_patches.yaml", "-o", m_out.string(), "--set",
                                   "geometry.surface.file=../../data/biv_meanshape_surface.vtp"});
  EXPECT_EQ(r.code, 2) << r.err;  // an invalid config
  EXPECT_NE(r.err.find("give either one file or a list of patches"), std::string::npos) << r.err;
  expect_no_mesh();
}

TEST_F(SurfaceInputs, AListOfFilesPointsToPatches) {
  const CommandResult r = cardiac(
      {"mesh", kConfigs + "biv_surface.yaml", "-o", m_out.string(), "--set", "geometry.surface.file=[a.ply, b.ply]"});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("expected one file; list several under patches"), std::string::npos) << r.err;
  expect_no_mesh();
}
