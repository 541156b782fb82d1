// Issue 14's should-fix items through the cardiac command line: the output-size warning (stderr
// and run.log, the run goes on; a real run against its estimate), a probe outside the mesh (an
// error before the solve), and label images that ITK reads silently wrong (a NaN voxel, a NIfTI
// pixdim of 0): errors naming the file and the voxel or what was expected, with no mesh report.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace fs = std::filesystem;

namespace {

using namespace cardio::test_support;

const std::string kLv = std::string(CARDIO_SOURCE_DIR) + "/configs/lv_phantom.yaml";
const std::string kLand1 = std::string(CARDIO_SOURCE_DIR) + "/configs/benchmarks/land2015_problem1.yaml";

class InputsTest : public ::testing::Test {
 protected:
  CommandResult cardiac(const std::vector<std::string>& args) const {
    std::string cmd = "cd " + shell_quote(m_dir.string()) + " && " + shell_quote(CARDIAC_EXE);
    for (const auto& a : args) {
      cmd += ' ';  // not " " + ...: GCC 12 warns (-Wrestrict, PR 105329)
      cmd += shell_quote(a);
    }
    return run_command(cmd, m_dir);
  }
  TempDir m_tmp{"cardio_inputs_test_"};
  fs::path m_dir = m_tmp.path();
  fs::path m_out = m_dir / "out";
};

/// "about 7.48 MB" in `text` as bytes (-1 if absent).
double estimated_bytes(const std::string& text) {
  std::smatch m;
  if (!std::regex_search(text, m, std::regex("estimated at about ([0-9.]+) (kB|MB|GB)"))) return -1;
  return std::stod(m[1]) * (m[2] == "kB" ? 1e3 : m[2] == "MB" ? 1e6 : 1e9);
}

double directory_bytes(const fs::path& dir) {
  double total = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) total += double(e.file_size());
  return total;
}

std::size_t count(const std::string& haystack, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = haystack.find(needle); at != std::string::npos; at = haystack.find(needle, at + 1)) ++n;
  return n;
}

// One beat of the default LV at 2 mm, a frame every 20 ms: 51 frames, about 7 MB on disk.
TEST_F(InputsTest, ARunAboveTheSizeLimitWarnsOnceOnStderrAndInRunLogAndItsEstimateHolds) {
  const CommandResult r = cardiac({"run", kLv, "-o", m_out.string(), "--no-figures", "--set",
                                   "geometry.phantom.voxel_size=2 mm", "--set", "simulation.beats=1", "--set",
                                   "simulation.output_interval=20 ms", "--set", "output.max_size_warning=1 MB"});
  ASSERT_EQ(r.code, 0) << r.err;  // a warning: the run goes on
  const std::string warning = "cardiac: warning: the outputs of this run are estimated at about ";
  EXPECT_EQ(count(r.err, warning), 1u) << r.err;
  EXPECT_EQ(count(r.out, warning), 0u) << "printed twice (stdout too):\n" << r.out;
  for (const std::string& text : {r.err, slurp(m_out / "run.log")}) {
    EXPECT_HAS(text, warning);
    EXPECT_HAS(text, ": 51 frames of about ");
    EXPECT_HAS(text, "(simulation.output_interval = 20 ms over 1000 ms)");
    EXPECT_HAS(text, "more than output.max_size_warning = 1.00 MB; raise simulation.output_interval");
  }
  const auto summary = nlohmann::json::parse(slurp(m_out / "summary.json"));
  EXPECT_EQ(summary["frames"], 51);
  // The estimate against what the run wrote (the checkpoint it counts is removed at the end).
  const double estimate = estimated_bytes(slurp(m_out / "run.log")), actual = directory_bytes(m_out);
  EXPECT_GT(estimate, 0.8 * actual) << "estimate " << estimate << " B, wrote " << actual << " B";
  EXPECT_LT(estimate, 1.3 * actual) << "estimate " << estimate << " B, wrote " << actual << " B";
}

