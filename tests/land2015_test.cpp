// Land et al. 2015 (Proc. R. Soc. A 471:20150641) cardiac mechanics benchmarks, run from the
// configs in configs/benchmarks/. Short versions (coarse voxels) with tolerances that hold there are
// in the default suite; the full convergence runs carry the CTest label `long`
// (ctest -L long). The published values are in the configs and in docs/validation.md.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <string>

#include "cardio/config/config.hpp"
#include "cardio/mechanics/myocardium.hpp"
#include "config/heart_config.hpp"
#include "heart/coarse_start.hpp"
#include "mesh/mesh_stage.hpp"

using namespace cardio;

namespace {

struct Outcome {
  nlohmann::json summary;
  double z(const std::string& probe) const {
    for (const auto& p : summary["probes"])
      if (p["name"] == probe) return p["final_mm"][2].get<double>();
    ADD_FAILURE() << "no probe " << probe;
    return NAN;
  }
  /// |z - published| / |published displacement| (the benchmark's displacement error).
  double error(const std::string& probe) const {
    for (const auto& p : summary["probes"])
      if (p["name"] == probe) return p["error_percent_of_displacement"].get<double>() / 100.0;
    ADD_FAILURE() << "no probe " << probe;
    return NAN;
  }
};

Outcome run(const std::string& config, const std::vector<std::string>& overrides) {
  auto doc = config::Document::load_file(std::string(CARDIO_SOURCE_DIR) + "/configs/benchmarks/" + config);
  for (const auto& o : overrides) doc->set_override(o);
  const pipeline::HeartConfig cfg = pipeline::parse_heart_config(*doc);
  const pipeline::MeshStageResult mesh = pipeline::run_mesh_stages(cfg.mesh);
  const pipeline::HeartRunResult r = pipeline::run_quasi_static(*cfg.simulation, cfg.mesh, mesh.mesh, nullptr);
  std::cout << config;
  for (const auto& o : overrides) std::cout << " " << o;
  for (const auto& p : r.summary["probes"])
    std::cout << "\n  " << p["name"].get<std::string>() << ": z = " << p["final_mm"][2] << " mm (published "
              << p["published_z_mm"] << ", error " << p["error_percent_of_displacement"] << " % of the displacement)";
  for (const auto& c : r.summary["cavities"]) std::cout << "\n  cavity " << c["final_volume_mL"] << " mL";
  std::cout << "\n  tissue volume change " << r.summary["tissue_volume_change_percent"] << " %\n";
  EXPECT_TRUE(r.summary["converged"].get<bool>());
  return {r.summary};
}

TEST(Land2015, Problem1BeamConvergesTowardsTheConsensus) {
  // Published consensus: z = 4.17 mm at (10, 0.5, 1). Measured with the sampled-axes element with
  // F-bar (2026-11-25 evening): 4.241 (0.5 mm voxels, 2.3 % of the displacement, softer than the
  // consensus at two elements through the thickness), 4.173 (0.25 mm, 0.1 %). Before F-bar: 4.025
  // (4.6 %), 4.126 (1.4 %). One-point element: 2.5 %, 1.1 %.
  const Outcome coarse = run("land2015_problem1.yaml", {"geometry.box.voxel_size=0.5 mm"});
  const Outcome fine = run("land2015_problem1.yaml", {"geometry.box.voxel_size=0.25 mm"});
  EXPECT_LT(coarse.error("tip"), 0.05);
  EXPECT_LT(fine.error("tip"), 0.02);
  EXPECT_LT(fine.error("tip"), coarse.error("tip"));
}

double cavity_error(const Outcome& r, double published_mL) {
  return std::abs(r.summary["cavities"][0]["final_volume_mL"].get<double>() - published_mL) / published_mL;
}

TEST(Land2015, Problem2AtOneMillimetre) {
  // Sampled-axes element (F-bar), fitted boundary, kappa 2000 kPa. Published -26.61 (endocardial
  // apex), -28.28 (epicardial apex), cavity 10.734 mL. Issue 11 goals at 1 mm: apexes <= 5 %; the
  // benchmark is incompressible: tissue volume change < 0.5 %. Measured (2 fitting passes): 1.43 %,
  // 1.01 %, -1.2 %, -0.03 % (one pass: 1.8 %, 1.4 %, -0.8 %, -0.03 %).
  const Outcome r = run("land2015_problem2.yaml", {});
  EXPECT_LT(r.error("endocardial_apex"), 0.05);
  EXPECT_LT(r.error("epicardial_apex"), 0.05);
  EXPECT_LT(cavity_error(r, 10.734), 0.03);
  EXPECT_LT(std::abs(r.summary["tissue_volume_change_percent"].get<double>()), 0.5);
}

TEST(Land2015, Problem3AtOneMillimetre) {
  // Published -12.35 (endocardial apex), -15.45 (epicardial apex), cavity 1.796 mL. Issue 11
  // goals at 1 mm: endocardial apex <= 10 %, epicardial apex <= 5 %, cavity <= 3 %, tissue volume
  // change < 0.5 %. Measured (sampled axes with F-bar, fitted in 2 passes, kappa 2000 kPa): 4.3 %,
  // 3.2 %, -0.25 %, -0.48 % (one fitting pass: 1.2 %, 6.8 %, +2.2 %; docs/validation.md §11).
  const Outcome r = run("land2015_problem3.yaml", {});
  EXPECT_LT(r.error("endocardial_apex"), 0.10);
  EXPECT_LT(r.error("epicardial_apex"), 0.05);
  EXPECT_LT(cavity_error(r, 1.796), 0.03);
  EXPECT_LT(std::abs(r.summary["tissue_volume_change_percent"].get<double>()), 0.5);
}

TEST(Land2015, CoarseMeshStartGivesTheAnswerFromRestInFewerIterations) {
  // simulation.initial_guess: coarse_mesh (heart/coarse_start.hpp) only changes where Newton starts:
  // the converged state is the one solved from rest in load steps, to the solver's tolerance.
  const Outcome rest = run("land2015_problem2.yaml", {"simulation.initial_guess=rest"});
  const Outcome coarse = run("land2015_problem2.yaml", {"simulation.initial_guess=coarse_mesh"});
  ASSERT_TRUE(coarse.summary["coarse_start"]["used"].get<bool>());
  EXPECT_EQ(coarse.summary["coarse_start"]["element_size_mm"].get<double>(), 2.0);
  for (const char* probe : {"endocardial_apex", "epicardial_apex"}) EXPECT_NEAR(coarse.z(probe), rest.z(probe), 1e-6);
  EXPECT_LT(coarse.summary["iterations"].get<long>(), rest.summary["iterations"].get<long>());
}

TEST(Land2015, CoarseMeshDisplacementInterpolatesAnAffineFieldExactly) {
  // The beam of problem 1 at 0.5 mm and 0.25 mm: both staircase grids cover the same box, so every
  // fine node lies in a coarse element, where trilinear interpolation reproduces an affine field.
  auto mesh_at = [](const char* size) {
    auto doc =
        config::Document::load_file(std::string(CARDIO_SOURCE_DIR) + "/configs/benchmarks/land2015_problem1.yaml");
    doc->set_override(std::string("geometry.box.voxel_size=") + size);
    return pipeline::run_mesh_stages(pipeline::parse_heart_config(*doc).mesh).mesh;
  };
  const meshing::VoxelMesh coarse = mesh_at("0.5 mm"), fine = mesh_at("0.25 mm");
  Eigen::Matrix3d A;
  A << 0.1, -0.2, 0.05, 0.3, 0.01, -0.07, -0.04, 0.2, 0.15;
  const Eigen::Vector3d b(0.5, -1.0, 2.0);
  const Eigen::Matrix3Xd u_coarse = (A * coarse.mesh.rest).colwise() + b;
  const Eigen::Matrix3Xd u = pipeline::interpolate_displacement(coarse, u_coarse, fine);
  const Eigen::Matrix3Xd expected = (A * fine.mesh.rest).colwise() + b;
  EXPECT_LT((u - expected).cwiseAbs().maxCoeff(), 1e-12);
}

TEST(Land2015, EverySimdBuildGivesTheSameAnswerAndTheSummaryNamesIt) {
  // The builds differ at rounding level only (sampled_axes_simd_test.cpp checks the kernels);
  // through Newton to convergence the probes agree far below the benchmark's tolerance.
  const Outcome widest = run("land2015_problem3.yaml", {"geometry.phantom.voxel_size=2 mm"});
  const Outcome baseline =
      run("land2015_problem3.yaml", {"geometry.phantom.voxel_size=2 mm", "simulation.simd=baseline"});
  EXPECT_EQ(baseline.summary["simd_isa"], "baseline");
  EXPECT_EQ(widest.summary["simd_isa"], mechanics::runnable_simd_isas().front());
  for (const char* probe : {"endocardial_apex", "epicardial_apex"})
    EXPECT_NEAR(baseline.z(probe), widest.z(probe), 1e-6) << probe;
}

TEST(Land2015Long, Problem1AtThreeVoxelSizes) {
  double previous = 1e9;
  for (const char* h : {"0.5 mm", "0.25 mm", "0.125 mm"}) {
    const Outcome r = run("land2015_problem1.yaml", {std::string("geometry.box.voxel_size=") + h});
    EXPECT_LT(r.error("tip"), previous);
    previous = r.error("tip");
  }
  EXPECT_LT(previous, 0.02);  // the goal at the finest size
}

TEST(Land2015Long, Problem2AtThreeVoxelSizes) {
  // Issue 11 goals at 0.5 mm: both apexes <= 2 %, tissue volume change < 0.5 % (the 2 and 1 mm runs
  // are reported for the validation table). Measured (F-bar, fitted in 2 passes, Newton): 0.28 % /
  // 0.01 %, cavity -0.72 %, tissue -0.04 %, 120 s on 2 threads (docs/validation.md §11.0).
  for (const char* h : {"2 mm", "1 mm", "0.5 mm"}) {
    const Outcome r = run("land2015_problem2.yaml", {std::string("geometry.phantom.voxel_size=") + h});
    std::cout << "problem 2 at " << h << ": cavity error " << cavity_error(r, 10.734) << "\n";
    if (std::string(h) != "0.5 mm") continue;
    EXPECT_LT(r.error("endocardial_apex"), 0.02);
    EXPECT_LT(r.error("epicardial_apex"), 0.02);
    EXPECT_LT(std::abs(r.summary["tissue_volume_change_percent"].get<double>()), 0.5);
  }
}

TEST(Land2015Long, Problem3AtThreeVoxelSizes) {
  // Issue 11 goals at 0.5 mm: epicardial apex <= 2 %, endocardial apex (on the singular axis) <= 5 %,
  // cavity <= 2 %, tissue volume change < 0.5 %. Measured (F-bar, fitted in 2 passes, Newton): 3.6 % /
  // 0.43 %, cavity -0.69 %, tissue -0.48 %, 48 s on 2 threads.
  for (const char* h : {"2 mm", "1 mm", "0.5 mm"}) {
    const Outcome r = run("land2015_problem3.yaml", {std::string("geometry.phantom.voxel_size=") + h});
    std::cout << "problem 3 at " << h << ": cavity error " << cavity_error(r, 1.796) << "\n";
    if (std::string(h) != "0.5 mm") continue;
    EXPECT_LT(r.error("endocardial_apex"), 0.05);
    EXPECT_LT(r.error("epicardial_apex"), 0.02);
    EXPECT_LT(cavity_error(r, 1.796), 0.02);
    EXPECT_LT(std::abs(r.summary["tissue_volume_change_percent"].get<double>()), 0.5);
  }
}

}  // namespace
