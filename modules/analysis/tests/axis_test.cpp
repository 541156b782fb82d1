// The axial apex (axis.hpp): where the long axis leaves the cavity towards the apex, on the Land et
// al. 2015 LV phantom (endocardial apex at z = -17 mm on the z axis), and its equivariance: the
// apex of a turned and moved heart is the turned and moved apex.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "cardio/analysis/axis.hpp"
#include "land_lv_mesh.hpp"

namespace cardio::analysis {
namespace {

TEST(AxialApex, IsTheEndocardialApexOfTheLandPhantom) {
  // Voxels of 22/21 mm put a face at z = -17 mm: the staircase's bottom face is the ellipsoid's apex.
  const meshing::VoxelMesh vm = testing::land_lv_mesh(22.0 / 21.0);
  const Eigen::Vector3d apex = axial_apex(vm.cavities[0], vm.mesh.rest, Eigen::Vector3d(0, 0, 1));
  EXPECT_LT((apex - Eigen::Vector3d(0, 0, -17)).norm(), 1e-9) << apex.transpose();
}

TEST(AxialApex, TurnsAndMovesWithTheHeart) {
  const meshing::VoxelMesh vm = testing::land_lv_mesh(1.0);
  const Eigen::Vector3d tilt = Eigen::Vector3d(0.1, -0.05, 1).normalized();  // off the grid's axes
  const Eigen::Vector3d apex = axial_apex(vm.cavities[0], vm.mesh.rest, tilt);
  const Eigen::Matrix3d R = Eigen::AngleAxisd(1.1, Eigen::Vector3d(1, 2, -0.5).normalized()).toRotationMatrix();
  const Eigen::Vector3d shift(310.5, -120.25, 42);
  const Eigen::Matrix3Xd moved = (R * vm.mesh.rest).colwise() + shift;
  const Eigen::Vector3d moved_apex = axial_apex(vm.cavities[0], moved, R * tilt);
  EXPECT_LT((moved_apex - (R * apex + shift)).norm(), 1e-9) << moved_apex.transpose();
  // With the tilted axis the crossing is still on the endocardium near the apex (r_l = 17 mm).
  EXPECT_LT(apex.norm(), 17.5);
  EXPECT_GT(apex.norm(), 16.0);
  EXPECT_LT(apex.z(), -16.0);
}

}  // namespace
}  // namespace cardio::analysis
