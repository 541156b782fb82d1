// The cardiac command line: exit codes, outputs, and the error messages of bad configs.
// Exit codes (pipeline/main.cpp): 0 success, 1 the run failed, 2 bad usage or invalid config.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "cardio/core/parallel.hpp"
#include "test_support.hpp"

#ifndef CARDIAC_EXE
#error "CARDIAC_EXE (path of the cardiac executable) must be defined"
#endif

namespace fs = std::filesystem;

namespace {

using namespace cardio::test_support;
using Result = CommandResult;

// A small valid config (elongation of a 2x2x2 block) with known line numbers.
const char* kTiny =
    "name: tiny\n"                //  1
    "experiment:\n"               //  2
    "  type: elongation\n"        //  3
    "  strain: 0.01\n"            //  4
    "block:\n"                    //  5
    "  voxels: [2, 2, 2]\n"       //  6
    "  voxel_size: 1 mm\n"        //  7
    "material:\n"                 //  8
    "  model: isotropic\n"        //  9
    "  youngs_modulus: 10 kPa\n"  // 10
    "  poisson_ratio: 0.3\n"      // 11
    "  density: 1.06 mg/mm^3\n"   // 12
    "solver:\n"                   // 13
    "  residual_tol: 1e-6\n";     // 14

// kTiny with the line `from` replaced by `to` (`to` may hold several lines or be empty).
std::string tiny_with(const std::string& from, const std::string& to) {
  std::string s = kTiny;
  const auto at = s.find(from + "\n");
  if (at == std::string::npos) {
    ADD_FAILURE() << "line '" << from << "' not in the tiny config";
    return s;
  }
  s.replace(at, from.size() + 1, to.empty() ? std::string() : to + "\n");
  return s;
}

class CliTest : public ::testing::Test {
 protected:
  // Run cardiac with `args` in the test directory.
  Result cardiac(const std::vector<std::string>& args) const {
    std::string cmd = "cd " + shell_quote(m_dir.string()) + " && " + shell_quote(CARDIAC_EXE);
    for (const auto& a : args) {
      cmd += ' ';
      cmd += shell_quote(a);
    }
    return run_command(cmd, m_dir);
  }

  fs::path write(const std::string& name, const std::string& content) const {
    const fs::path p = m_dir / name;
    std::ofstream(p) << content;
    return p;
  }

  // Write `yaml` to cfg.yaml and `cardiac run` it into OUTDIR = out.
  Result run_config(const std::string& yaml, std::vector<std::string> extra = {}) const {
    write("cfg.yaml", yaml);
    std::vector<std::string> args{"run", "cfg.yaml", "-o", "out"};
    args.insert(args.end(), extra.begin(), extra.end());
    return cardiac(args);
  }

  fs::path out() const { return m_dir / "out"; }

  void expect_no_results() const {
    EXPECT_FALSE(fs::exists(out() / "summary.json")) << "a failed run must not leave summary.json";
    EXPECT_FALSE(fs::exists(out() / "final.vtu")) << "a failed run must not leave final.vtu";
  }

  // A config error: exit 2, one message naming the file location and the key, nothing computed.
  void expect_config_error(const Result& r, const std::string& location,
                           const std::vector<std::string>& needles) const {
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_HAS(r.err, "cardiac: invalid config: ");
    EXPECT_HAS(r.err, location);
    for (const auto& n : needles) EXPECT_HAS(r.err, n);
    expect_no_results();
    EXPECT_FALSE(fs::exists(out())) << "an invalid config must not create OUTDIR";
  }

