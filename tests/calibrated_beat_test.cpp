// The calibrated patient beat (configs/biv_calibrated.yaml, label `long`: about 5 minutes on 2
// cores), run as a user runs it. Checked against what is independent of the run's own controllers:
// the unloaded heart, beating in the closed loop filled to the image's LV pressure, fills the LV back
// to the image's cavity volume (mesh_report.json, measured on the imaged mesh) within 5 %; the blood
// volume less what the fill added is conserved to 1e-9; and the run stops periodic with the fill and
// the tension calibration both settled.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "test_support.hpp"

#ifndef CARDIAC_EXE
#error "CARDIAC_EXE (path of the cardiac executable) must be defined"
#endif

namespace fs = std::filesystem;
using namespace cardio;
using nlohmann::json;

namespace {

double image_cavity_volume_mL(const json& mesh_report, const std::string& cavity) {
  for (const json& c : mesh_report["cavities"])
    if (c["name"] == cavity) return c["cavity_volume_mL"].get<double>();
  ADD_FAILURE() << "mesh_report.json has no cavity " << cavity;
  return NAN;
}

TEST(CalibratedBeat, TheUnloadedHeartFilledToTheImagePressureRefillsTheImage) {
  test_support::TempDir dir("cardio_calibrated_");
  const std::string config = std::string(CARDIO_SOURCE_DIR) + "/configs/biv_calibrated.yaml";
  const fs::path out = dir.path() / "out";
  const auto r =
      test_support::run_command(test_support::shell_quote(CARDIAC_EXE) + " run " + test_support::shell_quote(config) +
                                    " -o " + test_support::shell_quote(out.string()) + " --no-figures 2>&1",
                                dir.path());
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_HAS(r.out, "periodic after");
  const json summary = json::parse(test_support::slurp(out / "summary.json"));
  const json report = json::parse(test_support::slurp(out / "mesh_report.json"));

  EXPECT_TRUE(summary["periodic_state"]["periodic"].get<bool>());
  EXPECT_TRUE(summary["circulation"]["fill"]["reached"].get<bool>());
  EXPECT_TRUE(summary["tension_calibration"]["reached"].get<bool>());
  EXPECT_LT(summary["circulation"]["max_blood_volume_change_relative"].get<double>(), 1e-9);

  const json& lv = summary["cavities"][0];
  ASSERT_EQ(lv["name"], "lv");
  const double image = image_cavity_volume_mL(report, "lv");
  const double edv = lv["EDV_mL"].get<double>();
  std::printf("LV EDV %.1f mL at %.2f mmHg; the image's LV %.1f mL at 8 mmHg\n", edv, lv["EDP_mmHg"].get<double>(),
              image);
  EXPECT_NEAR(edv, image, 0.05 * image);
}

}  // namespace
