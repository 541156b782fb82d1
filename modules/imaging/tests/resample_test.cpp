// Resampling: grid extent, exact majority votes on 2x2x2 blocks, nearest lookup, and the
// structure-tensor average of sign-ambiguous fibre axes.
#include "cardio/imaging/resample.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <random>

#include "test_util.hpp"

namespace cardio::imaging {
namespace {

using test::oblique_direction;

/// Corners of the box covered by the voxels (centres +- half a voxel), physical.
std::pair<Eigen::Vector3d, Eigen::Vector3d> box(const Grid& g) {
  const Eigen::Vector3d lo = g.point(Eigen::Vector3d::Constant(-0.5));
  const Eigen::Vector3d hi = g.point(Eigen::Vector3d(double(g.size[0]), double(g.size[1]), double(g.size[2])) -
                                     Eigen::Vector3d::Constant(0.5));
  return {lo, hi};
}

TEST(ResampledGrid, CoversTheSameBox) {
  Grid s;
  s.size = {10, 10, 4};
  s.spacing = Eigen::Vector3d(0.7, 0.7, 2.5);
  s.origin = Eigen::Vector3d(-3, 4, 17);
  s.direction = oblique_direction();
  const Grid t = resampled_grid(s, 1.0);
  EXPECT_EQ(t.size, (Index3{7, 7, 10}));
  EXPECT_EQ(t.spacing, Eigen::Vector3d::Constant(1.0));
  EXPECT_EQ(t.direction, s.direction);
  const auto [slo, shi] = box(s);
  const auto [tlo, thi] = box(t);
  EXPECT_LT((slo - tlo).norm(), 1e-9);
  EXPECT_LT((shi - thi).norm(), 1e-9);
  // origin = centre of the first new voxel = box corner + half a new voxel along each axis
  EXPECT_LT((t.origin - (slo + s.direction * Eigen::Vector3d::Constant(0.5))).norm(), 1e-9);

  // Extent 7.5 mm with 2 mm elements: 4 elements (8 mm), centred, 0.25 mm overhang per side.
  Grid s2 = s;
  s2.size = {5, 5, 5};
  s2.spacing = Eigen::Vector3d::Constant(1.5);
  const Grid t2 = resampled_grid(s2, 2.0);
  EXPECT_EQ(t2.size, (Index3{4, 4, 4}));
  const auto [lo2, hi2] = box(s2);
  const Eigen::Vector3d overhang_lo = s2.direction.transpose() * (lo2 - box(t2).first);
  const Eigen::Vector3d overhang_hi = s2.direction.transpose() * (box(t2).second - hi2);
  EXPECT_LT((overhang_lo - Eigen::Vector3d::Constant(0.25)).norm(), 1e-9);
  EXPECT_LT((overhang_hi - Eigen::Vector3d::Constant(0.25)).norm(), 1e-9);
  test::expect_error([&] { resampled_grid(s, 0.0); }, {"element size"});
}

TEST(ResampleLabels, MajorityOfTwoByTwoBlocks) {
  Grid s;
  s.size = {8, 6, 4};
  s.origin = Eigen::Vector3d(5, -2, 1);
  s.direction = oblique_direction();
  LabelVolume src;
  src.grid = s;
  src.values.assign(static_cast<std::size_t>(s.n_voxels()), -1);
  std::mt19937 rng(1234);
  std::vector<std::int32_t> expected;
  for (int K = 0; K < 2; ++K)
    for (int J = 0; J < 3; ++J)
      for (int I = 0; I < 4; ++I) {
        const std::int32_t winner = (I + 2 * J + 3 * K) % 5 + 1;
        std::vector<std::int32_t> block(8, winner);
        const bool tie = I == 1 && J == 2 && K == 1;
        if (tie) {  // 4 x 7 vs 4 x 3: the smaller label wins
          block = {7, 3, 7, 3, 3, 7, 7, 3};
          expected.push_back(3);
        } else {  // 5 winners, 3 assorted others (at most 2 of a kind)
          block[0] = 10 + winner;
          block[1] = 20;
          block[2] = 20;
          std::shuffle(block.begin(), block.end(), rng);
          expected.push_back(winner);
        }
        int n = 0;
        for (int dk = 0; dk < 2; ++dk)
          for (int dj = 0; dj < 2; ++dj)
            for (int di = 0; di < 2; ++di) src.at(2 * I + di, 2 * J + dj, 2 * K + dk) = block[n++];
      }
  const Grid t = resampled_grid(s, 2.0);
  ASSERT_EQ(t.size, (Index3{4, 3, 2}));
  EXPECT_LT((t.origin - s.point(Eigen::Vector3d::Constant(0.5))).norm(), 1e-12);
  const LabelVolume out = resample_labels(src, t, LabelVote::majority);
  EXPECT_EQ(out.values, expected);

  // Same grid, nearest: identity. Finer grid: every target voxel has its containing source label.
  EXPECT_EQ(resample_labels(src, s, LabelVote::nearest).values, src.values);
  const Grid fine = resampled_grid(s, 0.5);
  for (LabelVote vote : {LabelVote::majority, LabelVote::nearest}) {
    const LabelVolume f = resample_labels(src, fine, vote);
    for (std::int64_t n = 0; n < fine.n_voxels(); ++n) {
      const Index3 q = fine.index(n);
      EXPECT_EQ(f.values[static_cast<std::size_t>(n)], src.at(q[0] / 2, q[1] / 2, q[2] / 2)) << n;
    }
  }
  // A target grid beyond the source box is background.
  Grid far = s;
  far.origin += s.direction.col(0) * 100.0;
  const LabelVolume outside = resample_labels(src, far, LabelVote::majority);
  EXPECT_EQ(outside.values, std::vector<std::int32_t>(static_cast<std::size_t>(far.n_voxels()), 0));
}

/// A smooth unit field: the fibre helix angle turns slowly along x, tilts slowly along y.
Eigen::Vector3d field(const Eigen::Vector3d& x) {
  const double a = 0.08 * x.x() + 0.3, e = 0.4 + 0.03 * x.y();
  return Eigen::Vector3d(std::cos(e) * std::cos(a), std::cos(e) * std::sin(a), std::sin(e));
}

TEST(ResampleAxes, StructureTensorIgnoresSignFlipsAndMaskedVoxels) {
  Grid s;
  s.size = {24, 20, 16};
  s.spacing = Eigen::Vector3d(1.0, 1.0, 1.0);
  s.origin = Eigen::Vector3d(-10, 3, 2);
  s.direction = oblique_direction();
  VectorVolume src;
  src.grid = s;
  std::mt19937 rng(20240601);
  std::bernoulli_distribution flip(0.5);
  std::normal_distribution<float> noise(0.f, 1.f);
  LabelVolume mask;
  mask.grid = s;
  for (std::int64_t n = 0; n < s.n_voxels(); ++n) {
    const Index3 q = s.index(n);
    const bool inside = q[0] < 12;
    mask.values.push_back(inside ? 3 : 9);
    Eigen::Vector3f v = field(s.point(q[0], q[1], q[2])).cast<float>() * (flip(rng) ? -1.f : 1.f);
    if (!inside) v = Eigen::Vector3f(noise(rng), noise(rng), noise(rng));  // garbage outside the mask
    src.values.push_back(v);
  }
  // Invalid vectors inside the mask are ignored.
  src.values[static_cast<std::size_t>(s.linear(2, 2, 2))].setZero();
  src.values[static_cast<std::size_t>(s.linear(5, 3, 7))] = Eigen::Vector3f(NAN, 0, 0);

  const Grid t = resampled_grid(s, 2.0);
  ASSERT_EQ(t.size, (Index3{12, 10, 8}));
  const VectorVolume out = resample_axes(src, t, AxisMask{&mask, {3}});
  int checked = 0;
  for (std::int64_t n = 0; n < t.n_voxels(); ++n) {
    const Index3 q = t.index(n);
    const Eigen::Vector3d v = out.values[static_cast<std::size_t>(n)].cast<double>();
    if (q[0] < 6) {
      EXPECT_NEAR(v.norm(), 1.0, 1e-6);
      EXPECT_GT(std::abs(v.dot(field(t.point(q[0], q[1], q[2])))), 0.999) << q[0] << " " << q[1] << " " << q[2];
      ++checked;
    } else {
      EXPECT_EQ(v, Eigen::Vector3d::Zero()) << "masked-out region must stay empty";
    }
  }
  EXPECT_EQ(checked, 6 * 10 * 8);

  // Unmasked, same grid: each voxel keeps its own (normalised) axis, sign included.
  const VectorVolume same = resample_axes(src, s);
  for (std::int64_t n = 0; n < s.n_voxels(); ++n) {
    const Eigen::Vector3f& in = src.values[static_cast<std::size_t>(n)];
    const Eigen::Vector3f& o = same.values[static_cast<std::size_t>(n)];
    if (in.allFinite() && in.squaredNorm() > 0)
      EXPECT_LT((o - in.normalized()).norm(), 1e-6);
    else
      EXPECT_EQ(o, Eigen::Vector3f::Zero());
  }
  LabelVolume wrong = mask;
  wrong.grid.spacing.x() = 2.0;
  test::expect_error([&] { resample_axes(src, t, AxisMask{&wrong, {}}); }, {"mask", "spacing"});
}

TEST(ResampleLabels, TwoMillionVoxelsInSeconds) {
  Grid s;
  s.size = {160, 160, 80};  // 2.05 M voxels
  s.spacing = Eigen::Vector3d(0.7, 0.7, 1.5);
  LabelVolume src;
  src.grid = s;
  src.values.resize(static_cast<std::size_t>(s.n_voxels()));
  const Eigen::Vector3d c = s.point(80, 80, 40);
  for (std::int64_t n = 0; n < s.n_voxels(); ++n) {
    const Index3 q = s.index(n);
    const double r = (s.point(q[0], q[1], q[2]) - c).norm();
    src.values[static_cast<std::size_t>(n)] = r < 30 ? 1 : (r < 40 ? 2 : 0);
  }
  VectorVolume fib;
  fib.grid = s;
  fib.values.assign(src.values.size(), Eigen::Vector3f(0, 0, 1));
  const Grid t = resampled_grid(s, 1.0);
  const LabelVolume out = resample_labels(src, t, LabelVote::majority);
  const VectorVolume axes = resample_axes(fib, t);
  // Sphere volumes are preserved to within a voxel layer.
  std::int64_t n1 = 0;
  for (std::int32_t l : out.values) n1 += l == 1;
  const double v1 = double(n1) * t.voxel_volume(), exact = 4.0 / 3.0 * std::numbers::pi * 30 * 30 * 30;
  EXPECT_NEAR(v1 / exact, 1.0, 0.03);
  std::int64_t wrong = 0;
  for (const auto& a : axes.values) wrong += a != Eigen::Vector3f(0, 0, 1);
  EXPECT_EQ(wrong, 0);
}

}  // namespace
}  // namespace cardio::imaging
