// The passive inflation's fallback (unloading.inflation_fallback): where Newton's load increments
// stall, dynamic relaxation carries the load from the last converged fraction to the end and
// Newton refines its state. Checked against an independent reference: the same inflation solved
// by Newton alone with enough iterations. The fallback must reach the same equilibrium.
#include <gtest/gtest.h>

#include <iostream>
#include <sstream>

#include "cardio/config/config.hpp"
#include "config/heart_config.hpp"
#include "heart/passive_inflation.hpp"
#include "mesh/mesh_stage.hpp"

using namespace cardio;

namespace {

// The LV phantom at 1.5 mm, as soft as its Klotz fit (C = 0.1 kPa, heartbeat.md), at 8 mmHg.
const char* kSoftLvPhantom = R"(
name: inflation_fallback
geometry:
  source: phantom
  phantom: {kind: lv_ellipsoid, voxel_size: 1.5 mm, fibres: land_benchmark}
fibres: {source: phantom}
material: {law: guccione, C: 0.1 kPa, b_f: 8, b_t: 2, b_fs: 4, bulk_modulus: 1000 kPa}
boundary:
  fixed: [{tag: base}]
simulation: {mode: quasi_static}
unloading: {end_diastolic_pressures: {lv: 8 mmHg}}
)";

pipeline::InflationOutcome inflate(const pipeline::HeartSimulation& sim, const meshing::VoxelMesh& mesh,
                                   std::ostream* log) {
  pipeline::PassiveInflation inflation(sim, mesh, sim.unloading.end_diastolic_pressures, "test", log);
  return inflation.inflate(nullptr);
}

}  // namespace

TEST(InflationFallback, RelaxationCarriesAStalledInflationToNewtonsEquilibrium) {
  const auto doc = config::Document::load_string(kSoftLvPhantom, "case.yaml");
  const pipeline::HeartConfig cfg = pipeline::parse_heart_config(*doc);
  const meshing::VoxelMesh mesh = pipeline::run_mesh_stages(cfg.mesh).mesh;
  pipeline::HeartSimulation sim = *cfg.simulation;
  ASSERT_TRUE(sim.unloading.relaxation_fallback) << "the default";

  pipeline::HeartSimulation reference = sim;  // Newton alone, with room to converge
  reference.unloading.relaxation_fallback = false;
  reference.max_iterations = 60;
  const pipeline::InflationOutcome newton = inflate(reference, mesh, nullptr);
  ASSERT_TRUE(newton.converged);
  EXPECT_EQ(newton.relaxation_steps, 0);

  // Two Newton iterations per increment: the increments stall on the soft toe.
  pipeline::HeartSimulation starved = sim;
  starved.max_iterations = 2;
  starved.unloading.relaxation_fallback = false;
  EXPECT_FALSE(inflate(starved, mesh, nullptr).converged) << "the case must stall without the fallback";

  starved.unloading.relaxation_fallback = true;
  std::ostringstream log;
  const pipeline::InflationOutcome relaxed = inflate(starved, mesh, &log);
  std::cout << log.str();
  ASSERT_TRUE(relaxed.converged);
  EXPECT_GT(relaxed.relaxation_steps, 0);
  EXPECT_NE(log.str().find("dynamic relaxation"), std::string::npos) << log.str();

  const double h = mesh.grid.spacing.minCoeff();
  const double inflation_mm = (newton.x - mesh.mesh.rest).colwise().norm().maxCoeff();
  const double difference_mm = (relaxed.x - newton.x).colwise().norm().maxCoeff();
  std::cout << "largest inflation " << inflation_mm << " mm; fallback vs Newton alone: " << difference_mm << " mm max ("
            << relaxed.relaxation_steps << " relaxation steps, " << relaxed.newton_iterations
            << " Newton iterations)\n";
  EXPECT_GT(inflation_mm, h) << "a soft inflation of more than a voxel";
  EXPECT_LT(difference_mm, 1e-3 * h);
}
