// Stage caching from the `cardiac` program (issue 6): a re-run into the same OUTDIR that changes
// only solver or output settings loads the mesh and gives bit-identical results; a mesh key change
// or CARDIO_NO_CACHE recomputes it.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "test_support.hpp"

#ifndef CARDIAC_EXE
#error "CARDIAC_EXE (path of the cardiac executable) must be defined"
#endif

namespace fs = std::filesystem;
using namespace cardio;

namespace {

using test_support::shell_quote;
using test_support::slurp;

struct CliRun {
  int code = -1;
  std::string out;
};

CliRun cardiac(const std::string& args, const fs::path& dir, const std::string& env = "") {
  const auto r = test_support::run_command(env + shell_quote(CARDIAC_EXE) + " " + args + " 2>&1", dir);
  return {r.code, r.out};
}

/// The summary without what legitimately differs between two runs (timings, dates).
nlohmann::json without_timing(nlohmann::json j) {
  if (j.is_object()) {
    nlohmann::json o = nlohmann::json::object();
    for (auto it = j.begin(); it != j.end(); ++it) {
      const std::string& k = it.key();
      if (k == "finished_utc" || k.find("time_s") != std::string::npos || k.find("wall") != std::string::npos ||
          k.find("seconds") != std::string::npos)
        continue;
      o[k] = without_timing(it.value());
    }
    return o;
  }
  if (j.is_array())
    for (auto& v : j) v = without_timing(v);
  return j;
}

TEST(MeshCacheCli, ReusesTheMeshWhenOnlySolverSettingsChange) {
  test_support::TempDir tmp{"cardio_mesh_cache_cli_"};
  const fs::path dir = tmp.path();
  const std::string config = (fs::path(CARDIO_SOURCE_DIR) / "configs" / "lv_phantom.yaml").string();
  // 2 mm LV; larger mass scaling and output interval only to make the test quick (same in all runs).
  const std::string common = "run '" + config +
                             "' --set 'geometry.phantom.voxel_size=2 mm' --set simulation.mass_scaling=80 "
                             "--set 'simulation.output_interval=50 ms' ";
  const fs::path cached_dir = dir / "cached", fresh_dir = dir / "fresh";
  // A first run (2 beats) leaves the mesh in cached/cache/.
  const CliRun first = cardiac(common + "--set simulation.beats=2 -o '" + cached_dir.string() + "'", dir);
  ASSERT_EQ(first.code, 0) << first.out;
  EXPECT_HAS(first.out, "mesh stage: computed");
  ASSERT_TRUE(fs::is_directory(cached_dir / "cache"));
  // The same case with only simulation.beats changed: the mesh is loaded.
  const CliRun second = cardiac(common + "--set simulation.beats=1 -o '" + cached_dir.string() + "'", dir);
  ASSERT_EQ(second.code, 0) << second.out;
  EXPECT_HAS(second.out, "mesh stage: cached (key ");
  EXPECT_EQ(second.out.find("mesh stage: computed"), std::string::npos) << second.out;
  EXPECT_HAS(slurp(cached_dir / "run.log"), "mesh stage: cached");
  // A fresh run of that config into a new directory computes the mesh.
  const CliRun fresh = cardiac(common + "--set simulation.beats=1 -o '" + fresh_dir.string() + "'", dir);
  ASSERT_EQ(fresh.code, 0) << fresh.out;
  EXPECT_HAS(fresh.out, "mesh stage: computed");
  // Bit-identical results: every summary number but timings, and the mesh report.
  const auto a = nlohmann::json::parse(slurp(cached_dir / "summary.json"));
  const auto b = nlohmann::json::parse(slurp(fresh_dir / "summary.json"));
  EXPECT_EQ(without_timing(a).dump(), without_timing(b).dump());
  auto ra = nlohmann::json::parse(slurp(cached_dir / "mesh_report.json"));
  auto rb = nlohmann::json::parse(slurp(fresh_dir / "mesh_report.json"));
  EXPECT_EQ(ra["mesh_cache"]["hit"], true);
  EXPECT_EQ(rb["mesh_cache"]["hit"], false);
  EXPECT_EQ(ra["mesh_cache"]["key"], rb["mesh_cache"]["key"]);
  ra.erase("mesh_cache");
  rb.erase("mesh_cache");
  EXPECT_EQ(without_timing(ra).dump(), without_timing(rb).dump());
  EXPECT_EQ(slurp(cached_dir / "mesh.vtu"), slurp(fresh_dir / "mesh.vtu"));
  EXPECT_EQ(slurp(cached_dir / "final.vtu"), slurp(fresh_dir / "final.vtu"));
  // `cardiac mesh` with a changed mesh key recomputes (and says what changed); CARDIO_NO_CACHE=1
  // neither reads nor writes the cache.
  const std::string mesh = "mesh '" + config +
                           "' --set 'geometry.phantom.voxel_size=2 mm' --set 'fibres.rule.helix_epi=-50 deg' -o '" +
                           cached_dir.string() + "'";
  const CliRun remesh = cardiac(mesh, dir);
  ASSERT_EQ(remesh.code, 0) << remesh.out;
  EXPECT_HAS(remesh.out, "cache miss");
  EXPECT_HAS(remesh.out, "changed: helix_epi: -0.87266");  // -50 deg in rad
  EXPECT_HAS(remesh.out, "mesh stage: computed");
  const CliRun disabled = cardiac(mesh, dir, "CARDIO_NO_CACHE=1 ");
  ASSERT_EQ(disabled.code, 0) << disabled.out;
  EXPECT_HAS(disabled.out, "mesh stage: computed (cache disabled)");
  const CliRun again = cardiac(mesh, dir);
  ASSERT_EQ(again.code, 0) << again.out;
  EXPECT_HAS(again.out, "mesh stage: cached");
}

TEST(MeshCacheCli, OutputOnlyKeysReuseTheMesh) {
  test_support::TempDir tmp{"cardio_mesh_cache_cli_"};
  const fs::path dir = tmp.path();
  const std::string config = (fs::path(CARDIO_SOURCE_DIR) / "configs" / "lv_phantom.yaml").string();
  const std::string mesh =
      "mesh '" + config + "' --set 'geometry.phantom.voxel_size=2 mm' -o '" + (dir / "out").string() + "' ";
  const CliRun first = cardiac(mesh, dir);
  ASSERT_EQ(first.code, 0) << first.out;
  EXPECT_HAS(first.out, "mesh stage: computed");
  const CliRun figures = cardiac(mesh + "--set output.figures=false", dir);
  ASSERT_EQ(figures.code, 0) << figures.out;
  EXPECT_HAS(figures.out, "mesh stage: cached");
  const CliRun all =
      cardiac(mesh + "--set name=other --set output.surfaces=false --set 'output.max_size_warning=1 TB'", dir);
  ASSERT_EQ(all.code, 0) << all.out;
  EXPECT_HAS(all.out, "mesh stage: cached");
}

}  // namespace
