// Thin walls (mesh_checks.hpp) on generated role volumes whose thin voxels can be counted by hand.
#include <gtest/gtest.h>

#include <functional>

#include "cardio/meshing/mesh_checks.hpp"

namespace cardio::meshing {
namespace {

using imaging::Grid;
using imaging::RoleVolume;

constexpr std::uint8_t kMyo = RoleVolume::kMyocardium, kLv = 2, kRv = 3, kOut = RoleVolume::kOutside;

RoleVolume roles_of(Grid g, const std::function<std::uint8_t(long, long, long)>& role_of) {
  RoleVolume r;
  r.role.grid = g;
  r.role.values.resize(std::size_t(g.n_voxels()));
  for (long k = 0; k < g.size[2]; ++k)
    for (long j = 0; j < g.size[1]; ++j)
      for (long i = 0; i < g.size[0]; ++i) r.role.at(i, j, k) = role_of(i, j, k);
  r.cavity_names = {"lv", "rv"};
  return r;
}

Grid grid(long nx, long ny, long nz, double h) {
  Grid g;
  g.size = {nx, ny, nz};
  g.spacing = Eigen::Vector3d::Constant(h);
  return g;
}

TEST(ThinWalls, OneVoxelSlabBetweenACavityAndTheOutside) {
  // Cavity i < 4, myocardium i = 4, outside i > 4: the whole slab (5 x 5 voxels) is one voxel thick.
  const RoleVolume r = roles_of(grid(9, 5, 5, 2.0), [](long i, long, long) {
    return i < 4 ? kLv : i == 4 ? kMyo : kOut;
  });
  const ThinWalls t = find_thin_walls(r, {});
  EXPECT_EQ(t.voxels, 25);
  ASSERT_EQ(t.walls.size(), 1u);
  EXPECT_EQ(t.walls[0].region_a, kOut);
  EXPECT_EQ(t.walls[0].region_b, kLv);
  EXPECT_EQ(t.walls[0].voxels, 25);
  EXPECT_EQ(t.walls[0].direct_contacts, 0);
  EXPECT_DOUBLE_EQ(t.walls[0].spacing_mm, 2.0);
  EXPECT_LT((t.walls[0].position_mm - Eigen::Vector3d(8, 4, 4)).norm(), 1e-12);  // the slab's centre voxel
}

TEST(ThinWalls, TwoVoxelSlabIsNotThin) {
  const RoleVolume r = roles_of(grid(9, 5, 5, 1.0), [](long i, long, long) {
    return i < 4 ? kLv : i <= 5 ? kMyo : kOut;
  });
  const ThinWalls t = find_thin_walls(r, {});
  EXPECT_EQ(t.voxels, 0);
  EXPECT_TRUE(t.walls.empty());
}

TEST(ThinWalls, DiagonalOneVoxelWallIsFound) {
  // Cavity i + j < 4, wall i + j = 4 (a 6-connected staircase: 5 voxels a layer), outside beyond.
  const RoleVolume r = roles_of(grid(9, 9, 3, 1.0), [](long i, long j, long) {
    return i + j < 4 ? kLv : i + j == 4 ? kMyo : kOut;
  });
  EXPECT_EQ(find_thin_walls(r, {}).voxels, 5 * 3);
}

TEST(ThinWalls, CavitiesTouchingDirectlyAreAZeroVoxelWall) {
  // LV i < 4, RV i >= 4 inside a myocardium shell one voxel from the border: 3 x 3 shared faces.
  const RoleVolume r = roles_of(grid(10, 5, 5, 1.0), [](long i, long j, long k) {
    const bool shell = i == 0 || i == 9 || j == 0 || j == 4 || k == 0 || k == 4;
    return shell ? kMyo : i < 4 ? kLv : kRv;
  });
  const ThinWalls t = find_thin_walls(r, {});
  EXPECT_EQ(t.direct_contacts, 9);
  // The shell itself is one voxel between each cavity and the border (outside): its faces.
  ASSERT_EQ(t.walls.size(), 3u);  // (outside, lv), (outside, rv), (lv, rv)
  EXPECT_EQ(t.walls[2].region_a, kLv);
  EXPECT_EQ(t.walls[2].region_b, kRv);
  EXPECT_EQ(t.walls[2].direct_contacts, 9);
  EXPECT_EQ(t.walls[2].voxels, 0);
  EXPECT_LT((t.walls[2].position_mm - Eigen::Vector3d(3.5, 2, 2)).norm(), 1e-12);
}

TEST(ThinWalls, TheRimOfABaseOpeningIsNotAWall) {
  // Myocardium layer k = 2 with the cavity below and the outside above: thin, unless its +k faces
  // are the base.
  const RoleVolume r = roles_of(grid(4, 4, 4, 1.0), [](long, long, long k) {
    return k < 2 ? kLv : k == 2 ? kMyo : kOut;
  });
  EXPECT_EQ(find_thin_walls(r, {}).voxels, 16);
  BoundaryClassification base;
  for (long j = 0; j < 4; ++j)
    for (long i = 0; i < 4; ++i) base.faces.push_back({r.role.grid.linear(i, j, 2), 5, SurfaceTag::kBase});
  EXPECT_EQ(find_thin_walls(r, base).voxels, 0);
}

TEST(ThinWalls, AnOpeningRimOffTheBasePlaneIsNotAWallButARoofFarBelowIs) {
  // Cavity k < 2, myocardium layer k = 2, outside above; one face of the layer is base (so the
  // boundary has a base), the other 15 voxels' top faces are not.
  const RoleVolume r = roles_of(grid(4, 4, 12, 1.0), [](long, long, long k) {
    return k < 2 ? kLv : k == 2 ? kMyo : kOut;
  });
  BoundaryClassification b;
  b.faces.push_back({r.role.grid.linear(0, 0, 2), 5, SurfaceTag::kBase});
  b.axis.base_normal = Eigen::Vector3d::UnitZ();
  b.axis.base_point = Eigen::Vector3d(0, 0, 3);  // the layer's centres 1 mm below: the rim
  EXPECT_EQ(find_thin_walls(r, b).voxels, 0);
  b.axis.base_point = Eigen::Vector3d(0, 0, 10);  // 8 mm below the base: a thin roof
  EXPECT_EQ(find_thin_walls(r, b).voxels, 15);
}

}  // namespace
}  // namespace cardio::meshing
