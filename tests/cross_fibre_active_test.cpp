// The cross-fibre active stress keys (material.active_fraction_sheet, active_fraction_normal):
// parsed into the law, shown in the resolved config, refused out of [0, 1] and with the one-point
// element, whose kernel has no cross-fibre term. The element's stress itself is checked against
// the continuum reference in modules/mechanics/tests (sampled_axes_test.cpp).
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "cardio/config/config.hpp"
#include "cardio/core/error.hpp"
#include "config/heart_config.hpp"

using namespace cardio;

namespace {

std::string phantom_config() {
  std::ifstream in(std::string(CARDIO_SOURCE_DIR) + "/configs/lv_phantom.yaml");
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

/// The error message of parsing lv_phantom.yaml with `overrides`, or "" when it parses.
std::string parse_error(const std::vector<std::string>& overrides) {
  auto doc = config::Document::load_string(phantom_config(), "lv_phantom.yaml");
  for (const std::string& o : overrides) doc->set_override(o);
  try {
    (void)pipeline::parse_heart_config(*doc);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(CrossFibreActive, KeysReachTheLawAndTheResolvedConfig) {
  auto doc = config::Document::load_string(phantom_config(), "lv_phantom.yaml");
  doc->set_override("material.active_fraction_normal=0.4");
  const pipeline::HeartConfig cfg = pipeline::parse_heart_config(*doc);
  ASSERT_TRUE(cfg.simulation);
  EXPECT_EQ(cfg.simulation->material.law.cross_fibre.normal, 0.4);
  EXPECT_EQ(cfg.simulation->material.law.cross_fibre.sheet, 0.0);  // the default: fibre tension only
  const std::string resolved = doc->resolved_yaml();
  EXPECT_NE(resolved.find("active_fraction_normal: 0.4"), std::string::npos) << resolved;
  EXPECT_NE(resolved.find("active_fraction_sheet: 0"), std::string::npos) << resolved;
}

TEST(CrossFibreActive, OutOfRangeFractionsAreRefusedByName) {
  EXPECT_NE(parse_error({"material.active_fraction_sheet=1.5"}).find("active_fraction_sheet"), std::string::npos);
  EXPECT_NE(parse_error({"material.active_fraction_normal=-0.1"}).find("active_fraction_normal"), std::string::npos);
  EXPECT_EQ(parse_error({"material.active_fraction_sheet=1", "material.active_fraction_normal=0"}), "");
}

TEST(CrossFibreActive, TheOnePointElementRefusesThem) {
  const std::string error = parse_error({"material.element=one_point", "material.active_fraction_normal=0.4"});
  EXPECT_NE(error.find("active_fraction_normal"), std::string::npos) << error;
  EXPECT_NE(error.find("sampled_axes"), std::string::npos) << error;
}

}  // namespace
