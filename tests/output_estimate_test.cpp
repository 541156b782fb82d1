// The output-size estimate of a heart run (issue 14, should-fix: a frame every step wrote 1.2 GB for
// 152 ms): frames from simulation.output_interval over the run, bytes from the mesh's counts, the
// warning above output.max_size_warning (units in the value, 0 = never) naming both keys. A real
// run against the estimate is in tests/cli/inputs_test.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "cardio/config/config.hpp"
#include "cardio/core/error.hpp"
#include "config/heart_config.hpp"
#include "heart/output_estimate.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
using namespace cardio;

namespace {

const fs::path kLvPhantom = fs::path(CARDIO_SOURCE_DIR) / "configs" / "lv_phantom.yaml";
const fs::path kLandProblem1 = fs::path(CARDIO_SOURCE_DIR) / "configs" / "benchmarks" / "land2015_problem1.yaml";

/// A config with `overrides` applied, parsed.
pipeline::HeartConfig parse(const fs::path& file, const std::vector<std::string>& overrides = {}) {
  auto doc = config::Document::load_file(file);
  for (const auto& o : overrides) doc->set_override(o);
  return pipeline::parse_heart_config(*doc);
}

/// A mesh with the given counts only (the estimate reads nothing else).
meshing::VoxelMesh mesh_of(Eigen::Index nodes, std::size_t elements) {
  meshing::VoxelMesh m;
  m.mesh.rest = Eigen::Matrix3Xd::Zero(3, nodes);
  m.mesh.hexes.resize(elements);
  m.labels_used = {1};
  return m;
}

TEST(OutputEstimate, FramesComeFromTheIntervalOverTheWholeRun) {
  const auto cfg = parse(kLvPhantom, {"simulation.output_interval=10 ms", "simulation.beats=2"});
  const double t_end = cfg.simulation->first_onset + 2 * cfg.simulation->period;
  const pipeline::OutputEstimate e = pipeline::estimate_output_size(cfg, true, mesh_of(4908, 3196));
  EXPECT_EQ(e.frames, std::ceil(t_end / 10) + 1);  // 0, 10, ... before t_end, and t_end itself
  EXPECT_EQ(e.frame_bytes, 4908 * pipeline::kFrameBytesPerNode + 3196 * pipeline::kFrameBytesPerElement);
  EXPECT_EQ(e.mesh_bytes, 4908 * pipeline::kMeshOutputBytesPerNode + 3196 * pipeline::kMeshOutputBytesPerElement);
  EXPECT_GT(e.other_bytes, e.frame_bytes);  // final.vtu, the tables, the checkpoint
  EXPECT_DOUBLE_EQ(e.bytes(), e.frames * e.frame_bytes + e.mesh_bytes + e.other_bytes);
  std::ostringstream key;
  key << "simulation.output_interval = 10 ms over " << t_end << " ms";
  EXPECT_EQ(e.frames_key, key.str());
  // A tenth of the interval: ten times the frames, and the frames dominate.
  const auto fine = parse(kLvPhantom, {"simulation.output_interval=1 ms", "simulation.beats=2"});
  const pipeline::OutputEstimate f = pipeline::estimate_output_size(fine, true, mesh_of(4908, 3196));
  EXPECT_EQ(f.frames, std::ceil(t_end) + 1);
  EXPECT_GT(f.bytes(), 8 * e.bytes());
}

TEST(OutputEstimate, AboveTheLimitTheWarningNamesTheEstimateTheLimitAndTheKeys) {
  // The default case at 0.5 mm (about 26 000 elements) with a frame every 0.05 ms: some 20 GB.
  const auto cfg = parse(kLvPhantom, {"simulation.output_interval=0.05 ms"});
  const pipeline::OutputEstimate e = pipeline::estimate_output_size(cfg, true, mesh_of(33000, 26000));
  EXPECT_GT(e.bytes(), 10e9);
  const std::string w = pipeline::output_size_warning(e, cfg);
  EXPECT_EQ(w.rfind("cardiac: warning: the outputs of this run are estimated at about ", 0), 0u) << w;
  EXPECT_HAS(w, std::to_string(static_cast<long long>(e.frames)) + " frames of about");
  EXPECT_HAS(w, "simulation.output_interval = 0.05 ms over 1800 ms");
  EXPECT_HAS(w, "more than output.max_size_warning = 4.00 GB");
  EXPECT_HAS(w, "raise simulation.output_interval");
  EXPECT_EQ(w.back(), '\n');
  // Within the limit, and with the limit off: nothing.
  EXPECT_EQ(pipeline::output_size_warning(e, parse(kLvPhantom, {"output.max_size_warning=1 TB"})), "");
  EXPECT_EQ(pipeline::output_size_warning(e, parse(kLvPhantom, {"output.max_size_warning=0"})), "");
  const auto every_10_ms = parse(kLvPhantom);
  EXPECT_EQ(
      pipeline::output_size_warning(pipeline::estimate_output_size(every_10_ms, true, mesh_of(886, 460)), every_10_ms),
      "");
}

TEST(OutputEstimate, MeshOnlyAndQuasiStaticRunsHaveNoFrames) {
  const auto beat = parse(kLvPhantom, {"output.max_size_warning=100 kB"});
  const pipeline::OutputEstimate mesh_only = pipeline::estimate_output_size(beat, false, mesh_of(4908, 3196));
  EXPECT_EQ(mesh_only.frames, 0);
  EXPECT_EQ(mesh_only.bytes(), mesh_only.mesh_bytes);
  const std::string w = pipeline::output_size_warning(mesh_only, beat);
  EXPECT_HAS(w, "estimated at about 2.20 MB (the mesh), more than");
  EXPECT_HAS(w, "output.max_size_warning = 0.10 MB");
  EXPECT_HAS(w, "use a larger voxel or element size");
  const pipeline::OutputEstimate qs = pipeline::estimate_output_size(parse(kLandProblem1), true, mesh_of(1025, 640));
  EXPECT_EQ(qs.frames, 0);
  EXPECT_EQ(qs.other_bytes, 1025 * pipeline::kFinalBytesPerNode + 640 * pipeline::kFinalBytesPerElement);  // final.vtu
}

TEST(OutputEstimate, TheLimitIsADataSizeWithUnits) {
  EXPECT_EQ(parse(kLvPhantom).mesh.max_output_bytes, 4e9);  // the default
  EXPECT_EQ(parse(kLvPhantom, {"output.max_size_warning=500 MB"}).mesh.max_output_bytes, 5e8);
  EXPECT_DOUBLE_EQ(parse(kLvPhantom, {"output.max_size_warning=2 GiB"}).mesh.max_output_bytes, 2147483648.0);
  EXPECT_EQ(parse(kLvPhantom, {"output.max_size_warning=3"}).mesh.max_output_bytes, 3e9);  // bare: GB
  for (const char* bad : {"output.max_size_warning=4 mm", "output.max_size_warning=-1 GB"}) {
    try {
      (void)parse(kLvPhantom, {bad});
      ADD_FAILURE() << bad << " accepted";
    } catch (const Error& e) {
      EXPECT_HAS(e.what(), "output.max_size_warning");
    }
  }
}

TEST(OutputEstimate, TheWarningGoesToTheLogAndToStderrOnce) {
  const auto cfg = parse(kLvPhantom, {"output.max_size_warning=1 MB"});
  std::ostringstream log, err;
  const pipeline::OutputEstimate e = pipeline::warn_about_output_size(cfg, true, mesh_of(4908, 3196), log, err);
  const std::string warning = pipeline::output_size_warning(e, cfg);
  ASSERT_FALSE(warning.empty());
  EXPECT_EQ(err.str(), warning);
  EXPECT_EQ(log.str(), "outputs: estimated at " + e.describe() + "\n" + warning);
  std::ostringstream quiet_log, quiet_err;
  (void)pipeline::warn_about_output_size(parse(kLvPhantom), true, mesh_of(886, 460), quiet_log, quiet_err);
  EXPECT_EQ(quiet_err.str(), "");
  EXPECT_HAS(quiet_log.str(), "outputs: estimated at about");
}

}  // namespace