  TempDir m_tmp{"cardio_cli_test_"};
  fs::path m_dir = m_tmp.path();
};

TEST_F(CliTest, HelpListsCommands) {
  const Result r = cardiac({"--help"});
  EXPECT_EQ(r.code, 0);
  EXPECT_HAS(r.out, "Usage:");
  EXPECT_HAS(r.out, "cardiac run CONFIG.yaml");
  EXPECT_HAS(r.out, "cardiac bench");
  EXPECT_HAS(r.out, "cardiac validate");
  EXPECT_TRUE(r.err.empty()) << r.err;
  EXPECT_EQ(cardiac({"-h"}).code, 0);
}

TEST_F(CliTest, BenchTimesEveryElementTypeAndRejectsAnUnknownOne) {
  const fs::path json = m_dir / "bench.json";
  const Result r = cardiac({"bench", "--sizes", "27", "--threads", "1", "--seconds", "0.01", "--json", json.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json doc = nlohmann::json::parse(slurp(json));
  std::vector<std::string> seen;
  for (const auto& row : doc["results"]) {
    seen.push_back(row["element"].get<std::string>());
    EXPECT_EQ(row["elements"].get<long>(), 27);
    EXPECT_EQ(row["threads"].get<int>(), 1);
    EXPECT_GT(row["element_updates_per_second"].get<double>(), 0);
    EXPECT_TRUE(row.contains("bytes_per_element"));
    EXPECT_EQ(row["heart_default"].get<bool>(), row["element"] == "heart");
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"heart", "sampled_axes", "one_point", "bourguignon_cani", "baudet"}));
  // --element heart: the element hearts use by default (material.element defaults to sampled_axes),
  // with the law as a beat runs it.
  const Result heart = cardiac(
      {"bench", "--element", "heart", "--sizes", "27", "--threads", "1", "--seconds", "0.01", "--json", json.string()});
  ASSERT_EQ(heart.code, 0) << heart.err;
  const nlohmann::json one = nlohmann::json::parse(slurp(json));
  ASSERT_EQ(one["results"].size(), 1u);
  EXPECT_EQ(one["results"][0]["element"], "heart");
  EXPECT_TRUE(one["results"][0]["heart_default"].get<bool>());
  const Result bad = cardiac({"bench", "--element", "heart,tetrahedra"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_HAS(bad.err, "'tetrahedra'");
}

TEST_F(CliTest, Version) {
  const Result r = cardiac({"--version"});
  EXPECT_EQ(r.code, 0);
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(^cardiac \d+\.\d+\.\d+)"))) << r.out;
}

TEST_F(CliTest, UsageErrorsExit2) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{},
                                             {"frobnicate"},
                                             {"run"},
                                             {"run", "a.yaml", "b.yaml"},
                                             {"run", "a.yaml", "--bogus"},
                                             {"run", "a.yaml", "-o"},
                                             {"run", "a.yaml", "--threads", "abc"},
                                             {"run", "a.yaml", "--threads", "1,2"},
                                             {"run", "a.yaml", "--threads", "100000"},
                                             {"run", "a.yaml", "--threads", "0"},
                                             {"bench", "--threads", "1,100000"}}) {
    std::string joined;
    for (const auto& a : args) joined += a + " ";
    const Result r = cardiac(args);
    EXPECT_EQ(r.code, 2) << "cardiac " << joined << "\n" << r.err;
    EXPECT_HAS(r.err, "cardiac: ");
    EXPECT_HAS(r.err, "--help");
  }
}

TEST_F(CliTest, MissingConfigFileExit2) {
  const Result r = cardiac({"run", "no_such.yaml", "-o", "out"});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_HAS(r.err, "no_such.yaml: cannot open config file");
  EXPECT_FALSE(fs::exists(out()));
}

TEST_F(CliTest, GoodTinyRun) {
  const std::string config = std::string(CARDIO_SOURCE_DIR) + "/configs/experiments/elongation.yaml";
  const Result r = cardiac({"run", config, "--set", "block.voxels=[2,2,2]", "-o", "out"});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;
  ASSERT_TRUE(fs::exists(out() / "config.resolved.yaml"));
  ASSERT_TRUE(fs::exists(out() / "summary.json"));
  ASSERT_TRUE(fs::exists(out() / "final.vtu"));
  for (const auto& e : fs::directory_iterator(out()))
    EXPECT_NE(e.path().filename().string()[0], '.') << "temp file left: " << e.path();

  const std::string resolved = slurp(out() / "config.resolved.yaml");
  EXPECT_HAS(resolved, "voxels: [2, 2, 2]");  // the override
  EXPECT_HAS(resolved, "max_iterations:");    // a default filled in
  EXPECT_HAS(resolved, "youngs_modulus: 10 kPa");

  const nlohmann::json s = nlohmann::json::parse(slurp(out() / "summary.json"));
  EXPECT_EQ(s["name"], "elongation");
  EXPECT_EQ(s["experiment"], "elongation");
  EXPECT_EQ(s["run"]["elements"], 8);
  EXPECT_EQ(s["run"]["nodes"], 27);
  const double E = s["measured"]["youngs_modulus_kPa"].get<double>();
  const double E_expected = s["measured"]["expected"]["youngs_modulus_kPa"].get<double>();
  EXPECT_NEAR(E, E_expected, 0.05 * E_expected);
  EXPECT_NEAR(E_expected, 10.0, 1e-9);

  const std::string vtu = slurp(out() / "final.vtu");
  EXPECT_HAS(vtu.substr(0, 400), "<VTKFile type=\"UnstructuredGrid\"");
  EXPECT_HAS(vtu, "Name=\"displacement\"");
  EXPECT_HAS(r.out, "wrote");

  // The resolved config is itself a valid config.
  const Result v = cardiac({"validate", "out/config.resolved.yaml"});
  EXPECT_EQ(v.code, 0) << v.err;
  EXPECT_HAS(v.out, "valid");
}

