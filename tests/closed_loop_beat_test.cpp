// The real biventricular shape beating in the closed loop (configs/biv_closed_loop.yaml, one or two beats
// at 3 mm instead of its 2 mm, to stay short): blood volume conserved to 1e-9 (a conservation law of the loop), both
// ventricles held during their isovolumic phases, the LV's phases in order, and the LV pressure during ejection equal
// to the aortic pressure plus the open valve's drop (the loop's diode law, Regazzoni et al. 2022); and
// circulation.closed_loop.fill adding the blood its first step asks for, once, at the second onset.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

#include "cardio/config/config.hpp"
#include "cardio/core/error.hpp"
#include "config/heart_config.hpp"
#include "heart/beat_run.hpp"
#include "mesh/mesh_stage.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
using namespace cardio;

namespace {

/// configs/biv_closed_loop.yaml at 3 mm with `overrides`, beating into `out` (emptied first).
pipeline::BeatRunResult run_biventricle(const std::vector<std::string>& overrides, const fs::path& out,
                                        std::ostringstream& log) {
  fs::remove_all(out);
  auto doc = config::Document::load_file(std::string(CARDIO_SOURCE_DIR) + "/configs/biv_closed_loop.yaml");
  doc->set_override("geometry.surface.voxel_size=3 mm");
  for (const std::string& o : overrides) doc->set_override(o);
  const pipeline::HeartConfig cfg = pipeline::parse_heart_config(*doc);
  const pipeline::MeshStageResult mesh = pipeline::run_mesh_stages(cfg.mesh);
  pipeline::BeatRunResult r = pipeline::run_heart_beat(*cfg.simulation, mesh.mesh, out, &log);
  std::cout << log.str() << r.summary["circulation"].dump(2) << "\n";
  return r;
}

TEST(ClosedLoopBeat, RealBiventricleConservesBloodAndFollowsTheValves) {
  const fs::path out = fs::temp_directory_path() / ("cardio_closed_loop_" + std::to_string(::getpid()));
  std::ostringstream log;
  const pipeline::BeatRunResult r = run_biventricle({"simulation.beats=1"}, out, log);

  const auto& circ = r.summary["circulation"];
  EXPECT_EQ(circ["model"], "closed_loop");
  EXPECT_LT(circ["max_blood_volume_change_relative"].get<double>(), 1e-9);
  const auto& lv = r.summary["cavities"][0];
  ASSERT_FALSE(lv["EF"].is_null()) << "no complete LV beat";
  EXPECT_GT(lv["EF"].get<double>(), 0.2);

  auto col = test_support::read_columns(out / "timeseries.csv");
  ASSERT_GT(col["time_ms"].size(), 500u);
  const auto number = [&](const char* name, std::size_t i) { return std::stod(col[name][i]); };
  const double blood0 = number("blood_volume_mL", 0);
  std::vector<std::string> lv_phases;
  int isovolumic = 0, ejecting = 0;
  for (std::size_t i = 0; i < col["time_ms"].size(); ++i) {
    EXPECT_NEAR(number("blood_volume_mL", i), blood0, 1e-9 * blood0) << "t = " << col["time_ms"][i];
    const std::string& phase = col["lv_phase"][i];
    if (lv_phases.empty() || lv_phases.back() != phase) lv_phases.push_back(phase);
    for (const char* cavity : {"lv", "rv"}) {
      const std::string p = std::string(cavity) + "_phase", v = std::string(cavity) + "_volume_mL";
      if (i > 0 && col[p][i].rfind("isovolumic", 0) == 0 && col[p][i - 1] == col[p][i]) {
        // Closed valves leak (p_up - p_down) / R_max: about 1e-6 mL/ms here.
        EXPECT_NEAR(number(v.c_str(), i), number(v.c_str(), i - 1), 1e-4) << cavity << " t = " << col["time_ms"][i];
        ++isovolumic;
      }
    }
    if (phase == "ejection" && i > 0 && i + 1 < col["time_ms"].size() && col["lv_phase"][i + 1] == phase) {
      // Open aortic valve: p_LV - p_aorta = R_min Q, R_min = 7.5 mmHg ms/mL, Q = -dV/dt (central
      // difference over the 1 ms rows; 1 mmHg of slack for the flow's change within them).
      const double q = (number("lv_volume_mL", i - 1) - number("lv_volume_mL", i + 1)) /
                       (number("time_ms", i + 1) - number("time_ms", i - 1));
      const double drop = number("lv_pressure_mmHg", i) - number("systemic_arterial_pressure_mmHg", i);
      EXPECT_NEAR(drop, 7.5 * q, 1.0) << "t = " << col["time_ms"][i];
      ++ejecting;
    }
  }
  EXPECT_GT(isovolumic, 20);
  EXPECT_GT(ejecting, 20);
  const std::vector<std::string> expected{"filling", "isovolumic_contraction", "ejection", "isovolumic_relaxation",
                                          "filling"};
  EXPECT_EQ(lv_phases, expected);
  fs::remove_all(out);
}

TEST(ClosedLoopBeat, AnAfterloadTargetUpsideDownIsRefusedNamingTheKey) {
  auto doc = config::Document::load_file(std::string(CARDIO_SOURCE_DIR) + "/configs/biv_closed_loop.yaml");
  doc->set_override("circulation.closed_loop.afterload.aortic_systolic_pressure=80 mmHg");
  doc->set_override("circulation.closed_loop.afterload.aortic_diastolic_pressure=120 mmHg");
  try {
    (void)pipeline::parse_heart_config(*doc);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("circulation.closed_loop.afterload.aortic_diastolic_pressure (120 mmHg) must "
                                         "be below aortic_systolic_pressure (80 mmHg)"),
              std::string::npos)
        << e.what();
  }
}

