// Blood pools derived from myocardium masks whose cavity labels were erased: the reference is the
// erased labels themselves (an independent count), never the code under test.
#include "cardio/imaging/derive_cavities.hpp"

#include <gtest/gtest.h>

#include <functional>

#include "test_util.hpp"

namespace cardio::imaging {
namespace {

constexpr std::int32_t kWall = 1, kLv = 2, kRvWall = 3, kRv = 4;

/// Labels of f(physical point) on a grid of `n` voxels centred on `centre`.
LabelVolume make_labels(const Grid& g, const std::function<std::int32_t(const Eigen::Vector3d&)>& f) {
  LabelVolume v{g, std::vector<std::int32_t>(std::size_t(g.n_voxels()))};
  for (std::int64_t k = 0; k < g.size[2]; ++k)
    for (std::int64_t j = 0; j < g.size[1]; ++j)
      for (std::int64_t i = 0; i < g.size[0]; ++i) v.at(i, j, k) = f(g.point(i, j, k));
  return v;
}

Grid grid_around(const Eigen::Vector3d& half_extent, const Eigen::Vector3d& spacing, const Eigen::Matrix3d& dir) {
  Grid g;
  g.spacing = spacing;
  g.direction = dir;
  for (int a = 0; a < 3; ++a) g.size[std::size_t(a)] = 2 * std::int64_t(std::ceil(half_extent[a] / spacing[a])) + 1;
  g.origin =
      -dir * spacing.cwiseProduct(Eigen::Vector3d((g.size[0] - 1) / 2.0, (g.size[1] - 1) / 2.0, (g.size[2] - 1) / 2.0));
  return g;
}

double ellipsoid(const Eigen::Vector3d& x, const Eigen::Vector3d& centre, const Eigen::Vector3d& semi) {
  return (x - centre).cwiseQuotient(semi).squaredNorm();
}

/// An LV-like cup: prolate shell endo (8, 8, 18), epi (11, 11, 21) mm, cut open at z = 5 mm.
std::int32_t lv_cup(const Eigen::Vector3d& x) {
  if (x.z() >= 5) return 0;
  if (ellipsoid(x, {0, 0, 0}, {8, 8, 18}) < 1) return kLv;
  return ellipsoid(x, {0, 0, 0}, {11, 11, 21}) < 1 ? kWall : 0;
}

/// The cup plus an RV: a thinner shell on the +x side (endo (13, 15, 18), epi (15, 17, 20) about
/// (7, 0, 0)) wrapped around the LV's epicardium, so its cavity is a crescent.
std::int32_t biventricular(const Eigen::Vector3d& x) {
  const std::int32_t lv = lv_cup(x);
  if (lv != 0 || x.z() >= 5) return lv;
  if (ellipsoid(x, {7, 0, 0}, {13, 15, 18}) < 1) return kRv;
  return ellipsoid(x, {7, 0, 0}, {15, 17, 20}) < 1 ? kRvWall : 0;
}

/// Roles with only the myocardium (the cavity labels erased).
RoleVolume myocardium_only(const LabelVolume& labels) {
  RoleVolume r;
  r.role.grid = labels.grid;
  r.role.values.assign(labels.values.size(), RoleVolume::kOutside);
  for (std::size_t v = 0; v < labels.values.size(); ++v)
    if (labels.values[v] == kWall || labels.values[v] == kRvWall) r.role.values[v] = RoleVolume::kMyocardium;
  r.labels = labels;
  return r;
}

std::int64_t count(const LabelVolume& labels, std::int32_t label) {
  return std::count(labels.values.begin(), labels.values.end(), label);
}

/// Derived voxels of cavity c that carry `label` in the original labels.
std::int64_t overlap(const RoleVolume& r, std::size_t c, const LabelVolume& labels, std::int32_t label) {
  std::int64_t n = 0;
  for (std::size_t v = 0; v < labels.values.size(); ++v)
    n += r.role.values[v] == RoleVolume::cavity_role(c) && labels.values[v] == label;
  return n;
}

TEST(DeriveCavities, CupOnAnObliqueAnisotropicGridGivesTheErasedCavity) {
  const Grid g = grid_around({16, 16, 26}, {0.7, 0.8, 1.0}, test::oblique_direction());
  const LabelVolume labels = make_labels(g, lv_cup);
  RoleVolume roles = myocardium_only(labels);
  const RoleVolume before = roles;
  const DerivedCavities d = derive_cavities(roles);
  for (const auto& c : d.cavities)
    std::cout << c.name << ": " << c.voxels << " voxels, cap " << c.cap_voxels << ", openings " << c.openings
              << ", enclosure " << c.enclosure << ", compactness " << c.compactness << "\n";
  std::cout << "erased " << count(labels, kLv) << "\n";
  ASSERT_EQ(d.cavities.size(), 1u);
  EXPECT_EQ(d.cavities[0].name, "lv");
  EXPECT_EQ(roles.cavity_names, std::vector<std::string>{"lv"});
  const double erased = double(count(labels, kLv));
  EXPECT_NEAR(double(d.cavities[0].voxels) / erased, 1.0, 0.03);
  EXPECT_GT(double(overlap(roles, 0, labels, kLv)) / erased, 0.97);
  EXPECT_EQ(d.cavities[0].openings, 1);
  EXPECT_NEAR(d.cavities[0].volume_mm3, double(d.cavities[0].voxels) * g.voxel_volume(), 1e-9);
  // The myocardium is exactly the input's; only outside voxels became cavity.
  for (std::size_t v = 0; v < labels.values.size(); ++v) {
    ASSERT_EQ(roles.role.values[v] == RoleVolume::kMyocardium, before.role.values[v] == RoleVolume::kMyocardium);
    if (roles.role.values[v] != before.role.values[v]) {
      ASSERT_EQ(before.role.values[v], RoleVolume::kOutside);
    }
  }
}

TEST(DeriveCavities, BiventricularPoolsAreLvAndRvByCompactness) {
  const Grid g = grid_around({24, 20, 24}, {0.8, 0.8, 0.8}, Eigen::Matrix3d::Identity());
  const LabelVolume labels = make_labels(g, biventricular);
  RoleVolume roles = myocardium_only(labels);
  const DerivedCavities d = derive_cavities(roles);
  for (const auto& c : d.cavities)
    std::cout << c.name << ": " << c.voxels << " voxels, cap " << c.cap_voxels << ", openings " << c.openings
              << ", enclosure " << c.enclosure << ", compactness " << c.compactness << "\n";
  std::cout << "erased lv " << count(labels, kLv) << ", rv " << count(labels, kRv) << "; ignored " << d.ignored_regions
            << " (" << d.ignored_volume_mm3 << " mm^3)\n";
  ASSERT_EQ(d.cavities.size(), 2u);
  EXPECT_EQ(roles.cavity_names, (std::vector<std::string>{"lv", "rv"}));
  EXPECT_GT(d.cavities[0].compactness, d.cavities[1].compactness);
  const double lv = double(count(labels, kLv)), rv = double(count(labels, kRv));
  EXPECT_NEAR(double(d.cavities[0].voxels) / lv, 1.0, 0.03);
  EXPECT_NEAR(double(d.cavities[1].voxels) / rv, 1.0, 0.03);
  EXPECT_GT(double(overlap(roles, 0, labels, kLv)) / lv, 0.97);
  EXPECT_GT(double(overlap(roles, 1, labels, kRv)) / rv, 0.97);
}

TEST(DeriveCavities, FlatSlabIsAnErrorSayingWhy) {
  const Grid g = grid_around({20, 20, 10}, {1, 1, 1}, Eigen::Matrix3d::Identity());
  RoleVolume roles =
      myocardium_only(make_labels(g, [](const Eigen::Vector3d& x) { return std::abs(x.z()) < 3 ? kWall : 0; }));
  test::expect_error([&] { derive_cavities(roles); },
                     {"no region is enclosed by the myocardium", "ball of radius 30 mm", "closing filled no"});
  EXPECT_TRUE(roles.cavity_names.empty());
}

TEST(DeriveCavities, BowlWiderThanTheClosingBallIsAnError) {
  // A hemispherical bowl of inner radius 30 mm, wall 3 mm: the opening (radius 30 mm) is wider
  // than a 20 mm ball, which rolls in and out: nothing is enclosed.
  const Grid g = grid_around({36, 36, 36}, {1.5, 1.5, 1.5}, Eigen::Matrix3d::Identity());
  const LabelVolume labels = make_labels(g, [](const Eigen::Vector3d& x) {
    if (x.z() >= 0) return 0;
    return x.norm() < 30 ? kLv : x.norm() < 33 ? kWall : 0;
  });
  RoleVolume roles = myocardium_only(labels);
  DeriveCavitiesOptions o;
  o.closing_radius_mm = 20;
  test::expect_error([&] { derive_cavities(roles, o); }, {"no region is enclosed", "radius 20 mm"});
  // A ball larger than the opening closes it: the bowl's inside is the pool.
  o.closing_radius_mm = 45;
  const DerivedCavities d = derive_cavities(roles, o);
  for (const auto& c : d.cavities)
    std::cout << c.name << ": " << c.voxels << " voxels, cap " << c.cap_voxels << ", openings " << c.openings
              << ", enclosure " << c.enclosure << ", compactness " << c.compactness << "\n";
  std::cout << "bowl " << count(labels, kLv) << "\n";
  ASSERT_EQ(d.cavities.size(), 1u);
  EXPECT_NEAR(double(d.cavities[0].voxels) / double(count(labels, kLv)), 1.0, 0.03);
}

}  // namespace
}  // namespace cardio::imaging