TEST_F(CliTest, TinyConfigRunsAndValidates) {
  write("cfg.yaml", kTiny);
  const Result v = cardiac({"validate", "cfg.yaml"});
  EXPECT_EQ(v.code, 0) << v.err;
  const Result r = run_config(kTiny, {"--threads", "1"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(fs::exists(out() / "summary.json"));
}

TEST_F(CliTest, ValidateReportsConfigErrorsWithExit2) {
  write("cfg.yaml", tiny_with("  poisson_ratio: 0.3", "  poisson_ratio: 0.7"));
  const Result r = cardiac({"validate", "cfg.yaml"});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_HAS(r.err, "cfg.yaml:11:18: material.poisson_ratio");
}

TEST_F(CliTest, UnknownKeySuggestsSpelling) {
  const Result r = run_config(tiny_with("  density: 1.06 mg/mm^3", "  densty: 1.06 mg/mm^3"));
  expect_config_error(r, "cfg.yaml:12:3", {"unknown key 'material.densty'", "did you mean 'density'?"});
}

TEST_F(CliTest, MisspeltRequiredKeySuggestsSpelling) {
  const Result r = run_config(tiny_with("  youngs_modulus: 10 kPa", "  youngs_modulos: 10 kPa"));
  expect_config_error(
      r, "cfg.yaml:",
      {"material.youngs_modulus: required key is missing", "'youngs_modulos'", "did you mean 'youngs_modulus'?"});
}

TEST_F(CliTest, UnknownSectionSuggestsSpelling) {
  const Result r = run_config(std::string(kTiny) + "solvr:\n  dt: 1 ms\n");
  expect_config_error(r, "cfg.yaml:15:1", {"unknown key 'solvr'", "did you mean 'solver'?"});
}

TEST_F(CliTest, WrongType) {
  const Result r = run_config(tiny_with("  youngs_modulus: 10 kPa", "  youngs_modulus: abc"));
  expect_config_error(r, "cfg.yaml:10:19", {"material.youngs_modulus", "expected a pressure", "'abc'"});
}

TEST_F(CliTest, WrongUnitDimension) {
  const Result r = run_config(tiny_with("  youngs_modulus: 10 kPa", "  youngs_modulus: 10 mm"));
  expect_config_error(r, "cfg.yaml:10:19", {"material.youngs_modulus", "length", "pressure"});
}

TEST_F(CliTest, NegativeModulus) {
  const Result r = run_config(tiny_with("  youngs_modulus: 10 kPa", "  youngs_modulus: -5 kPa"));
  expect_config_error(r, "cfg.yaml:10:19", {"material.youngs_modulus", "out of range", "(0, inf) kPa"});
}

TEST_F(CliTest, ZeroModulus) {
  const Result r = run_config(tiny_with("  youngs_modulus: 10 kPa", "  youngs_modulus: 0 kPa"));
  expect_config_error(r, "cfg.yaml:10:19", {"material.youngs_modulus", "value 0 kPa is out of range", "(0, inf) kPa"});
}

TEST_F(CliTest, PoissonRatioOneHalf) {
  const Result r = run_config(tiny_with("  poisson_ratio: 0.3", "  poisson_ratio: 0.5"));
  expect_config_error(r, "cfg.yaml:11:18", {"material.poisson_ratio", "value 0.5 is out of range", "(-1, 0.5)"});
}

TEST_F(CliTest, PoissonRatioMinusOne) {
  const Result r = run_config(tiny_with("  poisson_ratio: 0.3", "  poisson_ratio: -1"));
  expect_config_error(r, "cfg.yaml:11:18", {"material.poisson_ratio", "value -1 is out of range", "(-1, 0.5)"});
}

TEST_F(CliTest, MissingRequiredKey) {
  const Result r = run_config(tiny_with("  youngs_modulus: 10 kPa", ""));
  // Located at the material section (its first key, line 9).
  expect_config_error(r, "cfg.yaml:9:3", {"material.youngs_modulus: required key is missing", "pressure"});
}

TEST_F(CliTest, MissingRequiredSection) {
  const Result r = run_config(tiny_with("block:\n  voxels: [2, 2, 2]\n  voxel_size: 1 mm", ""));
  expect_config_error(r, "cfg.yaml", {"block: required section is missing"});
}

TEST_F(CliTest, YamlSyntaxError) {
  const Result r = run_config(tiny_with("  voxels: [2, 2, 2]", "  voxels: [2, 2, 2"));
  expect_config_error(r, "cfg.yaml:", {"YAML syntax error"});
}

TEST_F(CliTest, BadOverrideNamesTheOverride) {
  const Result r = run_config(kTiny, {"--set", "block.voxels=[0,2,2]"});
  expect_config_error(r, "--set 'block.voxels=[0,2,2]'", {"block.voxels: component 0 = 0 is out of range"});
  const Result r2 = run_config(kTiny, {"--set", "material.poisson_ratio"});
  EXPECT_EQ(r2.code, 2) << r2.err;
  EXPECT_HAS(r2.err, "expected KEY.PATH=VALUE");
}

TEST_F(CliTest, TimeStepAboveStabilityEstimateFailsTheRun) {
  // A stale result from an earlier run must not survive a failed re-run.
  fs::create_directories(out());
  std::ofstream(out() / "summary.json") << "{}";
  std::ofstream(out() / "final.vtu") << "stale";
  const Result r = run_config(tiny_with("  residual_tol: 1e-6", "  residual_tol: 1e-6\n  dt: 10 ms"));
  // Reported as a run failure (exit 1, pipeline/main.cpp), located at the key.
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_HAS(r.err, "cardiac: run failed: ");
  EXPECT_HAS(r.err, "cfg.yaml:15:7: solver.dt: 10 ms is above the stability estimate");
  EXPECT_HAS(r.err, "solver.force_dt");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.err, m, std::regex(R"(stability estimate ([0-9.eE+-]+) ms)"))) << r.err;
  const double estimate = std::stod(m[1]);
  EXPECT_GT(estimate, 0.0);
  EXPECT_LT(estimate, 10.0);
  expect_no_results();
}

