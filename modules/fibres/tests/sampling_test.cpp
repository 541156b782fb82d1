// Fibre frames at arbitrary points from voxel frames (fibres/sampling.hpp): exact for a uniform
// field, sign-blind (f and -f voxels give the same fibre), and the structure-tensor mean between
// two voxels of different angle.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "cardio/fibres/sampling.hpp"

namespace cardio::fibres {
namespace {

// A 2 x 1 x 1 grid of unit voxels along x, both myocardium.
imaging::VoxelFrames two_voxels(const Eigen::Vector3d& f0, const Eigen::Vector3d& f1) {
  imaging::VoxelFrames v;
  v.voxels = {0, 1};
  v.fibre.resize(3, 2);
  v.sheet.resize(3, 2);
  v.fibre << f0, f1;
  v.sheet << Eigen::Vector3d::UnitZ(), Eigen::Vector3d::UnitZ();
  return v;
}

imaging::Grid line_grid() {
  imaging::Grid g;
  g.size = {2, 1, 1};
  g.spacing = Eigen::Vector3d::Ones();
  return g;
}

TEST(FibreSampling, MidpointBetweenTwoAnglesIsTheMeanAngleWhateverTheSigns) {
  const double a = 60 * std::numbers::pi / 180;
  const Eigen::Vector3d f0 = Eigen::Vector3d::UnitX(), f1(std::cos(a), std::sin(a), 0);
  Eigen::Matrix3Xd p(3, 2);
  p << Eigen::Vector3d(0.5, 0, 0), Eigen::Vector3d(0.25, 0, 0);
  for (double sign : {1.0, -1.0}) {
    const PointFrames pf = interpolate_frames(line_grid(), two_voxels(f0, sign * f1), p, {0, 0});
    // Midpoint: the principal axis of (f0 f0^T + f1 f1^T)/2 is at the mean angle a/2.
    EXPECT_NEAR(std::abs(pf.fibre.col(0).dot(Eigen::Vector3d(std::cos(a / 2), std::sin(a / 2), 0))), 1, 1e-12);
    // Quarter: weights 3/4, 1/4; principal angle theta with tan(2 theta) = sin(2a)/4 / (3/4 + cos(2a)/4).
    const double theta = 0.5 * std::atan2(0.25 * std::sin(2 * a), 0.75 + 0.25 * std::cos(2 * a));
    EXPECT_NEAR(std::abs(pf.fibre.col(1).dot(Eigen::Vector3d(std::cos(theta), std::sin(theta), 0))), 1, 1e-12);
    EXPECT_GT(pf.fibre.col(0).dot(f0), 0) << "oriented like the point's own voxel";
    EXPECT_NEAR(pf.sheet.col(0).dot(pf.fibre.col(0)), 0, 1e-12);
    EXPECT_NEAR(std::abs(pf.sheet.col(0).z()), 1, 1e-12);
  }
}

TEST(FibreSampling, OutsideVoxelsDoNotContribute) {
  // Only voxel 0 is myocardium: every point near it takes its frame exactly.
  imaging::VoxelFrames v;
  v.voxels = {0};
  v.fibre = Eigen::Vector3d(0, 1, 0);
  v.sheet = Eigen::Vector3d(0, 0, 1);
  Eigen::Matrix3Xd p(3, 1);
  p << Eigen::Vector3d(0.4, 0.2, -0.1);
  const PointFrames pf = interpolate_frames(line_grid(), v, p, {0});
  EXPECT_NEAR(pf.fibre.col(0).y(), 1, 1e-15);
}

}  // namespace
}  // namespace cardio::fibres
