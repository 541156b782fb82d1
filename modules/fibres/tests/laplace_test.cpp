#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <cmath>
#include <limits>

#include "cardio/core/error.hpp"
#include "cardio/core/parallel.hpp"
#include "cardio/fibres/laplace.hpp"

namespace cardio::fibres {
namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();

/// Slab: all voxels of an oblique, anisotropic grid; Dirichlet 0 on the layer k = 0 and 1 on the
/// layer k = nk - 1; zero flux elsewhere. Closed form u = k / (nk - 1).
TEST(Laplace, SlabIsLinear) {
  imaging::Grid g;
  g.size = {7, 5, 24};
  g.spacing = {0.7, 1.1, 0.4};
  g.origin = {3, -2, 1};
  g.direction = Eigen::AngleAxisd(0.4, Eigen::Vector3d(1, -1, 2).normalized()).toRotationMatrix();
  std::vector<std::int64_t> all(std::size_t(g.n_voxels()));
  for (std::size_t v = 0; v < all.size(); ++v) all[v] = std::int64_t(v);
  const VoxelDomain d = VoxelDomain::build(g, all);
  std::vector<double> fixed(all.size(), kNaN);
  for (std::int64_t v = 0; v < g.n_voxels(); ++v) {
    const auto ijk = g.index(v);
    if (ijk[2] == 0) fixed[std::size_t(v)] = 0.0;
    if (ijk[2] == g.size[2] - 1) fixed[std::size_t(v)] = 1.0;
  }
  LaplaceSolverOptions opt;
  opt.tolerance = 1e-10;
  LaplaceStats st;
  const std::vector<double> u = solve_voxel_laplace(d, fixed, opt, &st);
  EXPECT_EQ(st.unknowns, 7 * 5 * 22);
  EXPECT_EQ(st.dirichlet, 7 * 5 * 2);
  EXPECT_LE(st.relative_residual, 1e-10);
  double worst = 0;
  for (std::int64_t v = 0; v < g.n_voxels(); ++v)
    worst = std::max(worst, std::abs(u[std::size_t(v)] - double(g.index(v)[2]) / double(g.size[2] - 1)));
  EXPECT_LT(worst, 1e-8);
  std::cout << "slab: " << st.iterations << " CG iterations, max |u - exact| = " << worst << "\n";

  // Gradient: constant 1 / (L) along the physical k axis (exact for a linear field, one-sided too).
  const Eigen::Matrix3Xd grad = voxel_gradient(d, u);
  const Eigen::Vector3d expect = g.direction.col(2) / (g.spacing[2] * double(g.size[2] - 1));
  for (Eigen::Index m = 0; m < grad.cols(); ++m) ASSERT_NEAR((grad.col(m) - expect).norm(), 0, 1e-7);
}

TEST(Laplace, HolesAreZeroFlux) {
  // A bar along i with a notch cut out of the domain: with zero flux through the notch walls, the
  // flux through every cross-section is the same.
  imaging::Grid g;
  g.size = {12, 6, 3};
  std::vector<std::int64_t> dom;
  for (std::int64_t v = 0; v < g.n_voxels(); ++v) {
    const auto ijk = g.index(v);
    if (ijk[0] >= 4 && ijk[0] <= 7 && ijk[1] >= 3) continue;  // notch
    dom.push_back(v);
  }
  const VoxelDomain d = VoxelDomain::build(g, dom);
  std::vector<double> fixed(dom.size(), kNaN);
  for (std::size_t m = 0; m < dom.size(); ++m) {
    const auto ijk = g.index(dom[m]);
    if (ijk[0] == 0) fixed[m] = 1.0;
    if (ijk[0] == 11) fixed[m] = 0.0;
  }
  LaplaceSolverOptions opt;
  opt.tolerance = 1e-12;
  const std::vector<double> u = solve_voxel_laplace(d, fixed, opt);
  std::vector<double> flux(11, 0.0);
  for (std::size_t m = 0; m < dom.size(); ++m) {
    const std::int32_t q = d.neighbours[m][1];
    if (q >= 0) flux[std::size_t(g.index(dom[m])[0])] += u[m] - u[std::size_t(q)];
  }
  for (double f : flux) EXPECT_NEAR(f, flux[0], 1e-9 * std::abs(flux[0]));
  // Values stay within the Dirichlet range (maximum principle).
  for (double x : u) {
    EXPECT_GE(x, -1e-12);
    EXPECT_LE(x, 1 + 1e-12);
  }
}

TEST(Laplace, UnanchoredRegionIsAnError) {
  imaging::Grid g;
  g.size = {6, 1, 1};
  const VoxelDomain d = VoxelDomain::build(g, {0, 1, 3, 4, 5});
  const std::vector<double> fixed = {0.0, kNaN, kNaN, kNaN, kNaN};
  LaplaceStats st;
  st.name = "psi_ab";
  try {
    solve_voxel_laplace(d, fixed, {}, &st);
    FAIL() << "expected an error";
  } catch (const cardio::Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("psi_ab"), std::string::npos) << msg;
    EXPECT_NE(msg.find("3 voxels"), std::string::npos) << msg;
    EXPECT_NE(msg.find("(3,0,0)"), std::string::npos) << msg;
  }
  EXPECT_THROW(VoxelDomain::build(g, {0, 2, 1}), cardio::Error);
}

TEST(Laplace, BitIdenticalAcrossThreadCounts) {
  imaging::Grid g;
  g.size = {40, 30, 25};
  g.spacing = {0.5, 0.6, 0.7};
  std::vector<std::int64_t> dom;
  for (std::int64_t v = 0; v < g.n_voxels(); ++v) {
    const auto ijk = g.index(v);
    const double r = std::hypot(double(ijk[0]) - 20, double(ijk[1]) - 15);
    if (r > 4 && r < 12) dom.push_back(v);
  }
  const VoxelDomain d = VoxelDomain::build(g, dom);
  std::vector<double> fixed(dom.size(), kNaN);
  for (std::size_t m = 0; m < dom.size(); ++m) {
    const auto ijk = g.index(dom[m]);
    const double r = std::hypot(double(ijk[0]) - 20, double(ijk[1]) - 15);
    if (r < 5) fixed[m] = 0.0;
    if (r > 11) fixed[m] = 1.0;
  }
  const int saved = cardio::thread_count();
  cardio::set_thread_count(1);
  const std::vector<double> u1 = solve_voxel_laplace(d, fixed, {});
  const Eigen::Matrix3Xd g1 = voxel_gradient(d, u1);
  cardio::set_thread_count(2);
  const std::vector<double> u2 = solve_voxel_laplace(d, fixed, {});
  const Eigen::Matrix3Xd g2 = voxel_gradient(d, u2);
  cardio::set_thread_count(saved);
  EXPECT_EQ(u1, u2);
  EXPECT_TRUE((g1.array() == g2.array()).all());
}

}  // namespace
}  // namespace cardio::fibres