TEST_F(CliTest, TimeStepFromOverrideNamesTheOverride) {
  const Result r = run_config(kTiny, {"--set", "solver.dt=10 ms"});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_HAS(r.err, "--set 'solver.dt=10 ms': solver.dt: 10 ms is above the stability estimate");
  expect_no_results();
}

TEST_F(CliTest, ForceDtRunsAnywayAndStopsOnInstability) {
  const Result r = run_config(
      tiny_with("  residual_tol: 1e-6", "  residual_tol: 1e-6\n  dt: 10 ms\n  force_dt: true\n  max_iterations: 30"));
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_EQ(r.err.find("above the stability estimate"), std::string::npos) << "force_dt must skip the check:\n"
                                                                           << r.err;
  EXPECT_HAS(r.out, "using 10 ms");  // the forced step was used
  if (r.err.find("unstable") != std::string::npos) {
    // Blew up: the message names the step and the node (and an element containing it).
    EXPECT_TRUE(std::regex_search(r.err, std::regex(R"(at step \d+)"))) << r.err;
    EXPECT_TRUE(std::regex_search(r.err, std::regex(R"(node \d+)"))) << r.err;
    EXPECT_TRUE(std::regex_search(r.err, std::regex(R"(element \d+)"))) << r.err;
  } else {
    EXPECT_HAS(r.err, "did not converge");
  }
  expect_no_results();
  EXPECT_TRUE(fs::exists(out() / "run.log"));
  EXPECT_HAS(slurp(out() / "run.log"), "run failed");
}

TEST_F(CliTest, UnconvergedRunFailsWithExit1) {
  const Result r = run_config(tiny_with("  residual_tol: 1e-6", "  residual_tol: 1e-12\n  max_iterations: 5"));
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_HAS(r.err, "did not converge");
  EXPECT_HAS(r.err, "solver.max_iterations");
  expect_no_results();
}

TEST_F(CliTest, InvertedElementFailsTheQuasiStaticRun) {
  // Land problem 3 with a tenfold active tension crushes the wall: exit 1, the element, its J and
  // the load step named, no summary (a non-physical end state is a failure, not a result). The
  // one-point element on the staircase inverts here; the sampled-axes (F-bar) element cannot end in
  // an inverted state (its energy diverges as a sample collapses) and reaches a crushed but valid one.
  const std::string config = std::string(CARDIO_SOURCE_DIR) + "/configs/benchmarks/land2015_problem3.yaml";
  const Result r = cardiac({"run", config, "-o", out().string(), "--threads", "1", "--set", "active.tension=1000 kPa",
                            "--set", "simulation.load_steps=2", "--set", "material.element=one_point", "--set",
                            "geometry.boundary_fit=staircase", "--set", "simulation.initial_guess=rest"});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_HAS(r.err, "is inverted: det F = -");
  EXPECT_HAS(r.err, "load step 1/2");
  EXPECT_HAS(r.err, "Likely cause");
  expect_no_results();
}

}  // namespace

// --- heart configs: cardiac phantom, mesh, validate (issue 3) ---

TEST_F(CliTest, PhantomThenMeshFromTheWrittenImages) {
  Result r = cardiac({"phantom", "lv", "-o", "ph", "--voxel-size", "2", "--rotate", "1,1,0,30"});
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* f : {"labels.nii.gz", "fibre.nii.gz", "sheet.nii.gz"})
    EXPECT_TRUE(fs::exists(m_dir / "ph" / f)) << f;
  write("heart.yaml",
        "name: from_images\n"
        "geometry:\n"
        "  source: image\n"
        "  labels: ph/labels.nii.gz\n"
        "  roles: {myocardium: [1], cavities: [{name: lv, labels: [2]}]}\n"
        "fibres: {source: vectors, fibre: ph/fibre.nii.gz, sheet: ph/sheet.nii.gz}\n");
  r = cardiac({"validate", "heart.yaml"});
  EXPECT_EQ(r.code, 0) << r.err;
  r = cardiac({"mesh", "heart.yaml", "-o", "out"});
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* f :
       {"config.resolved.yaml", "run.log", "mesh.vtu", "surfaces.vtp", "cavity_lv.vtp", "mesh_report.json"})
    EXPECT_TRUE(fs::exists(out() / f)) << f;
  const auto report = nlohmann::json::parse(slurp(out() / "mesh_report.json"));
  EXPECT_GT(report["element_count"].get<long>(), 100);
  EXPECT_EQ(report["fibre_source"], "vectors");
}

