#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <cmath>
#include <functional>
#include <limits>

#include "cardio/core/error.hpp"
#include "cardio/fibres/frames.hpp"

namespace cardio::fibres {
namespace {

using imaging::RoleVolume;

/// 4 x 3 x 2 grid; myocardium everywhere except voxel (0,0,0) (cavity) and (3,2,1) (outside).
RoleVolume small_roles() {
  RoleVolume r;
  imaging::Grid g;
  g.size = {4, 3, 2};
  g.spacing = {0.5, 0.7, 0.9};
  g.origin = {1, 2, 3};
  r.role.grid = g;
  r.role.values.assign(std::size_t(g.n_voxels()), RoleVolume::kMyocardium);
  r.role.at(0, 0, 0) = RoleVolume::cavity_role(0);
  r.role.at(3, 2, 1) = RoleVolume::kOutside;
  r.labels.grid = g;
  r.labels.values.assign(std::size_t(g.n_voxels()), 1);
  r.cavity_names = {"lv"};
  return r;
}

imaging::VectorVolume field(const imaging::Grid& g, unsigned seed) {
  imaging::VectorVolume v;
  v.grid = g;
  std::srand(seed);
  for (std::int64_t i = 0; i < g.n_voxels(); ++i) v.values.push_back(Eigen::Vector3f::Random());
  return v;
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const cardio::Error& e) {
    return e.what();
  }
  return "";
}

TEST(FramesFromVectors, NormalisesAndOrthogonalises) {
  const RoleVolume roles = small_roles();
  const auto fib = field(roles.role.grid, 1), sh = field(roles.role.grid, 2);
  const imaging::VoxelFrames fr = frames_from_vectors(roles, fib, &sh, nullptr, "test");
  ASSERT_EQ(fr.voxels.size(), 22u);
  EXPECT_EQ(fr.voxels.front(), 1);
  std::string why;
  EXPECT_TRUE(check_frames(fr, 1e-12, &why)) << why;
  for (std::size_t m = 0; m < fr.voxels.size(); ++m) {
    const Eigen::Vector3d f = fib.values[std::size_t(fr.voxels[m])].cast<double>().normalized();
    EXPECT_NEAR((fr.fibre.col(Eigen::Index(m)) - f).norm(), 0, 1e-12);
    // The sheet stays in the plane of f and the given sheet.
    const Eigen::Vector3d s0 = sh.values[std::size_t(fr.voxels[m])].cast<double>();
    EXPECT_NEAR(fr.sheet.col(Eigen::Index(m)).dot(f.cross(s0)), 0, 1e-12);
    EXPECT_GT(fr.sheet.col(Eigen::Index(m)).dot(s0), 0);
  }
}

TEST(FramesFromVectors, SignAndScaleDoNotChangeAxes) {
  const RoleVolume roles = small_roles();
  auto fib = field(roles.role.grid, 3), sh = field(roles.role.grid, 4);
  const imaging::VoxelFrames a = frames_from_vectors(roles, fib, &sh, nullptr, "a");
  for (std::size_t v = 0; v < fib.values.size(); ++v) {
    sh.values[v] = -3.0f * sh.values[v] + 0.8f * fib.values[v];  // flipped, scaled, not orthogonal
    fib.values[v] *= (v % 2 ? -2.5f : 0.1f);
  }
  const imaging::VoxelFrames b = frames_from_vectors(roles, fib, &sh, nullptr, "b");
  for (Eigen::Index m = 0; m < a.fibre.cols(); ++m) {
    EXPECT_NEAR(std::abs(a.fibre.col(m).dot(b.fibre.col(m))), 1.0, 1e-6);
    EXPECT_NEAR(std::abs(a.sheet.col(m).dot(b.sheet.col(m))), 1.0, 1e-6);
    const Eigen::Vector3d na = a.fibre.col(m).cross(a.sheet.col(m)), nb = b.fibre.col(m).cross(b.sheet.col(m));
    EXPECT_NEAR(std::abs(na.dot(nb)), 1.0, 1e-6);
  }
}

TEST(FramesFromVectors, InvalidVectorsNameCountAndFirstVoxel) {
  const RoleVolume roles = small_roles();
  auto fib = field(roles.role.grid, 5);
  fib.at(2, 1, 0) = Eigen::Vector3f(std::numeric_limits<float>::quiet_NaN(), 0, 0);
  fib.at(1, 2, 1) = Eigen::Vector3f::Zero();
  fib.at(0, 0, 0) = Eigen::Vector3f::Zero();  // the cavity voxel does not count
  const std::string msg = message_of([&] { frames_from_vectors(roles, fib, nullptr, nullptr, "fibres.nrrd"); });
  EXPECT_NE(msg.find("fibres.nrrd"), std::string::npos) << msg;
  EXPECT_NE(msg.find("2 myocardium voxels"), std::string::npos) << msg;
  EXPECT_NE(msg.find("(2,1,0)"), std::string::npos) << msg;

  // A sheet parallel to the fibre is invalid too.
  fib = field(roles.role.grid, 5);
  auto sh = field(roles.role.grid, 6);
  sh.at(3, 0, 1) = -2.0f * fib.at(3, 0, 1);
  const std::string msg2 = message_of([&] { frames_from_vectors(roles, fib, &sh, nullptr, "dti"); });
  EXPECT_NE(msg2.find("1 myocardium voxel has"), std::string::npos) << msg2;
  EXPECT_NE(msg2.find("(3,0,1)"), std::string::npos) << msg2;
}

TEST(FramesFromVectors, FillTakesFramesAndSheets) {
  const RoleVolume roles = small_roles();
  const auto fill_fib = field(roles.role.grid, 7), fill_sh = field(roles.role.grid, 8);
  const imaging::VoxelFrames fill = frames_from_vectors(roles, fill_fib, &fill_sh, nullptr, "rule");
  auto fib = field(roles.role.grid, 9);
  fib.at(2, 1, 0) = Eigen::Vector3f(0, std::numeric_limits<float>::infinity(), 0);
  fib.at(1, 2, 1) = Eigen::Vector3f::Zero();
  std::int64_t filled = -1;
  const imaging::VoxelFrames fr = frames_from_vectors(roles, fib, nullptr, &fill, "dti", &filled);
  EXPECT_EQ(filled, 2);
  std::string why;
  EXPECT_TRUE(check_frames(fr, 1e-12, &why)) << why;
  for (std::size_t m = 0; m < fr.voxels.size(); ++m) {
    const auto ijk = roles.role.grid.index(fr.voxels[m]);
    const bool was_bad = (ijk == imaging::Index3{2, 1, 0}) || (ijk == imaging::Index3{1, 2, 1});
    const Eigen::Index c = Eigen::Index(m);
    if (was_bad) {
      EXPECT_EQ(fr.fibre.col(c), fill.fibre.col(c));
      EXPECT_EQ(fr.sheet.col(c), fill.sheet.col(c));
    } else {
      // Sheet from the fill frame, orthogonalised against the imported fibre.
      const Eigen::Vector3d f = fr.fibre.col(c);
      const Eigen::Vector3d expect = (fill.sheet.col(c) - fill.sheet.col(c).dot(f) * f).normalized();
      EXPECT_NEAR((fr.sheet.col(c) - expect).norm(), 0, 1e-12);
    }
  }
}

TEST(FramesFromVectors, DeterministicPerpendicularWithoutSheet) {
  const RoleVolume roles = small_roles();
  auto fib = field(roles.role.grid, 10);
  fib.at(1, 0, 0) = Eigen::Vector3f(0, 0, 3);
  const imaging::VoxelFrames fr = frames_from_vectors(roles, fib, nullptr, nullptr, "f");
  std::string why;
  EXPECT_TRUE(check_frames(fr, 1e-12, &why)) << why;
  EXPECT_EQ(fr.voxels[0], 1);
  EXPECT_NEAR((fr.sheet.col(0) - Eigen::Vector3d(1, 0, 0)).norm(), 0, 1e-15);  // e_x: lowest index tie
}

TEST(FramesFromVectors, GridMismatchNamesTheDifference) {
  const RoleVolume roles = small_roles();
  auto fib = field(roles.role.grid, 11);
  fib.grid.spacing.x() = 0.6;
  std::string msg = message_of([&] { frames_from_vectors(roles, fib, nullptr, nullptr, "fib.nii"); });
  EXPECT_NE(msg.find("spacing"), std::string::npos) << msg;
  EXPECT_NE(msg.find("fib.nii"), std::string::npos) << msg;
  fib = field(roles.role.grid, 11);
  auto sh = field(roles.role.grid, 12);
  sh.grid.origin.z() += 1.0;
  msg = message_of([&] { frames_from_vectors(roles, fib, &sh, nullptr, "sheet.nii"); });
  EXPECT_NE(msg.find("origin"), std::string::npos) << msg;
  EXPECT_NE(msg.find("sheet volume"), std::string::npos) << msg;
  fib.grid.size[2] = 3;
  msg = message_of([&] { frames_from_vectors(roles, fib, nullptr, nullptr, "f"); });
  EXPECT_NE(msg.find("size"), std::string::npos) << msg;
}

TEST(CheckFrames, ReportsViolations) {
  imaging::VoxelFrames fr;
  fr.voxels = {3, 5};
  fr.fibre = Eigen::Matrix3Xd::Zero(3, 2);
  fr.sheet = Eigen::Matrix3Xd::Zero(3, 2);
  fr.fibre.col(0) = Eigen::Vector3d(1, 0, 0);
  fr.sheet.col(0) = Eigen::Vector3d(0, 1, 0);
  fr.fibre.col(1) = Eigen::Vector3d(0, 0, 1);
  fr.sheet.col(1) = Eigen::Vector3d(1, 0, 0);
  std::string why;
  EXPECT_TRUE(check_frames(fr, 1e-12, &why));
  fr.sheet.col(1) = Eigen::Vector3d(1, 0, 0.01).normalized();
  EXPECT_FALSE(check_frames(fr, 1e-6, &why));
  EXPECT_NE(why.find("voxel 5"), std::string::npos) << why;
  fr.sheet.col(1) = Eigen::Vector3d(2, 0, 0);
  EXPECT_FALSE(check_frames(fr, 1e-6, &why));
  EXPECT_NE(why.find("|s|"), std::string::npos) << why;
  fr.sheet.col(1) = Eigen::Vector3d(1, 0, 0);
  fr.voxels = {5, 5};
  EXPECT_FALSE(check_frames(fr, 1e-6, &why));
}

}  // namespace
}  // namespace cardio::fibres
