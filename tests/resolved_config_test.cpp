// A run's config.resolved.yaml runs again as it is: parsed back, it gives the same label roles
// as the config it was written from (it records roles.myocardium, but the cavities of a surface's
// endocardia or of a phantom are the source's own).
#include <gtest/gtest.h>

#include "cardio/config/config.hpp"
#include "config/mesh_config.hpp"

namespace cardio {
namespace {

struct Parsed {
  pipeline::LabelRoles roles;
  std::string resolved;
};

Parsed parse(const std::string& yaml) {
  auto doc = config::Document::load_string(yaml, "case.yaml");
  Parsed p;
  p.roles = pipeline::parse_mesh_config(*doc).geometry.roles;
  p.resolved = doc->resolved_yaml();
  return p;
}

void expect_same_roles_after_resolving(const std::string& yaml, std::size_t n_cavities) {
  const Parsed first = parse(yaml);
  ASSERT_EQ(first.roles.cavities.size(), n_cavities);
  const Parsed again = parse(first.resolved);
  EXPECT_EQ(again.roles.myocardium, first.roles.myocardium);
  EXPECT_EQ(again.roles.cavities, first.roles.cavities) << first.resolved;
}

TEST(ResolvedConfig, SurfaceEndocardiaStayCavities) {
  expect_same_roles_after_resolving(
      "geometry:\n  source: surface\n  surface:\n    file: heart.vtp\n    voxel_size: 2 mm\n    class_array: class\n"
      "    base_class: 1\n    epicardium_class: 2\n    endocardia:\n      - {class: 3, cavity: lv}\n"
      "      - {class: 4, cavity: rv}\nfibres: {source: rule}\n",
      2);
}

TEST(ResolvedConfig, PhantomPoolsStayCavities) {
  expect_same_roles_after_resolving(
      "geometry:\n  source: phantom\n  phantom: {kind: biventricular, voxel_size: 2 mm}\nfibres: {source: phantom}\n",
      2);
}

TEST(ResolvedConfig, AnImageKeepsTheCavitiesItWasGiven) {
  expect_same_roles_after_resolving(
      "geometry:\n  source: image\n  labels: heart.nrrd\n  roles:\n    myocardium: [1]\n"
      "    cavities: [{name: lv, labels: [2]}]\nfibres: {source: rule}\n",
      1);
}

}  // namespace
}  // namespace cardio