TEST_F(CliTest, MeshOfAMissingImageFailsWithoutAReport) {
  write("heart.yaml", "geometry: {source: image, labels: missing.nii.gz, roles: {myocardium: [1]}}\n");
  Result r = cardiac({"validate", "heart.yaml"});
  EXPECT_EQ(r.code, 2);
  EXPECT_HAS(r.err, "missing.nii.gz");
  // Invalid input: exit 2 from every command (issue 14), before OUTDIR is created.
  for (const char* command : {"mesh", "run"}) {
    r = cardiac({command, "heart.yaml", "-o", "out"});
    EXPECT_EQ(r.code, 2) << command;
    EXPECT_HAS(r.err, "cardiac: invalid input: heart.yaml:1:");
    EXPECT_HAS(r.err, "geometry.labels: missing.nii.gz: input file does not exist");
    EXPECT_FALSE(fs::exists(out())) << command;
  }
}

TEST_F(CliTest, MeshRejectsANotImageAndATwoDimensionalImage) {
  write("text.nii", "this is not an image\n");
  write("heart.yaml", "geometry: {source: image, labels: text.nii, roles: {myocardium: [1]}}\n");
  Result r = cardiac({"mesh", "heart.yaml", "-o", "out"});
  EXPECT_EQ(r.code, 2);
  EXPECT_HAS(r.err, "text.nii");
  EXPECT_FALSE(fs::exists(out() / "mesh_report.json"));
  // A 2-D image (a hand-written NRRD: 4 x 4 shorts).
  write("flat.nrrd",
        "NRRD0004\ntype: short\ndimension: 2\nsizes: 4 4\nencoding: raw\nendian: little\n\n" + std::string(32, '\1'));
  write("flat.yaml", "geometry: {source: image, labels: flat.nrrd, roles: {myocardium: [1]}}\n");
  r = cardiac({"mesh", "flat.yaml", "-o", "out"});
  EXPECT_EQ(r.code, 2);
  EXPECT_HAS(r.err, "flat.nrrd");
  EXPECT_HAS(r.err, "2-D");
  EXPECT_FALSE(fs::exists(out() / "mesh_report.json"));
}

TEST_F(CliTest, HeartConfigErrorsNameTheKey) {
  write("heart.yaml", "geometry:\n  source: phantom\n  phantom: {voxel_sise: 1 mm}\n");
  Result r = cardiac({"mesh", "heart.yaml", "-o", "out"});
  EXPECT_EQ(r.code, 2);
  EXPECT_HAS(r.err, "heart.yaml:3");
  EXPECT_HAS(r.err, "voxel_size");  // did you mean
  EXPECT_FALSE(fs::exists(out()));
  write("heart2.yaml", "geometry: {source: image, labels: x.nii}\n");
  r = cardiac({"validate", "heart2.yaml"});
  EXPECT_EQ(r.code, 2);
  EXPECT_HAS(r.err, "roles");
}

TEST_F(CliTest, PhantomUsageErrors) {
  EXPECT_EQ(cardiac({"phantom", "rv", "-o", "x"}).code, 2);
  EXPECT_EQ(cardiac({"phantom", "lv"}).code, 2);
  EXPECT_EQ(cardiac({"phantom", "lv", "-o", "x", "--rotate", "0,0,0,30"}).code, 2);
  EXPECT_EQ(cardiac({"phantom", "lv", "-o", "x", "--format", "jpg"}).code, 2);
  // Slices store no direction matrix: a rotated phantom cannot be written as one.
  const auto rotated = cardiac({"phantom", "lv", "-o", "y", "--format", "tif", "--rotate", "1,0,0,30"});
  EXPECT_NE(rotated.code, 0);
  EXPECT_HAS(rotated.err, "direction matrix");
}

// --- memory (issue 14, item 5): estimated from the config before anything large is allocated ---

// `cardiac args` under `ulimit -v kb` (address space in kB: allocations beyond it fail with
// std::bad_alloc, and the memory guard counts it), and how long it took [s].
static std::pair<Result, double> cardiac_limited(const fs::path& dir, long kb, const std::vector<std::string>& args) {
  // Appended piece by piece: GCC 12 warns falsely (-Wrestrict) on chains of string +.
  std::string inner = "ulimit -v ";
  inner += std::to_string(kb);
  inner += " && exec ";
  inner += shell_quote(CARDIAC_EXE);
  for (const auto& a : args) {
    inner += ' ';
    inner += shell_quote(a);
  }
  std::string cmd = "cd ";
  cmd += shell_quote(dir.string());
  cmd += " && sh -c ";
  cmd += shell_quote(inner);
  const auto t0 = std::chrono::steady_clock::now();
  Result r = run_command(cmd, dir);
  return {r, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()};
}