// The fill and the afterload calibration in one run of two beats: both act at the second onset.
TEST(ClosedLoopBeat, FillAndAfterloadActAtTheSecondOnsetAndConserveTheRest) {
  const fs::path out = fs::temp_directory_path() / ("cardio_closed_loop_fill_" + std::to_string(::getpid()));
  std::ostringstream log;
  const pipeline::BeatRunResult r =
      run_biventricle({"simulation.beats=2", "circulation.closed_loop.fill.lv_end_diastolic_pressure=9 mmHg",
                       "circulation.closed_loop.afterload.aortic_systolic_pressure=120 mmHg",
                       "circulation.closed_loop.afterload.aortic_diastolic_pressure=80 mmHg"},
                      out, log);

  // Measured once, at the onset of beat 2 (the first onset ends a partial diastole from rest).
  const auto& circ = r.summary["circulation"];
  const auto& fill = circ["fill"];
  ASSERT_EQ(fill["beats"].size(), 1u);
  EXPECT_EQ(fill["beats"][0]["beat"], 2);
  const double edp = fill["beats"][0]["lv_EDP_mmHg"].get<double>();
  EXPECT_EQ(edp, r.summary["cavities"][0]["beats"][1]["EDP_mmHg"].get<double>());
  // The first step raises the vessels' pressures by the EDP's shortfall: (9 mmHg - EDP) sum C (below the 10 mmHg a beat
  // cap), with the compliances of Regazzoni et al. (1.2 + 60 + 10 + 16 mL/mmHg).
  const double added = circ["blood_volume_added_mL"].get<double>();
  EXPECT_NEAR(added, (9.0 - edp) * 87.2, 1e-9 * std::abs(added));
  EXPECT_NE(log.str().find("blood fill: beat 2 began at LV EDP"), std::string::npos);
  const double blood0 = circ["blood_volume_initial_mL"].get<double>();
  EXPECT_NEAR(circ["blood_volume_final_mL"].get<double>(), blood0 + added, 1e-9 * blood0);
  EXPECT_LT(circ["max_blood_volume_change_relative"].get<double>(), 1e-9);

  // timeseries.csv: the blood volume is constant but for one jump by `added`, at beat 2's onset.
  auto col = test_support::read_columns(out / "timeseries.csv");
  int jumps = 0;
  for (std::size_t i = 1; i < col["time_ms"].size(); ++i) {
    const double step = std::stod(col["blood_volume_mL"][i]) - std::stod(col["blood_volume_mL"][i - 1]);
    if (std::abs(step) > 1e-9 * blood0) {
      ++jumps;
      EXPECT_NEAR(step, added, 1e-9 * blood0) << "t = " << col["time_ms"][i];
      EXPECT_NEAR(std::stod(col["time_ms"][i]), 1000.0, 1.0);  // first_onset 200 ms + one period 800 ms
    }
  }
  EXPECT_EQ(jumps, 1);

  // The afterload: beat 1 measured with the config's arteries (Regazzoni et al.: 0.8 mmHg s/mL,
  // 1.2 mL/mmHg); its cardiac output is the aortic valve's flow, which must be the 3-D LV's stroke
  // volume (the cavity's EDV - ESV) per period: valves closed but for the aortic in ejection.
  const auto& afterload = circ["afterload"];
  ASSERT_EQ(afterload["beats"].size(), 1u);
  const auto& measured = afterload["beats"][0];
  EXPECT_EQ(measured["beat"], 1);
  EXPECT_DOUBLE_EQ(measured["resistance_mmHg_s_per_mL"].get<double>(), 0.8);
  EXPECT_DOUBLE_EQ(measured["compliance_mL_per_mmHg"].get<double>(), 1.2);
  const auto& beat1 = r.summary["cavities"][0]["beats"][0];
  const double sv = beat1["EDV_mL"].get<double>() - beat1["ESV_mL"].get<double>();
  EXPECT_NEAR(measured["cardiac_output_L_per_min"].get<double>(), sv * 75.0 / 1000.0, 0.01 * sv * 75.0 / 1000.0);
  EXPECT_NE(afterload["systemic_arteries"]["compliance_mL_per_mmHg"].get<double>(), 1.2);
  EXPECT_NE(log.str().find("afterload: beat 1 aortic"), std::string::npos);
  // The clinical comparison says which of its values the afterload set: they are inputs of the run.
  std::map<std::string, std::string> calibrated_by;
  for (const auto& q : r.summary["clinical_comparison"])
    if (q.contains("calibrated_by")) calibrated_by[q["quantity"].get<std::string>()] = q["calibrated_by"];
  EXPECT_EQ(calibrated_by,
            (std::map<std::string, std::string>{{"LV peak pressure", "circulation.closed_loop.afterload"},
                                                {"aortic diastolic pressure", "circulation.closed_loop.afterload"}}));
  fs::remove_all(out);
}

}  // namespace
