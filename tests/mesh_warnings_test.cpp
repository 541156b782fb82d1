// Honest mesh reports (issue 15): each warning of mesh_report.json triggered by generated labels
// whose numbers are known by construction (islands of counted voxels, a one-voxel wall, a cavity
// blob the myocardium does not enclose, labels without a role), and none for clean cases.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "cardio/config/config.hpp"
#include "cardio/imaging/image_io.hpp"
#include "config/mesh_config.hpp"
#include "mesh/mesh_cache.hpp"
#include "mesh/mesh_stage.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
using namespace cardio;
using nlohmann::json;

namespace {

constexpr long kN = 24;  // grid of kN^3 voxels of 1 mm, voxel centres at integer mm

/// The block heart: a 16^3 myocardium cube (label 1, indices 2..17) around an 8 x 8 cavity (label
/// 2, i, j in 6..13) from k = 6 up through the top wall (k = 17): 4-voxel walls, open at the top.
/// 16^3 - 8 * 8 * 12 = 3328 myocardium voxels, 768 cavity voxels.
std::int32_t block_heart(long i, long j, long k) {
  auto in = [](long x, long lo, long hi) { return x >= lo && x <= hi; };
  if (in(i, 6, 13) && in(j, 6, 13) && in(k, 6, 17)) return 2;
  return in(i, 2, 17) && in(j, 2, 17) && in(k, 2, 17) ? 1 : 0;
}
constexpr double kBlockTissue_mL = 3.328, kBlockCavity_mL = 0.768;

class MeshWarnings : public ::testing::Test {
 public:
  /// Write the labels of `label_of` and mesh them (staircase: mesh volumes = voxel volumes).
  pipeline::MeshStageResult mesh(const std::function<std::int32_t(long, long, long)>& label_of,
                                 const std::string& extra = "") {
    write_labels(label_of);
    return run(image_yaml(extra));
  }
  void write_labels(const std::function<std::int32_t(long, long, long)>& label_of) {
    imaging::LabelVolume labels;
    labels.grid.size = {kN, kN, kN};
    labels.values.resize(std::size_t(kN * kN * kN));
    for (long k = 0; k < kN; ++k)
      for (long j = 0; j < kN; ++j)
        for (long i = 0; i < kN; ++i) labels.at(i, j, k) = label_of(i, j, k);
    imaging::write_label_image(labels, dir / "labels.nii.gz");
  }
  static std::string image_yaml(const std::string& extra) {
    return "geometry:\n  source: image\n  labels: labels.nii.gz\n  boundary_fit: staircase\n"
           "  roles: {myocardium: [1], cavities: [{name: lv, labels: [2]}]}\n" +
           extra + "fibres: {source: uniform, direction: [0, 0, 1], sheet_direction: [1, 0, 0]}\n";
  }
  pipeline::MeshStageResult run(const std::string& yaml) {
    std::ofstream(dir / "case.yaml") << yaml;
    auto doc = config::Document::load_file(dir / "case.yaml");
    return pipeline::run_mesh_stages(pipeline::parse_mesh_config(*doc), &log);
  }
  test_support::TempDir tmp{"cardio_warnings_"};
  fs::path dir = tmp.path();
  std::ostringstream log;
};

/// The warnings of a report with kind `kind`.
std::vector<json> of_kind(const json& report, const std::string& kind) {
  std::vector<json> out;
  for (const json& w : report.at("warnings")) {
    EXPECT_TRUE(w.at("message").is_string());
    if (w.at("kind") == kind) out.push_back(w);
  }
  return out;
}

TEST_F(MeshWarnings, CleanBlockHeartHasNone) {
  const auto r = mesh(block_heart);
  EXPECT_NEAR(r.report["tissue_volume_mL"].get<double>(), kBlockTissue_mL, 1e-9);
  EXPECT_TRUE(r.report["warnings"].is_array());
  EXPECT_TRUE(r.report["warnings"].empty()) << r.report["warnings"].dump(2);
  EXPECT_EQ(log.str().find("] warning:"), std::string::npos) << log.str();
  // The opening at the top is the base: the long axis is +z.
  ASSERT_TRUE(r.report["long_axis"].is_object());
  EXPECT_NEAR(r.report["long_axis"]["base_normal"][2].get<double>(), 1.0, 1e-12);
}

TEST_F(MeshWarnings, LvPhantomFittedHasNone) {
  // The default path of a phantom heart: the smooth fit, compared with the analytic volumes.
  const auto r = run("geometry: {source: phantom, phantom: {voxel_size: 1 mm}}\nfibres: {source: phantom}\n");
  EXPECT_TRUE(r.report["warnings"].empty()) << r.report["warnings"].dump(2);
}

/// Volume below z = z_base of the ellipsoid (r_s, r_s, r_l) centred at the origin [mL]: Land et al.'s LV.
double truncated_ellipsoid_mL(double r_s, double r_l, double z_base) {
  return M_PI * r_s * r_s * (z_base - z_base * z_base * z_base / (3 * r_l * r_l) + 2 * r_l / 3) / 1000;
}

TEST_F(MeshWarnings, CoarseLvPhantomWarnsOfItsThinWallAndItsVolumes) {
  // The Land LV wall is 3 mm thick (r 7 -> 10 mm, apex 17 -> 20 mm): 1.5 voxels of 2 mm, 1 of 3 mm.
  const double cavity = truncated_ellipsoid_mL(7, 17, 5), tissue = truncated_ellipsoid_mL(10, 20, 5) - cavity;
  for (double h : {2.0, 3.0}) {
    std::ostringstream y;
    y << "geometry: {source: phantom, phantom: {voxel_size: " << h << " mm}}\nfibres: {source: phantom}\n";
    const auto r = run(y.str());
    const auto thin = of_kind(r.report, "thin_wall");
    ASSERT_EQ(thin.size(), 1u) << h << ": " << r.report["warnings"].dump(2);
    EXPECT_GT(thin[0]["voxels"].get<long>(), 0);
    EXPECT_DOUBLE_EQ(thin[0]["voxel_size_mm"].get<double>(), h);
    EXPECT_LE(thin[0]["suggested_voxel_size_mm"].get<double>(), 3.0 / 2);  // two voxels across 3 mm
    // Whatever is reported about the volumes is against the closed forms.
    for (const json& v : of_kind(r.report, "volume_mismatch")) {
      const bool is_tissue = v["part"] == "tissue";
      EXPECT_NEAR(v["source_mL"].get<double>(), is_tissue ? tissue : cavity, 1e-9);
      const double mesh_mL = is_tissue ? r.report["tissue_volume_mL"].get<double>()
                                       : r.report["cavities"][0]["cavity_volume_mL"].get<double>();
      EXPECT_NEAR(v["difference_percent"].get<double>(), 100 * (mesh_mL / v["source_mL"].get<double>() - 1), 1e-9);
      EXPECT_GT(std::abs(v["difference_percent"].get<double>()), 5.0);
    }
    if (h == 3.0) {
      EXPECT_EQ(of_kind(r.report, "volume_mismatch").size(), 2u) << r.report["warnings"].dump(2);
    }
  }
}

TEST_F(MeshWarnings, DroppedIslandsGiveTheirCountAndVolume) {
  // Three islands away from the heart: 1 + 8 + 3 = 12 voxels (12 mm^3).
  const auto r = mesh([](long i, long j, long k) {
    if (i == 22 && j == 10 && k == 22) return 1;
    if ((i == 20 || i == 21) && j >= 2 && j <= 3 && k >= 2 && k <= 3) return 1;
    if (i >= 2 && i <= 4 && j == 21 && k == 21) return 1;
    return block_heart(i, j, k);
  });
  const auto w = of_kind(r.report, "islands_dropped");
  ASSERT_EQ(w.size(), 1u) << r.report["warnings"].dump(2);
  EXPECT_EQ(w[0]["count"].get<long>(), 3);
  EXPECT_EQ(w[0]["voxels"].get<long>(), 12);
  EXPECT_NEAR(w[0]["volume_mL"].get<double>(), 0.012, 1e-12);
  EXPECT_NEAR(w[0]["percent_of_tissue"].get<double>(), 100.0 * 12 / (3328 + 12), 1e-9);
  // 12 of 3340 voxels (-0.36 %) is within the default 5 %: the islands are the only warning.
  EXPECT_EQ(r.report["warnings"].size(), 1u) << r.report["warnings"].dump(2);
  EXPECT_NE(log.str().find("warning: dropped 3 myocardium islands"), std::string::npos) << log.str();
  // The same lost volume against a tolerance below it: the tissue differs from the source.
  const auto tight =
      mesh([](long i, long j,
              long k) { return i >= 20 && i <= 22 && j >= 2 && j <= 5 && k == 2 ? 1 : block_heart(i, j, k); },
           "  volume_tolerance: 0.3 %\n");
  const auto v = of_kind(tight.report, "volume_mismatch");
  ASSERT_EQ(v.size(), 1u) << tight.report["warnings"].dump(2);
  EXPECT_EQ(v[0]["part"], "tissue");
  EXPECT_NEAR(v[0]["source_mL"].get<double>(), kBlockTissue_mL + 0.012, 1e-9);
  EXPECT_NEAR(v[0]["mesh_mL"].get<double>(), kBlockTissue_mL, 1e-9);
  EXPECT_NEAR(v[0]["difference_percent"].get<double>(), -100.0 * 12 / 3340, 1e-9);
  EXPECT_NEAR(v[0]["tolerance_percent"].get<double>(), 0.3, 1e-12);
  EXPECT_TRUE(of_kind(mesh(block_heart, "  volume_tolerance: 0.3 %\n").report, "volume_mismatch").empty());
}

TEST_F(MeshWarnings, CavityVolumeBeyondTheToleranceIsAWarning) {
  // A 4^3 blob of cavity label that no myocardium encloses (centred at the opening's height, so
  // the automatic base stays the top): source cavity 768 + 64 voxels, mesh cavity 768.
  const auto r = mesh([](long i, long j, long k) {
    return i >= 19 && i <= 22 && j >= 19 && j <= 22 && k >= 16 && k <= 19 ? 2 : block_heart(i, j, k);
  });
  const auto w = of_kind(r.report, "volume_mismatch");
  ASSERT_EQ(w.size(), 1u) << r.report["warnings"].dump(2);
  EXPECT_EQ(w[0]["part"], "lv cavity");
  EXPECT_NEAR(w[0]["source_mL"].get<double>(), kBlockCavity_mL + 0.064, 1e-9);
  EXPECT_NEAR(w[0]["mesh_mL"].get<double>(), kBlockCavity_mL, 1e-9);
  EXPECT_NEAR(w[0]["difference_percent"].get<double>(), -100.0 * 64 / 832, 1e-9);
  EXPECT_NEAR(w[0]["tolerance_percent"].get<double>(), 5.0, 1e-12);
  EXPECT_NE(log.str().find("warning: the mesh's lv cavity volume"), std::string::npos) << log.str();
}

TEST_F(MeshWarnings, OneVoxelWallGivesWhereAndASmallerVoxel) {
  // The -x wall beside the cavity (j, k in 6..13) is cut to its inner layer i = 5: 8 x 8 voxels
  // with the cavity on one side and the outside on the other.
  const auto r = mesh([](long i, long j, long k) {
    if (i >= 2 && i <= 4 && j >= 6 && j <= 13 && k >= 6 && k <= 13) return 0;
    return block_heart(i, j, k);
  });
  const auto w = of_kind(r.report, "thin_wall");
  ASSERT_EQ(w.size(), 1u) << r.report["warnings"].dump(2);
  EXPECT_EQ(w[0]["voxels"].get<long>(), 64);
  ASSERT_EQ(w[0]["walls"].size(), 1u);
  EXPECT_EQ(w[0]["walls"][0]["between"], json({"outside", "lv"}));
  const json& p = w[0]["walls"][0]["position_mm"];
  EXPECT_DOUBLE_EQ(p[0].get<double>(), 5.0);  // in the wall, next to the middle of the cut
  EXPECT_NEAR(p[1].get<double>(), 9.5, 0.51);
  EXPECT_NEAR(p[2].get<double>(), 9.5, 0.51);
  EXPECT_DOUBLE_EQ(w[0]["voxel_size_mm"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(w[0]["suggested_voxel_size_mm"].get<double>(), 0.5);
  EXPECT_EQ(r.report["warnings"].size(), 1u) << r.report["warnings"].dump(2);
}

TEST_F(MeshWarnings, UnmappedLabelsAreListedWithTheirVoxelCounts) {
  // Label 7: a 2 x 3 x 4 block (24 voxels); label 9: 5 voxels in a row; neither has a role.
  const auto r = mesh([](long i, long j, long k) {
    if (i >= 20 && i <= 21 && j >= 2 && j <= 4 && k >= 2 && k <= 5) return 7;
    if (i >= 2 && i <= 6 && j == 21 && k == 21) return 9;
    return block_heart(i, j, k);
  });
  const auto w = of_kind(r.report, "unmapped_labels");
  ASSERT_EQ(w.size(), 1u) << r.report["warnings"].dump(2);
  ASSERT_EQ(w[0]["labels"].size(), 2u);
  EXPECT_EQ(w[0]["labels"][0]["label"].get<int>(), 7);
  EXPECT_EQ(w[0]["labels"][0]["voxels"].get<long>(), 24);
  EXPECT_NEAR(w[0]["labels"][0]["volume_mL"].get<double>(), 0.024, 1e-12);
  EXPECT_EQ(w[0]["labels"][1]["label"].get<int>(), 9);
  EXPECT_EQ(w[0]["labels"][1]["voxels"].get<long>(), 5);
  EXPECT_EQ(r.report["warnings"].size(), 1u) << r.report["warnings"].dump(2);
  EXPECT_NE(log.str().find("labels 7 (24 voxels), 9 (5 voxels)"), std::string::npos) << log.str();
}

TEST_F(MeshWarnings, NoLongAxisWithoutABase) {
  // The cavity closed (no opening): the automatic base finds nothing.
  const auto closed = [](long i, long j, long k) {
    return k >= 14 && k <= 17 ? (block_heart(i, j, k) ? 1 : 0) : block_heart(i, j, k);
  };
  const auto r = mesh(closed);
  EXPECT_TRUE(r.report["long_axis"].is_null());
  EXPECT_NE(r.report["long_axis_reason"].get<std::string>().find("no cavity opening"), std::string::npos);
  EXPECT_NE(log.str().find("no long axis"), std::string::npos) << log.str();
  EXPECT_TRUE(mesh(block_heart, "  base: {mode: none}\n").report["long_axis"].is_null());
  // A base plane given: its normal is the axis, whether or not a face lies on it.
  const auto given = mesh(closed, "  base: {mode: plane, point: [0, 0, 17.5], normal: [0, 0, 1]}\n");
  ASSERT_TRUE(given.report["long_axis"].is_object());
  EXPECT_FALSE(given.report.contains("long_axis_reason"));
}

TEST_F(MeshWarnings, WarningsAreWrittenToMeshReportJson) {
  const auto r = mesh([](long i, long j, long k) { return i == 22 && j == 22 && k == 22 ? 3 : block_heart(i, j, k); });
  pipeline::write_mesh_outputs(dir, r, false);
  std::ifstream in(dir / "mesh_report.json");
  const json report = json::parse(in);
  ASSERT_EQ(report["warnings"].size(), 1u);
  EXPECT_EQ(report["warnings"][0]["kind"], "unmapped_labels");
  EXPECT_EQ(report["warnings"][0]["labels"][0]["voxels"].get<long>(), 1);
}

TEST_F(MeshWarnings, ACachedMeshLogsItsWarningsAgain) {
  unsetenv("CARDIO_NO_CACHE");
  write_labels([](long i, long j, long k) { return i == 22 && j == 22 && k == 22 ? 3 : block_heart(i, j, k); });
  std::ofstream(dir / "case.yaml") << image_yaml("");
  auto doc = config::Document::load_file(dir / "case.yaml");
  const pipeline::MeshConfig cfg = pipeline::parse_mesh_config(*doc);
  std::ostringstream first, second;
  pipeline::cached_mesh_stages(cfg, *doc, dir / "out", &first);
  const auto r = pipeline::cached_mesh_stages(cfg, *doc, dir / "out", &second);
  ASSERT_TRUE(r.report["mesh_cache"]["hit"].get<bool>()) << second.str();
  ASSERT_EQ(r.report["warnings"].size(), 1u);
  for (const std::string& log : {first.str(), second.str()})
    EXPECT_NE(log.find("warning: label 3 (1 voxels) of the source is in no role"), std::string::npos) << log;
}

}  // namespace