TEST_F(CliTest, TinyBoxVoxelIsRefusedAtOnceNamingTheKey) {
  // It passed validate, then died in meshing with "cannot create std::vector larger than max_size()".
  write("box.yaml",
        "geometry:\n"                      // 1
        "  source: box\n"                  // 2
        "  box:\n"                         // 3
        "    size: [10 mm, 1 mm, 1 mm]\n"  // 4
        "    voxel_size: 1e-6 mm\n");      // 5
  for (const char* command : {"validate", "run", "mesh"}) {
    const auto t0 = std::chrono::steady_clock::now();
    const Result r = std::string(command) == "validate" ? cardiac({command, "box.yaml"})
                                                        : cardiac({command, "box.yaml", "-o", "out"});
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 2.0) << command;
    EXPECT_EQ(r.code, 2) << command << ": " << r.err;
    EXPECT_HAS(r.err, "box.yaml:5");
    EXPECT_HAS(r.err, "geometry.box.voxel_size: 1e-06 mm gives a grid of 10000000 x 1000000 x 1000000 voxels");
    EXPECT_HAS(r.err, "GB of memory to mesh, more than the ");
    EXPECT_HAS(r.err, " available");
    EXPECT_EQ(r.err.find("max_size"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(out())) << command << ": a refused config must not create OUTDIR";
  }
}

TEST_F(CliTest, FinePhantomIsRefusedBeforeItIsBuilt) {
  // 0.0500001 mm is inside the documented range: the phantom alone is 2.26 GB (33 s to build)
  // before the old guard fired, and under ulimit -v it died with std::bad_alloc. Its mesh needs
  // about 30 GB: refused under an 8 GB address space (a fixed limit, whatever the machine has).
  const std::string set = "geometry.phantom.voxel_size=0.0500001 mm";
  const fs::path config = fs::path(CARDIO_SOURCE_DIR) / "configs" / "lv_phantom.yaml";
  for (const char* command : {"validate", "run"}) {
    std::vector<std::string> args{command, config.string(), "--set", set};
    if (std::string(command) == "run") args.insert(args.end(), {"-o", "out", "--no-figures"});
    const auto [r, seconds] = cardiac_limited(m_dir, 8000000, args);
    EXPECT_LT(seconds, 2.0) << command;
    EXPECT_EQ(r.code, 2) << command << ": " << r.err;
    EXPECT_HAS(r.err, "geometry.phantom.voxel_size: 0.0500001 mm gives a grid of 402 x 402 x 502 voxels");
    EXPECT_HAS(r.err, "25.9 million elements, about 29.6 GB of memory to mesh, more than the ");
    EXPECT_FALSE(fs::exists(out())) << command;
  }
}

TEST_F(CliTest, FailedAllocationIsAMessageNotACrash) {
  // `cardiac phantom` has no config to estimate from: at 0.02 mm its 1.3e9 voxels (35 GB) fail to
  // allocate under a 4 GB address space. Top-level handler: what was being built, how large, exit 1.
  const auto [r, seconds] = cardiac_limited(m_dir, 4000000, {"phantom", "lv", "-o", "ph", "--voxel-size", "0.02"});
  EXPECT_EQ(r.code, 1) << r.err;  // not 134 (abort) or 137 (killed)
  EXPECT_HAS(r.err,
             "cardiac: out of memory (std::bad_alloc) while building the phantom lv at 0.02 mm "
             "(a grid of 1002 x 1002 x 1252 voxels, about 35.2 GB); ");
  EXPECT_HAS(r.err, " are available (MemAvailable, capped by the container's memory limit and by ulimit -v)");
  EXPECT_EQ(r.err.find("terminate called"), std::string::npos) << r.err;
  EXPECT_LT(seconds, 5.0);
  EXPECT_FALSE(fs::exists(m_dir / "ph" / "labels.nii.gz"));
}

// Bad input of the beating heart (issue 4): each a clear error naming the key or the file, a
// non-zero exit, and no summary.json, final.vtu, frames or mesh outputs.
class BeatBadInput : public CliTest {
 protected:
  // configs/lv_phantom.yaml at 1.5 mm with `from` replaced by `to`.
  Result run_default_with(const std::string& from, const std::string& to) const {
    std::string yaml = slurp(fs::path(CARDIO_SOURCE_DIR) / "configs" / "lv_phantom.yaml");
    const auto at = yaml.find(from);
    if (at == std::string::npos) {
      ADD_FAILURE() << "'" << from << "' not in configs/lv_phantom.yaml";
      return {};
    }
    yaml.replace(at, from.size(), to);
    return run_config(yaml, {"--set", "geometry.phantom.voxel_size=1.5 mm"});
  }
  void expect_nothing_finished() const {
    expect_no_results();
    for (const char* f : {"mesh.vtu", "mesh_report.json", "series.pvd", "timeseries.csv"})
      EXPECT_FALSE(fs::exists(out() / f)) << f;
    EXPECT_FALSE(fs::exists(out() / "frames" / "frame_00000.vtu"));
  }
};

