// Smooth surfaces for the boundary fit, against closed forms: closest points on a plane and a
// sphere, and the smoothed label contours of voxelised balls (straight and oblique grids) against
// the balls' radii.
#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <cmath>
#include <numbers>

#include "cardio/core/error.hpp"
#include "cardio/surfaces/projection.hpp"

namespace surf = cardio::surfaces;
using Vec3 = Eigen::Vector3d;

namespace {

/// A UV sphere of radius r about c (n rings, 2n segments), triangulated.
surf::TriangleSurface uv_sphere(const Vec3& c, double r, int n) {
  surf::TriangleSurface s;
  s.points.push_back(c + Vec3(0, 0, r));
  for (int i = 1; i < n; ++i)
    for (int j = 0; j < 2 * n; ++j) {
      const double th = std::numbers::pi * i / n, ph = std::numbers::pi * j / n;
      s.points.push_back(c + r * Vec3(std::sin(th) * std::cos(ph), std::sin(th) * std::sin(ph), std::cos(th)));
    }
  s.points.push_back(c - Vec3(0, 0, r));
  const auto ring = [n](int i, int j) { return std::int64_t(1 + (i - 1) * 2 * n + (j % (2 * n))); };
  const std::int64_t south = std::int64_t(s.points.size()) - 1;
  for (int j = 0; j < 2 * n; ++j) {
    s.triangles.push_back({0, ring(1, j), ring(1, j + 1)});
    s.triangles.push_back({south, ring(n - 1, j + 1), ring(n - 1, j)});
    for (int i = 1; i < n - 1; ++i) {
      s.triangles.push_back({ring(i, j), ring(i + 1, j), ring(i + 1, j + 1)});
      s.triangles.push_back({ring(i, j), ring(i + 1, j + 1), ring(i, j + 1)});
    }
  }
  return s;
}

/// A role volume: myocardium in the shell r_in <= |x - c| < r_out, cavity "lv" inside r_in.
cardio::imaging::RoleVolume ball_roles(const cardio::imaging::Grid& g, const Vec3& c, double r_in, double r_out) {
  cardio::imaging::RoleVolume roles;
  roles.role.grid = g;
  roles.cavity_names = {"lv"};
  roles.role.values.assign(std::size_t(g.n_voxels()), cardio::imaging::RoleVolume::kOutside);
  for (std::int64_t v = 0; v < g.n_voxels(); ++v) {
    const auto [i, j, k] = g.index(v);
    const double d = (g.point(i, j, k) - c).norm();
    if (d < r_in)
      roles.role.values[std::size_t(v)] = cardio::imaging::RoleVolume::cavity_role(0);
    else if (d < r_out)
      roles.role.values[std::size_t(v)] = cardio::imaging::RoleVolume::kMyocardium;
  }
  return roles;
}

/// Largest | |p - c| - r | over the surface's points.
double worst_radius_error(const surf::TriangleSurface& s, const Vec3& c, double r) {
  double worst = 0;
  for (const Vec3& p : s.points) worst = std::max(worst, std::abs((p - c).norm() - r));
  return worst;
}

}  // namespace

TEST(Projection, ClosestPointOnTwoTrianglesIsTheFootOrTheNearestEdge) {
  surf::TriangleSurface square{{Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(1, 1, 0), Vec3(0, 1, 0)}, {{0, 1, 2}, {0, 2, 3}}};
  const auto project = surf::closest_point_projector(square);
  EXPECT_LT((project(Vec3(0.3, 0.6, 2.5)) - Vec3(0.3, 0.6, 0)).norm(), 1e-12);
  EXPECT_LT((project(Vec3(0.7, 0.2, -1)) - Vec3(0.7, 0.2, 0)).norm(), 1e-12);
  EXPECT_LT((project(Vec3(2.0, 0.5, 1)) - Vec3(1, 0.5, 0)).norm(), 1e-12);  // beyond the edge x = 1
  EXPECT_LT((project(Vec3(-1, -2, 0.5)) - Vec3(0, 0, 0)).norm(), 1e-12);    // beyond the corner
}

TEST(Projection, PointsNearASphereLandOnIt) {
  const Vec3 c(3, -2, 1);
  const double r = 10;
  const auto project = surf::closest_point_projector(uv_sphere(c, r, 64));
  // Chord error of the triangulation: r (1 - cos(pi / 64)) = 0.012 mm.
  for (int k = 0; k < 50; ++k) {
    const Vec3 dir = Vec3(std::sin(1.3 * k), std::cos(0.7 * k), std::sin(0.3 * k + 1)).normalized();
    const Vec3 p = c + (r + 1.5 * std::sin(2.1 * k)) * dir;
    const Vec3 q = project(p);
    EXPECT_NEAR((q - c).norm(), r, 0.013) << k;
    EXPECT_LT(((q - c).normalized() - dir).norm(), 0.01) << k;  // along the radius
  }
}

TEST(Projection, EmptySurfaceIsRefused) { EXPECT_THROW(surf::closest_point_projector({}), cardio::Error); }

TEST(Projection, LabelContoursOfABallLieOnItsSpheres) {
  cardio::imaging::Grid g;
  g.size = {40, 40, 40};
  g.spacing = Vec3(1, 1, 1);
  const Vec3 c(20.3, 19.6, 20.1);
  for (const bool oblique : {false, true}) {
    if (oblique) {
      g.direction = Eigen::AngleAxisd(0.7, Vec3(1, 2, -1).normalized()).toRotationMatrix();
      g.spacing = Vec3(1.0, 1.2, 0.9);
      g.origin = Vec3(-5, 3, 2);
    }
    const Vec3 centre = oblique ? g.point(Vec3(20.3, 19.4, 20.0)) : c;
    const auto surfaces = surf::label_surfaces(ball_roles(g, centre, 9, 15));
    ASSERT_EQ(surfaces.size(), 2u);
    const double h = g.spacing.maxCoeff();
    for (const auto& [name, r] : {std::pair{"epicardium", 15.0}, std::pair{"endocardium_lv", 9.0}}) {
      const surf::TriangleSurface& s = surfaces.at(name);
      double sum = 0, sum_sq = 0;
      for (const Vec3& p : s.points) {
        const double e = (p - centre).norm() - r;
        sum += e;
        sum_sq += e * e;
      }
      const double mean = sum / double(s.points.size()), rms = std::sqrt(sum_sq / double(s.points.size()));
      // A voxelised sphere is rough by up to half a voxel; smoothed, it is within a tenth on
      // average, and not shrunk (a Gaussian blur would move it inwards by sigma^2 / r).
      std::cout << name << (oblique ? " oblique" : "") << ": mean radius error " << mean << " mm, rms " << rms
                << " mm\n";
      EXPECT_LT(rms, 0.1 * h) << name << (oblique ? " oblique" : "");
      EXPECT_LT(std::abs(mean), 0.03 * h) << name << (oblique ? " oblique" : "");
      EXPECT_LT(worst_radius_error(s, centre, r), 0.5 * h) << name << (oblique ? " oblique" : "");
    }
  }
}

TEST(Projection, RegionWithoutVoxelsHasNoSurface) {
  cardio::imaging::Grid g;
  g.size = {20, 20, 20};
  const auto surfaces = surf::label_surfaces(ball_roles(g, Vec3(10, 10, 10), 0, 6));
  EXPECT_EQ(surfaces.count("epicardium"), 1u);
  EXPECT_EQ(surfaces.count("endocardium_lv"), 0u);
}
