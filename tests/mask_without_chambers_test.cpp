// Masks without chambers (issue 15, item 3): phantom label images whose cavity labels were erased
// (set to 0) are meshed with `geometry.derive_cavities`. The reference is the erased labels: their
// voxel counts and the side each cavity lies on, independent of the derivation.
#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cardio/config/config.hpp"
#include "cardio/core/error.hpp"
#include "cardio/imaging/image_io.hpp"
#include "cardio/meshing/voxel_mesh.hpp"
#include "cardio/phantoms/phantoms.hpp"
#include "config/mesh_config.hpp"
#include "mesh/mesh_stage.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
using namespace cardio;
using nlohmann::json;

namespace {

class MaskWithoutChambers : public ::testing::Test {
 public:
  pipeline::MeshConfig config(const std::string& yaml) {
    const fs::path file = dir / "case.yaml";
    std::ofstream(file) << yaml;
    return pipeline::parse_mesh_config(*config::Document::load_file(file));
  }
  test_support::CommandResult cardiac(const std::string& args) {
    return test_support::run_command(test_support::shell_quote(CARDIAC_EXE) + " " + args, dir);
  }
  test_support::TempDir tmp{"cardio_masks_"};
  fs::path dir = tmp.path();
};

/// The phantom's labels with `erase` set to 0, written as NIfTI; returns the erased voxel counts.
std::map<std::int32_t, std::int64_t> write_erased(const phantoms::Phantom& ph, const std::vector<std::int32_t>& erase,
                                                  const fs::path& file) {
  imaging::LabelVolume labels = ph.labels;
  std::map<std::int32_t, std::int64_t> erased;
  for (std::int32_t& l : labels.values)
    if (std::find(erase.begin(), erase.end(), l) != erase.end()) ++erased[l], l = 0;
  imaging::write_label_image(labels, file);
  return erased;
}

/// Mean physical x of the voxels with `label` (the biventricular phantom's RV is on the +x side).
double mean_x(const imaging::LabelVolume& labels, std::int32_t label) {
  double sum = 0;
  std::int64_t n = 0;
  for (std::int64_t v = 0; v < labels.grid.n_voxels(); ++v)
    if (labels.values[std::size_t(v)] == label) {
      const imaging::Index3 i = labels.grid.index(v);
      sum += labels.grid.point(i[0], i[1], i[2]).x(), ++n;
    }
  return sum / double(n);
}

const std::string kDerive =
    "geometry:\n  source: image\n  labels: mask.nii.gz\n  roles: {myocardium: [1, 3]}\n  derive_cavities: {}\n"
    "fibres: {source: rule}\n";

TEST_F(MaskWithoutChambers, BiventricularPhantomGetsItsLvAndRvBackAndRuleFibres) {
  phantoms::PhantomSpec spec;
  spec.biventricular = true;
  spec.voxel_size = 1.0;
  const phantoms::Phantom ph = phantoms::make_phantom(spec);
  const auto erased = write_erased(ph, {2, 4}, dir / "mask.nii.gz");
  const double voxel_mL = ph.labels.grid.voxel_volume() / 1000.0;
  const auto r = pipeline::run_mesh_stages(config(kDerive));
  const json& d = r.report["source"]["derived_cavities"];
  std::cout << "derived: " << d.dump() << "\nerased: lv " << erased.at(2) * voxel_mL << " mL, rv "
            << erased.at(4) * voxel_mL << " mL\n";
  EXPECT_NEAR(d["closing_radius_mm"].get<double>(), 30.0, 1e-12);
  EXPECT_NEAR(d["cavities"]["lv"]["volume_mL"].get<double>() / (erased.at(2) * voxel_mL), 1.0, 0.03);
  EXPECT_NEAR(d["cavities"]["rv"]["volume_mL"].get<double>() / (erased.at(4) * voxel_mL), 1.0, 0.03);
  // The mesh: two closed cavities named lv and rv, on the sides of the erased LV and RV.
  ASSERT_EQ(r.mesh.cavities.size(), 2u);
  EXPECT_EQ(r.mesh.cavities[0].name, "lv");
  EXPECT_EQ(r.mesh.cavities[1].name, "rv");
  for (const auto& c : r.report["cavities"]) EXPECT_TRUE(c["closed"].get<bool>());
  // Centroid of a closed cavity surface: the tetrahedra from the origin, signed (divergence theorem).
  auto cavity_mean_x = [&](std::size_t c) {
    const Eigen::Matrix3Xd p = meshing::surface_points(r.mesh.cavities[c], r.mesh.mesh.rest);
    double volume = 0, moment = 0;
    for (const auto& t : r.mesh.cavities[c].triangles) {
      const double v = p.col(t[0]).dot(p.col(t[1]).cross(p.col(t[2]))) / 6;
      volume += v;
      moment += v * (p(0, t[0]) + p(0, t[1]) + p(0, t[2])) / 4;
    }
    return moment / volume;
  };
  EXPECT_LT(std::abs(cavity_mean_x(0) - mean_x(ph.labels, 2)), 2.0);
  EXPECT_LT(std::abs(cavity_mean_x(1) - mean_x(ph.labels, 4)), 2.0);
  // The mesh's cavity volumes (fitted boundary, lid) against the erased voxels.
  for (std::size_t c = 0; c < 2; ++c) {
    const double mesh_mL = r.report["cavities"][c]["cavity_volume_mL"].get<double>();
    EXPECT_NEAR(mesh_mL / (erased.at(c ? 4 : 2) * voxel_mL), 1.0, 0.03) << r.mesh.cavities[c].name;
  }
  // The myocardium is the input's: as many elements as myocardium voxels (one island).
  const std::int64_t myo = std::count(ph.labels.values.begin(), ph.labels.values.end(), 1) +
                           std::count(ph.labels.values.begin(), ph.labels.values.end(), 3);
  EXPECT_EQ(r.mesh.mesh.n_elements(), myo);
  EXPECT_EQ(r.report["fibre_source"], "rule");
}

TEST_F(MaskWithoutChambers, RealBiventricularShapeWithoutItsCavityLabels) {
  // The Bai et al. mean shape (data/README.md) rasterized at 1.5 mm; with derive_cavities its
  // cavity labels are not mapped, so the mask is myocardium only, open at the base (LV rim about
  // 44-49 mm across). Reference: the surface's own enclosed volumes (divergence theorem).
  const auto r = pipeline::run_mesh_stages(
      config("fibres: {source: rule}\ngeometry:\n  source: surface\n  surface: {file: " CARDIO_SOURCE_DIR
             "/data/biv_meanshape_surface.vtp, voxel_size: 1.5 mm}\n  derive_cavities: {}\n"));
  const json& d = r.report["source"]["derived_cavities"];
  const json& surface = r.report["source"]["surface_cavity_volume_mL"];
  std::cout << "derived: " << d.dump() << "\nsurface: " << surface.dump() << "\n";
  for (const char* c : {"lv", "rv"})
    EXPECT_NEAR(d["cavities"][c]["volume_mL"].get<double>() / surface[c].get<double>(), 1.0, 0.03) << c;
  ASSERT_EQ(r.mesh.cavities.size(), 2u);
  for (const auto& c : r.report["cavities"]) EXPECT_TRUE(c["closed"].get<bool>());
  EXPECT_EQ(r.report["fibre_source"], "rule");
}

TEST_F(MaskWithoutChambers, LvPhantomThroughTheCliGivesOneCavityAndSaysSo) {
  phantoms::PhantomSpec spec;
  spec.voxel_size = 1.0;
  const auto erased = write_erased(phantoms::make_phantom(spec), {2}, dir / "mask.nii.gz");
  std::ofstream(dir / "mask.yaml") << kDerive;
  const auto run = cardiac("mesh " + test_support::shell_quote((dir / "mask.yaml").string()) + " -o " +
                           test_support::shell_quote((dir / "out").string()));
  ASSERT_EQ(run.code, 0) << run.err;
  const json report = json::parse(test_support::slurp(dir / "out" / "mesh_report.json"));
  const json& lv = report["source"]["derived_cavities"]["cavities"]["lv"];
  EXPECT_NEAR(lv["volume_mL"].get<double>() / (double(erased.at(2)) / 1000.0), 1.0, 0.03);
  EXPECT_FALSE(report["source"]["derived_cavities"]["cavities"].contains("rv"));
  ASSERT_EQ(report["cavities"].size(), 1u);
  EXPECT_TRUE(report["cavities"][0]["closed"].get<bool>());
  EXPECT_EQ(report["fibre_source"], "rule");
  const std::string log = test_support::slurp(dir / "out" / "run.log");
  EXPECT_NE(log.find("derived 1 cavity (closing radius 30 mm)"), std::string::npos) << log;
  EXPECT_NE(log.find("one enclosed pool only, taken as the LV"), std::string::npos) << log;
  EXPECT_TRUE(fs::exists(dir / "out" / "mesh.vtu"));
}

TEST_F(MaskWithoutChambers, SlabOfMyocardiumIsAClearErrorAndNoMesh) {
  imaging::LabelVolume slab;
  slab.grid.size = {30, 30, 12};
  slab.values.assign(std::size_t(slab.grid.n_voxels()), 0);
  for (std::int64_t k = 4; k < 8; ++k)
    for (std::int64_t j = 0; j < 30; ++j)
      for (std::int64_t i = 0; i < 30; ++i) slab.at(i, j, k) = 1;
  imaging::write_label_image(slab, dir / "mask.nii.gz");
  std::ofstream(dir / "mask.yaml") << kDerive;
  const auto run = cardiac("mesh " + test_support::shell_quote((dir / "mask.yaml").string()) + " -o " +
                           test_support::shell_quote((dir / "out").string()));
  EXPECT_NE(run.code, 0);
  for (const char* part : {"mask.nii.gz", "cannot derive the cavities", "no region is enclosed by the myocardium",
                           "radius 30 mm", "geometry.derive_cavities.closing_radius", "geometry.roles.cavities"})
    EXPECT_NE(run.err.find(part), std::string::npos) << "'" << part << "' not in: " << run.err;
  EXPECT_FALSE(fs::exists(dir / "out" / "mesh.vtu"));
  EXPECT_FALSE(fs::exists(dir / "out" / "mesh_report.json"));
}

TEST_F(MaskWithoutChambers, SolidWholeHeartMaskEnclosesNothing) {
  // The real CT whole-heart mask (data/README.md): chambers filled, so no pool. Only shallow
  // concavities of its outer surface are closed, each far below 5 % of the tissue's volume.
  try {
    pipeline::run_mesh_stages(config("geometry:\n  source: image\n  labels: " CARDIO_SOURCE_DIR
                                     "/data/ct_heart_mask_0187.nrrd\n  roles: {myocardium: [1]}\n  element_size: 2 mm\n"
                                     "  derive_cavities: {}\nfibres: {source: rule}\n"));
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    for (const char* part : {"ct_heart_mask_0187.nrrd: cannot derive the cavities", "no region is enclosed",
                             "% of the myocardium's volume", "a blood pool needs 5 % and 60 %"})
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << "'" << part << "' not in: " << e.what();
  }
}

TEST_F(MaskWithoutChambers, DeriveAndCavityLabelsTogetherIsAConfigError) {
  try {
    config(
        "geometry:\n  source: image\n  labels: mask.nii.gz\n  roles: {myocardium: [1], cavities: [{name: lv, "
        "labels: [2]}]}\n  derive_cavities: {closing_radius: 20 mm}\n");
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("geometry.derive_cavities derives the cavities"), std::string::npos)
        << e.what();
  }
}

TEST_F(MaskWithoutChambers, ShippedExampleRunsOnTheDocumentedPhantom) {
  // configs/inputs/mask_without_chambers.yaml on what its header says to generate.
  const auto phantom = cardiac("phantom biv -o " + test_support::shell_quote((dir / "phantom").string()));
  ASSERT_EQ(phantom.code, 0) << phantom.err;
  const auto run = cardiac("mesh " CARDIO_SOURCE_DIR "/configs/inputs/mask_without_chambers.yaml -o " +
                           test_support::shell_quote((dir / "out").string()) + " --set geometry.labels=" +
                           test_support::shell_quote((dir / "phantom" / "labels.nii.gz").string()));
  ASSERT_EQ(run.code, 0) << run.err;
  const json report = json::parse(test_support::slurp(dir / "out" / "mesh_report.json"));
  EXPECT_EQ(report["cavities"].size(), 2u);
  EXPECT_EQ(report["fibre_source"], "rule");
}

}  // namespace