TEST_F(InputsTest, MeshWarnsOnlyAboveTheLimitAndNeverWithZero) {
  const std::vector<std::string> mesh{"mesh", kLv, "-o", m_out.string(), "--set", "geometry.phantom.voxel_size=2 mm"};
  CommandResult r = cardiac(mesh);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;  // about 0.3 MB against 4 GB
  EXPECT_HAS(slurp(m_out / "run.log"), "outputs: estimated at about ");
  auto with = [&](const std::string& limit) {
    std::vector<std::string> a = mesh;
    a.insert(a.end(), {"--set", "output.max_size_warning=" + limit});
    return a;
  };
  r = cardiac(with("10 kB"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_HAS(r.err, "(the mesh), more than output.max_size_warning = 10.0 kB; use a larger voxel or element size");
  EXPECT_TRUE(fs::exists(m_out / "mesh_report.json"));
  r = cardiac(with("0"));
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;
  r = cardiac(with("4 mm"));
  EXPECT_EQ(r.code, 2);
  EXPECT_HAS(r.err, "output.max_size_warning: expected a data size [GB], got '4 mm'");
}

TEST_F(InputsTest, AProbeFarOutsideTheMeshFailsBeforeTheSolveNamingItAndItsDistance) {
  const CommandResult r =
      cardiac({"run", kLand1, "-o", m_out.string(), "--set", "probes[0].point=[1000 mm, 0 mm, 0 mm]"});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_HAS(r.err,
             "probes[0].point: probe 'tip' at (1000, 0, 0) mm is outside the mesh, 990 mm from its nearest "
             "node (10, 0, 0) mm; expected a point in the myocardium or within one voxel diagonal "
             "(0.433013 mm)");
  EXPECT_FALSE(fs::exists(m_out / "summary.json"));
  EXPECT_EQ(slurp(m_out / "run.log").find("load step"), std::string::npos) << "solved before failing";
}

TEST_F(InputsTest, AProbeJustOutsideTheMeshReportsItsNearestNodeAndTheDistance) {
  const CommandResult r =
      cardiac({"run", kLand1, "-o", m_out.string(), "--set", "probes[0].point=[10.2 mm, 0.5 mm, 1 mm]"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto probe = nlohmann::json::parse(slurp(m_out / "summary.json"))["probes"][0];
  EXPECT_NEAR(probe["outside_mesh_mm"].get<double>(), 0.2, 1e-9);
  EXPECT_HAS(probe["method"].get<std::string>(), "nearest node");
  EXPECT_HAS(slurp(m_out / "run.log"), "probe tip: outside the mesh, 0.2 mm from its nearest node");
  // Inside: interpolated, no distance.
  const CommandResult in = cardiac({"run", kLand1, "-o", m_out.string()});
  ASSERT_EQ(in.code, 0) << in.err;
  const auto inside = nlohmann::json::parse(slurp(m_out / "summary.json"))["probes"][0];
  EXPECT_FALSE(inside.contains("outside_mesh_mm"));
  EXPECT_HAS(inside["method"].get<std::string>(), "trilinear in element");
}

TEST_F(InputsTest, ProbesInABeatAreRefusedNotIgnored) {
  const CommandResult r = cardiac({"validate", kLv, "--set", "probes=[{name: apex, point: [0 mm, 0 mm, -20 mm]}]"});
  EXPECT_EQ(r.code, 2);
  EXPECT_HAS(r.err, "probes: does not apply here: used with simulation.mode: quasi_static only");
}

/// A float32 NIfTI-1 label image of 4 x 3 x 2 voxels (all 1), written byte by byte.
void write_nifti(const fs::path& file, std::array<float, 3> pixdim, const std::vector<std::size_t>& nan_voxels = {}) {
  std::vector<char> h(352, 0);
  auto put = [&](std::size_t at, auto v) { std::memcpy(h.data() + at, &v, sizeof v); };
  put(0, std::int32_t{348});
  const std::array<std::int16_t, 4> dim{3, 4, 3, 2};
  for (std::size_t d = 0; d < 4; ++d) put(40 + 2 * d, dim[d]);
  put(70, std::int16_t{16});  // float32
  put(72, std::int16_t{32});
  for (std::size_t a = 0; a < 3; ++a) put(80 + 4 * a, pixdim[a]);
  put(108, 352.0f);
  std::memcpy(h.data() + 344, "n+1", 4);
  std::vector<float> values(24, 1.0f);
  for (std::size_t v : nan_voxels) values[v] = std::numeric_limits<float>::quiet_NaN();
  std::ofstream out(file, std::ios::binary);
  out.write(h.data(), std::streamsize(h.size()));
  out.write(reinterpret_cast<const char*>(values.data()), std::streamsize(values.size() * sizeof(float)));
}

TEST_F(InputsTest, ANiftiWithPixdimZeroIsRefusedByValidateAndMeshNamingTheFile) {
  write_nifti(m_dir / "flat.nii", {1.0f, 0.0f, 1.0f});
  std::ofstream(m_dir / "heart.yaml") << "geometry: {source: image, labels: flat.nii, roles: {myocardium: [1]}}\n";
  const std::string expected =
      "flat.nii': its NIfTI header has pixdim[1..3] = (1, 0, 1) (qform_code 0, sform_code 0)"
      ": the voxel size is unknown";
  CommandResult r = cardiac({"validate", "heart.yaml"});
  EXPECT_EQ(r.code, 2);
  EXPECT_HAS(r.err, expected);
  r = cardiac({"mesh", "heart.yaml", "-o", "out"});
  EXPECT_EQ(r.code, 2) << "an invalid input exits 2 from every command";
  EXPECT_HAS(r.err, expected);
  EXPECT_FALSE(fs::exists(m_out / "mesh_report.json"));
  EXPECT_FALSE(fs::exists(m_out / "mesh.vtu"));
}

TEST_F(InputsTest, ANaNLabelFailsTheMeshNamingTheFileAndTheVoxel) {
  write_nifti(m_dir / "nan.nii", {1.0f, 1.0f, 1.0f}, {1 + 4 * (2 + 3 * 1)});  // voxel (1, 2, 1)
  std::ofstream(m_dir / "heart.yaml") << "geometry: {source: image, labels: nan.nii, roles: {myocardium: [1]}}\n";
  const CommandResult r = cardiac({"mesh", "heart.yaml", "-o", "out"});
  EXPECT_EQ(r.code, 2) << "an invalid input exits 2 from every command";
  EXPECT_HAS(r.err, "nan.nii' has a NaN (not a number) at voxel (1, 2, 1); labels must be integers");
  EXPECT_FALSE(fs::exists(m_out / "mesh_report.json"));
  EXPECT_FALSE(fs::exists(m_out / "mesh.vtu"));
}

}  // namespace
