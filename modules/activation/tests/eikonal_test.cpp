// Anisotropic eikonal activation: exact planar fronts, convergence to the exact ellipsoidal front
// of a point source, pacing by point and by label, errors.
#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <cmath>
#include <iostream>

#include "cardio/activation/activation_times.hpp"
#include "cardio/core/error.hpp"

namespace cardio::activation {
namespace {

/// A block of nx x ny x nz elements of size h filling [0, L] (every voxel an element), on a grid
/// rotated by `rotation`, with one uniform fibre direction.
struct Block {
  imaging::Grid grid;
  std::vector<std::int64_t> voxel;
  Eigen::Matrix3Xd fibre;
  std::vector<std::int32_t> label;

  Block(imaging::Index3 n, double h, const Eigen::Matrix3d& rotation, const Eigen::Vector3d& f) {
    grid.size = n;
    grid.spacing = Eigen::Vector3d::Constant(h);
    grid.direction = rotation;
    grid.origin = rotation * Eigen::Vector3d::Constant(h / 2) + Eigen::Vector3d(5, -3, 40);
    for (std::int64_t v = 0; v < grid.n_voxels(); ++v) voxel.push_back(v);
    fibre = f.normalized().replicate(1, Eigen::Index(voxel.size()));
    label.assign(voxel.size(), 1);
  }
  Eigen::Vector3d centre(std::int64_t e) const {
    const auto ijk = grid.index(voxel[std::size_t(e)]);
    return grid.point(ijk[0], ijk[1], ijk[2]);
  }
};

Eigen::Matrix3d metric(const Eigen::Vector3d& fibre, const ConductionVelocity& v) {
  const Eigen::Vector3d f = fibre.normalized();
  return Eigen::Matrix3d::Identity() / (v.cross * v.cross) +
         (1 / (v.fibre * v.fibre) - 1 / (v.cross * v.cross)) * f * f.transpose();
}

const Eigen::Matrix3d kRotation = Eigen::AngleAxisd(0.4, Eigen::Vector3d(1, -2, 0.5).normalized()).toRotationMatrix();
const Eigen::Vector3d kFibre(1.0, 0.6, 0.3);

TEST(Eikonal, PlanarFrontIsExact) {
  // Source: the whole i = 0 layer (label 2). Exact: T = t0 + n.(x - x0) / sqrt(n^T D n), n the
  // layer normal. Linear data are reproduced exactly by the face updates wherever the scheme's
  // domain of dependence (a cone widening by one voxel per layer, not the characteristic alone)
  // stays off the block's sides, where the true solution has a kink: compared there.
  Block b({10, 26, 26}, 0.5, kRotation, kFibre);
  for (std::size_t e = 0; e < b.voxel.size(); ++e)
    if (b.grid.index(b.voxel[e])[0] == 0) b.label[e] = 2;
  const EikonalOptions opt;
  const Eigen::VectorXd T = eikonal_activation(b.grid, b.voxel, b.fibre, b.label, {PacingSite::at_label(2, 5.0)}, opt);
  const Eigen::Matrix3d D = metric(kFibre, opt.velocity).inverse();
  const Eigen::Vector3d n = kRotation.col(0), x0 = b.grid.point(0, 0, 0);
  const double speed = std::sqrt(n.dot(D * n));
  double worst = 0;
  int compared = 0;
  for (Eigen::Index e = 0; e < T.size(); ++e) {
    const auto ijk = b.grid.index(b.voxel[std::size_t(e)]);
    const double err = std::abs(T[e] - (5.0 + n.dot(b.centre(e) - x0) / speed));
    const std::int64_t margin = ijk[0] + 1;
    if (std::min({ijk[1], ijk[2], 25 - ijk[1], 25 - ijk[2]}) < margin) continue;
    ++compared;
    worst = std::max(worst, err);
  }
  EXPECT_GT(compared, 1500);
  EXPECT_LT(worst, 1e-10) << "planar front error [ms]";
  std::cout << "planar front: max error " << worst << " ms over " << compared << " elements\n";
}

struct PointErrors {  // [ms]
  double max_abs = 0, max_rel = 0, mean_abs = 0;
};

/// Errors against the exact front from the site element's centre. factored = false paces the same
/// element through a label of its own (the unfactored scheme, for comparison).
PointErrors point_source_errors(double h, bool factored, EikonalReport* report = nullptr) {
  const Eigen::Vector3d L(12, 10, 8);
  Block b(
      {std::int64_t(std::lround(L[0] / h)), std::int64_t(std::lround(L[1] / h)), std::int64_t(std::lround(L[2] / h))},
      h, kRotation, kFibre);
  const EikonalOptions opt;
  const Eigen::Vector3d p =
      b.grid.origin + kRotation * (Eigen::Vector3d(4.1, 5.2, 3.9) - Eigen::Vector3d::Constant(h / 2));
  EikonalReport rep;
  Eigen::VectorXd T =
      eikonal_activation(b.grid, b.voxel, b.fibre, b.label, {PacingSite::at_point(p, 0.0, "apex")}, opt, &rep);
  const std::int64_t site = rep.site_elements.at(0);
  if (!factored) {
    b.label[std::size_t(site)] = 99;
    T = eikonal_activation(b.grid, b.voxel, b.fibre, b.label, {PacingSite::at_label(99)}, opt, &rep);
  }
  if (report) *report = rep;
  const Eigen::Vector3d src = b.centre(site);
  EXPECT_LE((src - p).norm(), 0.5 * std::sqrt(3.0) * h + 1e-12);
  const Eigen::Matrix3d M = metric(kFibre, opt.velocity);
  PointErrors err;
  for (Eigen::Index e = 0; e < T.size(); ++e) {
    const Eigen::Vector3d d = b.centre(e) - src;
    const double exact = std::sqrt(d.dot(M * d));
    const double a = std::abs(T[e] - exact);
    err.max_abs = std::max(err.max_abs, a);
    err.mean_abs += a / double(T.size());
    if (d.norm() > 2.0) err.max_rel = std::max(err.max_rel, a / exact);
  }
  return err;
}

TEST(Eikonal, PointSourceConvergesToTheExactEllipsoidalFront) {
  std::vector<PointErrors> errors;
  for (double h : {1.0, 0.5, 0.25}) {
    EikonalReport rep;
    errors.push_back(point_source_errors(h, true, &rep));
    const PointErrors& e = errors.back();
    std::cout << "h = " << h << " mm (" << rep.elements << " elements, " << rep.reopened << " re-opened): max error "
              << e.max_abs << " ms, mean " << e.mean_abs << " ms, max relative (d > 2 mm) " << e.max_rel
              << "; max time " << rep.max_time_ms << " ms\n";
  }
  for (std::size_t i = 1; i < errors.size(); ++i) {
    EXPECT_LT(errors[i].max_abs, 0.7 * errors[i - 1].max_abs);
    EXPECT_LT(errors[i].mean_abs, 0.8 * errors[i - 1].mean_abs);
  }
  EXPECT_LT(errors.back().max_abs, 0.15);
  EXPECT_LT(errors.back().max_rel, 0.02);
  // Without factoring the point source's cone is interpolated linearly: much larger errors.
  for (double h : {0.5, 0.25}) {
    const PointErrors plain = point_source_errors(h, false);
    std::cout << "unfactored, h = " << h << " mm: max error " << plain.max_abs << " ms, mean " << plain.mean_abs
              << " ms, max relative " << plain.max_rel << "\n";
    EXPECT_GT(plain.max_abs, 3 * errors[h == 0.5 ? 1 : 2].max_abs);
  }
}

TEST(Eikonal, IsotropicLimit) {
  // v_f = v_t: fronts are spheres; a point source error must still be small at h = 0.5.
  Block b({20, 20, 20}, 0.5, Eigen::Matrix3d::Identity(), kFibre);
  EikonalOptions opt;
  opt.velocity = {0.5, 0.5};
  EikonalReport rep;
  const Eigen::Vector3d p = b.centre(b.grid.linear(10, 10, 10));
  const Eigen::VectorXd T =
      eikonal_activation(b.grid, b.voxel, b.fibre, b.label, {PacingSite::at_point(p, 1.0)}, opt, &rep);
  double worst = 0;
  for (Eigen::Index e = 0; e < T.size(); ++e) {
    const double exact = 1.0 + (b.centre(e) - p).norm() / 0.5;
    if ((b.centre(e) - p).norm() > 2) worst = std::max(worst, std::abs(T[e] - exact) / (exact - 1.0));
  }
  EXPECT_LT(worst, 0.01);
}

TEST(Eikonal, PacingByPointAndByLabel) {
  Block b({10, 8, 6}, 1.0, Eigen::Matrix3d::Identity(), kFibre);
  for (std::size_t e = 0; e < b.voxel.size(); ++e)
    if (b.grid.index(b.voxel[e])[2] == 5) b.label[e] = 7;  // top layer, e.g. an endocardial label
  // A point 0.3 mm off a voxel centre picks that element; its time is the site's time.
  const std::int64_t target = b.grid.linear(3, 4, 2);
  EikonalReport rep;
  const Eigen::VectorXd T = eikonal_activation(
      b.grid, b.voxel, b.fibre, b.label,
      {PacingSite::at_point(b.centre(target) + Eigen::Vector3d(0.3, 0, 0), 12.0), PacingSite::at_label(7, 20.0)}, {},
      &rep);
  ASSERT_EQ(rep.site_elements.size(), 2u);
  EXPECT_EQ(rep.site_elements[0], target);
  EXPECT_EQ(rep.site_elements[1], -1);
  EXPECT_EQ(T[target], 12.0);
  for (std::size_t e = 0; e < b.voxel.size(); ++e) {
    if (b.label[e] == 7) {
      EXPECT_LE(T[Eigen::Index(e)], 20.0);
    }
    EXPECT_GE(T[Eigen::Index(e)], 12.0);
  }
  // Label elements far from the point keep exactly the label's time.
  EXPECT_EQ(T[b.grid.linear(9, 0, 5)], 20.0);
}

TEST(Eikonal, Errors) {
  Block b({6, 6, 6}, 1.0, Eigen::Matrix3d::Identity(), kFibre);
  const auto message = [&](const std::vector<PacingSite>& sites, const EikonalOptions& opt = {}) -> std::string {
    try {
      eikonal_activation(b.grid, b.voxel, b.fibre, b.label, sites, opt);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  // A point 5 mm outside the block.
  const Eigen::Vector3d far = b.grid.point(2, 2, 5) + Eigen::Vector3d(0, 0, 5.5);
  std::string m = message({PacingSite::at_point(far, 0, "activation.sites[1]")});
  EXPECT_NE(m.find("activation.sites[1]"), std::string::npos) << m;
  EXPECT_NE(m.find("5.5 mm from the nearest myocardium"), std::string::npos) << m;
  // A label without elements.
  m = message({PacingSite::at_label(9)});
  EXPECT_NE(m.find("no myocardium element has label 9 (labels present: 1)"), std::string::npos) << m;
  // No site, bad velocities, non-finite time.
  EXPECT_NE(message({}).find("at least one pacing site"), std::string::npos);
  EikonalOptions slow_fibre;
  slow_fibre.velocity = {0.2, 0.6};
  EXPECT_NE(message({PacingSite::at_label(1)}, slow_fibre).find("activation.velocity.cross"), std::string::npos);
  EXPECT_NE(message({PacingSite::at_label(1, std::nan(""))}).find("not finite"), std::string::npos);
  // Unreachable elements: drop the middle layer i = 3, leaving two disconnected halves.
  Block split = b;
  split.voxel.clear();
  for (std::int64_t v = 0; v < b.grid.n_voxels(); ++v)
    if (b.grid.index(v)[0] != 3) split.voxel.push_back(v);
  split.fibre = split.fibre.leftCols(Eigen::Index(split.voxel.size())).eval();
  split.label.assign(split.voxel.size(), 1);
  try {
    eikonal_activation(split.grid, split.voxel, split.fibre, split.label,
                       {PacingSite::at_point(b.grid.point(0, 0, 0))});
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("72 of 180 myocardium elements are not reached"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("voxel (4, 0, 0)"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace cardio::activation