TEST_F(CliTest, ThreadsAboveTheCpusAreRefusedNamingTheLimit) {
  const int cpus = cardio::available_cpus();
  const std::string over = std::to_string(cpus + 1);
  const std::string limit = ": this process can run 1 to " + std::to_string(cpus) + " threads";
  write("m.yaml", "base: a.yaml\ncases:\n  - name: a\n");  // never read: the options are refused first
  // One check for every command that takes a thread count (issue 14, item 4): same message, exit 2.
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"run", "a.yaml", "--threads", over},
                                             {"mesh", "a.yaml", "--threads", over},
                                             {"bench", "--threads", "1," + over},
                                             {"batch", "m.yaml", "-o", "b", "--threads", over}}) {
    const Result r = cardiac(args);
    EXPECT_EQ(r.code, 2) << args[0] << ": " << r.err;
    EXPECT_HAS(r.err, "--threads " + over + limit);
  }
  // batch: the workers, and workers x threads per case, must fit as well.
  Result r = cardiac({"batch", "m.yaml", "-o", "b", "-j", over});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_HAS(r.err, "-j " + over + limit);
  r = cardiac({"batch", "m.yaml", "-o", "b", "-j", std::to_string(cpus), "--threads", "2"});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_HAS(r.err, "-j " + std::to_string(cpus) + " x --threads 2 = " + std::to_string(2 * cpus) + " threads" + limit);
  r = cardiac({"batch", "m.yaml", "-o", "b", "--executor", "slurm", "-j", "1"});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_HAS(r.err, "resources.cpus_per_task");
  EXPECT_FALSE(fs::exists(m_dir / "b")) << "a refused batch must not create BATCH_DIR";
}

TEST_F(BeatBadInput, OutputIntervalBelowTheTimeStepIsRefused) {
  // configs/lv_phantom.yaml at 1.5 mm: stable step about 0.1 ms; 1e-300 ms would write a frame
  // every step (1.2 GB for 152 ms in issue 14's campaign).
  Result r = run_default_with("  output_interval: 10 ms", "  output_interval: 1e-300 ms");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_HAS(r.err, "simulation.output_interval: 1e-300 ms is below the time step dt = ");
  expect_no_results();
  EXPECT_FALSE(fs::exists(out() / "frames" / "frame_00001.vtu"));
}

TEST_F(BeatBadInput, TimeStepAboveTheEstimateIsRefusedAndAForcedBlowUpIsNamed) {
  // configs/lv_phantom.yaml at 1.5 mm: stable step about 0.1 ms.
  Result r = run_default_with("  output_interval: 10 ms", "  output_interval: 10 ms\n  dt: 0.5 ms");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_HAS(r.err, "simulation.dt: 0.5 ms is above the stability estimate");
  EXPECT_HAS(r.err, "simulation.force_dt");
  expect_no_results();
  // Forced: the run blows up within a few steps and says where (step, time, node, element) and what to try.
  r = run_default_with("  output_interval: 10 ms", "  output_interval: 10 ms\n  dt: 0.5 ms\n  force_dt: true");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_TRUE(
      std::regex_search(r.err, std::regex(R"(unstable at step \d+ \(t = [0-9.]+ ms\): node \d+ \(in element \d+\))")))
      << r.err;
  EXPECT_HAS(r.err, "dt_safety");
  expect_no_results();
}

TEST_F(BeatBadInput, PacingSiteOutsideTheMyocardium) {
  const Result r = run_default_with("{point: [0 mm, 0 mm, -18.5 mm]", "{point: [0 mm, 0 mm, -40 mm]");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_HAS(r.err, "cfg.yaml:");
  EXPECT_HAS(r.err, "pacing site outside the myocardium");
  expect_nothing_finished();
}

TEST_F(BeatBadInput, ActivationImageOnAnotherGrid) {
  ASSERT_EQ(cardiac({"phantom", "lv", "-o", "ph", "--voxel-size", "2"}).code, 0);
  const Result r = run_default_with(
      "  mode: eikonal\n  sites:\n    - {point: [0 mm, 0 mm, -18.5 mm], time: 0 ms}   # apical pacing, mid-wall at the "
      "apex\n"
      "  velocity_fibre: 0.6 m/s\n  velocity_cross: 0.2 m/s\n",
      "  mode: image\n  image: ph/labels.nii.gz\n");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_HAS(r.err, "ph/labels.nii.gz");
  EXPECT_HAS(r.err, "not on the element grid");
  expect_nothing_finished();
}

TEST_F(BeatBadInput, WindkesselAndPressuresOutOfRange) {
  Result r = run_default_with("compliance: 0.06 mL/mmHg", "compliance: -0.06 mL/mmHg");
  expect_config_error(r, "cfg.yaml:", {"windkessel.compliance", "'-0.06 mL/mmHg'", "out of range"});
  r = run_default_with("peripheral_resistance: 20 mmHg*s/mL", "peripheral_resistance: 0 mmHg*s/mL");
  expect_config_error(r, "cfg.yaml:", {"peripheral_resistance", "out of range"});
  r = run_default_with("end_diastolic_pressure: 8 mmHg", "end_diastolic_pressure: 60 mmHg");
  expect_config_error(r, "cfg.yaml:", {"end_diastolic_pressure", "60 mmHg", "(0, 40)"});
  r = run_default_with("atrial_pressure: 5 mmHg", "atrial_pressure: 12 mmHg");
  expect_config_error(r, "cfg.yaml:", {"circulation.cavities[0].atrial_pressure", "end-diastolic pressure"});
  EXPECT_EQ(r.err.find("beat."), std::string::npos) << "names a key that does not exist: " << r.err;
  // The twitch repeats every simulation.period: there is no activation.twitch.period key to blame.
  r = run_default_with("  period: 800 ms", "  period: 300 ms");
  expect_config_error(r, "cfg.yaml:", {"activation.twitch.duration", "simulation.period = 300 ms"});
  EXPECT_EQ(r.err.find("twitch.period"), std::string::npos) << r.err;
}

// Where a beat run ends (issue 14, item 6): the LV phantom at 2 mm with a 200 ms twitch (onset at
// 200 ms, ejection from about 300 to 400 ms, relaxation after), a few seconds a run.
class BeatEnd : public CliTest {
 protected:
  Result run_beats(int beats, const std::string& period, const std::string& twitch = "200 ms",
                   const std::string& time_to_peak = "150 ms") const {
    return cardiac({"run", std::string(CARDIO_SOURCE_DIR) + "/configs/lv_phantom.yaml", "-o", out().string(),
                    "--no-figures", "--set", "geometry.phantom.voxel_size=2 mm", "--set",
                    "simulation.output_interval=50 ms", "--set", "activation.twitch.duration=" + twitch, "--set",
                    "activation.twitch.time_to_peak=" + time_to_peak, "--set",
                    "simulation.beats=" + std::to_string(beats), "--set", "simulation.period=" + period});
  }
  nlohmann::json incomplete_summary() const {
    EXPECT_FALSE(fs::exists(out() / "summary.json")) << "summary.json marks finished runs only";
    EXPECT_FALSE(fs::exists(out() / "checkpoint.bin")) << "nothing to resume: it would overrun again";
    for (const char* f :
         {"summary.incomplete.json", "timeseries.csv", "series.pvd", "final.vtu", "frames/frame_00001.vtu"})
      EXPECT_TRUE(fs::exists(out() / f)) << f << ": what was computed must be kept";
    return nlohmann::json::parse(slurp(out() / "summary.incomplete.json"));
  }
};

TEST_F(BeatEnd, OneBeatEndsWithTheRunEvenWhileRelaxing) {
  // The run ends at 420 ms, in isovolumic relaxation, where beat 2's onset would have come.
  const Result r = run_beats(1, "220 ms");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto s = nlohmann::json::parse(slurp(out() / "summary.json"));
  EXPECT_TRUE(s["complete"].get<bool>());
  const auto& lv = s["cavities"][0];
  ASSERT_EQ(lv["beats"].size(), 1u) << lv.dump();
  EXPECT_GT(lv["EF"].get<double>(), 0.3);
  EXPECT_NEAR(s["t_end_ms"].get<double>(), 420, 0.5);
}

TEST_F(BeatEnd, ABeatOverrunningItsPeriodKeepsWhatWasComputedAndExits1) {
  // With a 250 ms twitch, beat 2's onset at 450 ms comes while beat 1 is still relaxing.
  const Result r = run_beats(2, "250 ms", "250 ms");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_HAS(r.err, "lv: beat 1 has not finished when the next contraction onset comes");
  EXPECT_HAS(r.err, "lengthen simulation.period (250 ms)");
  EXPECT_HAS(r.err, "summary.incomplete.json");
  const auto s = incomplete_summary();
  EXPECT_FALSE(s["complete"].get<bool>());
  EXPECT_HAS(s["incomplete_reason"].get<std::string>(), "simulation.period");
  EXPECT_FALSE(s["cavities"][0]["beats"].back()["complete"].get<bool>());
  EXPECT_LT(s["t_end_ms"].get<double>(), 451);
}

TEST_F(BeatEnd, ARunEndingBeforeTheEjectionEndsIsIncomplete) {
  // The run ends at 320 ms, before the ejection has ended: no ESV, no EF.
  const Result r = run_beats(1, "120 ms", "120 ms", "60 ms");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_HAS(r.err, "lv: beat 1 is still in");
  EXPECT_HAS(r.err, "at the end of the simulation");
  EXPECT_FALSE(incomplete_summary()["complete"].get<bool>());
}

TEST_F(BeatBadInput, CirculationOfAMissingCavity) {
  const Result r = run_default_with("    - name: lv\n", "    - name: rv\n");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_HAS(r.err, "no cavity named 'rv'");
  expect_nothing_finished();
}
