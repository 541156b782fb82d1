#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <Eigen/LU>
#include <algorithm>
#include <cmath>
#include <iostream>

#include "cardio/core/error.hpp"
#include "cardio/phantoms/phantoms.hpp"

namespace cardio::phantoms {
namespace {

double wrap180(double d) {
  while (d > 90.0) d -= 180.0;
  while (d <= -90.0) d += 180.0;
  return d;
}

std::int64_t count_label(const imaging::LabelVolume& v, std::int32_t label) {
  std::int64_t n = 0;
  for (auto x : v.values) n += (x == label);
  return n;
}

TEST(Phantoms, TruncatedEllipsoidVolume) {
  EXPECT_NEAR(truncated_ellipsoid_volume(7, 17, 5), 2492.13, 0.01);
  // Whole ellipsoid when the base is at the top pole: 4/3 pi r_s^2 r_l.
  EXPECT_NEAR(truncated_ellipsoid_volume(3, 5, 5), 4.0 / 3.0 * M_PI * 9 * 5, 1e-9);
}

TEST(Phantoms, VolumesConvergeWithVoxelSize) {
  const double cavity = truncated_ellipsoid_volume(7, 17, 5);
  const double wall = truncated_ellipsoid_volume(10, 20, 5) - cavity;
  double last_cavity_error = 1e9, last_wall_error = 1e9;
  for (double h : {2.0, 1.0, 0.5}) {
    PhantomSpec spec;
    spec.voxel_size = h;
    const Phantom p = make_phantom(spec);
    const double vox = p.labels.grid.voxel_volume();
    const double cavity_error = std::abs(double(count_label(p.labels, 2)) * vox - cavity) / cavity;
    const double wall_error = std::abs(double(count_label(p.labels, 1)) * vox - wall) / wall;
    std::cout << "h = " << h << " mm: cavity volume error " << 100 * cavity_error << " %, wall " << 100 * wall_error
              << " %\n";
    EXPECT_LT(cavity_error, last_cavity_error) << "h = " << h;
    EXPECT_LT(wall_error, last_wall_error) << "h = " << h;
    last_cavity_error = cavity_error;
    last_wall_error = wall_error;
  }
  EXPECT_LT(last_cavity_error, 0.03);
  EXPECT_LT(last_wall_error, 0.03);
}

TEST(Phantoms, BaseFacesOnPlaneAndMargins) {
  for (double h : {2.0, 1.0, 0.7, 0.5}) {
    PhantomSpec spec;
    spec.voxel_size = h;
    spec.biventricular = true;
    const Phantom p = make_phantom(spec);
    const imaging::Grid& g = p.labels.grid;
    double top = -1e9;
    for (std::int64_t k = 0; k < g.size[2]; ++k)
      for (std::int64_t j = 0; j < g.size[1]; ++j)
        for (std::int64_t i = 0; i < g.size[0]; ++i) {
          const std::int32_t l = p.labels.at(i, j, k);
          const bool border =
              i == 0 || j == 0 || k == 0 || i == g.size[0] - 1 || j == g.size[1] - 1 || k == g.size[2] - 1;
          if (border) {
            EXPECT_EQ(l, 0) << "label on the grid border at h = " << h;
          }
          if (l != 0) top = std::max(top, g.point(i, j, k).z() + 0.5 * h);
          // No voxel centre on the long axis.
          const Eigen::Vector3d x = g.point(i, j, k);
          EXPECT_GT(std::hypot(x.x(), x.y()), 0.25 * h);
        }
    EXPECT_NEAR(top, 5.0, 1e-12) << "h = " << h;
  }
}

/// Analytic helix angles read back from the voxel fibres at voxels with t near 0, 0.5 and 1.
void check_helix_readback(const HelixRule& rule) {
  PhantomSpec spec;
  spec.voxel_size = 0.5;
  spec.helix = rule;
  const Phantom p = make_phantom(spec);
  const EllipsoidShell shell = spec.lv.shell();
  const imaging::Grid& g = p.labels.grid;
  const double targets[3] = {0.0, 0.5, 1.0};
  for (double t0 : targets) {
    const double expected = rule.endo_deg + t0 * (rule.epi_deg - rule.endo_deg);
    int n = 0;
    double worst = 0;
    for (std::int64_t v = 0; v < g.n_voxels(); ++v) {
      if (p.labels.values[static_cast<std::size_t>(v)] != 1) continue;
      const auto ijk = g.index(v);
      const Eigen::Vector3d x = g.point(ijk[0], ijk[1], ijk[2]);
      const ShellCoordinates c = shell_coordinates(shell, x);
      if (std::abs(c.t - t0) > 0.005) continue;
      const Eigen::Vector3d f = p.fibre.values[static_cast<std::size_t>(v)].cast<double>();
      worst = std::max(worst, std::abs(wrap180(helix_angle_deg(shell, x, f) - expected)));
      ++n;
    }
    EXPECT_GT(n, 50) << "t0 = " << t0;
    EXPECT_LT(worst, 1.0) << "t0 = " << t0 << ", expected " << expected << " deg";
  }
}

TEST(Phantoms, LandHelixAnglesReadBack) { check_helix_readback(HelixRule::land2015()); }
TEST(Phantoms, StreeterHelixAnglesReadBack) { check_helix_readback(HelixRule::streeter()); }

TEST(Phantoms, LandFibreConventions) {
  // Endocardium at the equator on the +x side: alpha = +90 -> fibre along e_u = +z (apex -> base);
  // mid-wall: alpha = 0 -> fibre along e_v = z x r = +y there.
  const EllipsoidShell shell = LvGeometry{}.shell();
  const ShellCoordinates endo = shell_coordinates(shell, Eigen::Vector3d(7, 0, 0));
  EXPECT_NEAR(endo.t, 0.0, 1e-12);
  EXPECT_NEAR(endo.u, -M_PI / 2, 1e-12);
  EXPECT_NEAR((endo.e_u - Eigen::Vector3d(0, 0, 1)).norm(), 0, 1e-12);
  EXPECT_NEAR((endo.e_v - Eigen::Vector3d(0, 1, 0)).norm(), 0, 1e-12);
  EXPECT_NEAR((endo.normal - Eigen::Vector3d(1, 0, 0)).norm(), 0, 1e-12);
  EXPECT_NEAR(std::abs(analytic_fibre(shell, HelixRule::land2015(), Eigen::Vector3d(7, 0, 0)).z()), 1.0, 1e-12);
  const Eigen::Vector3d mid = analytic_fibre(shell, HelixRule::land2015(), Eigen::Vector3d(8.5, 0, 0));
  EXPECT_NEAR(std::abs(mid.y()), 1.0, 1e-12);
  // (e_v, e_u, normal) is right-handed at a generic point.
  const ShellCoordinates c = shell_coordinates(shell, Eigen::Vector3d(-4, 6, -9));
  EXPECT_NEAR(c.e_v.cross(c.e_u).dot(c.normal), 1.0, 1e-9);
  EXPECT_GT(c.t, 0.0);
  EXPECT_LT(c.t, 1.0);
}

void check_frames(const Phantom& p, const std::vector<std::int32_t>& myocardium) {
  std::int64_t n = 0;
  for (std::size_t v = 0; v < p.labels.values.size(); ++v) {
    const bool myo = std::find(myocardium.begin(), myocardium.end(), p.labels.values[v]) != myocardium.end();
    const Eigen::Vector3d f = p.fibre.values[v].cast<double>(), s = p.sheet.values[v].cast<double>();
    if (!myo) {
      EXPECT_EQ(f.norm(), 0.0);
      EXPECT_EQ(s.norm(), 0.0);
      continue;
    }
    ++n;
    ASSERT_NEAR(f.norm(), 1.0, 1e-6);
    ASSERT_NEAR(s.norm(), 1.0, 1e-6);
    ASSERT_NEAR(f.dot(s), 0.0, 1e-6);
    Eigen::Matrix3d m;
    m << f, s, f.cross(s);
    ASSERT_NEAR(m.determinant(), 1.0, 1e-5);
  }
  EXPECT_GT(n, 0);
}

TEST(Phantoms, FramesOrthonormalRightHanded) {
  PhantomSpec spec;
  spec.voxel_size = 1.0;
  check_frames(make_phantom(spec), {1});
  spec.biventricular = true;
  spec.helix = HelixRule::streeter();
  check_frames(make_phantom(spec), {1, 3});
}

TEST(Phantoms, SheetIsTransmural) {
  // With the fibre in the tangent plane, the sheet is exactly the surface normal.
  PhantomSpec spec;
  spec.voxel_size = 1.0;
  const Phantom p = make_phantom(spec);
  const EllipsoidShell shell = spec.lv.shell();
  const imaging::Grid& g = p.labels.grid;
  for (std::int64_t v = 0; v < g.n_voxels(); ++v) {
    if (p.labels.values[static_cast<std::size_t>(v)] != 1) continue;
    const auto ijk = g.index(v);
    const ShellCoordinates c = shell_coordinates(shell, g.point(ijk[0], ijk[1], ijk[2]));
    ASSERT_NEAR(p.sheet.values[static_cast<std::size_t>(v)].cast<double>().dot(c.normal), 1.0, 1e-6);
  }
}

TEST(Phantoms, RotatedPhantomIsRotatedObject) {
  PhantomSpec spec;
  spec.voxel_size = 1.0;
  spec.biventricular = true;
  const Phantom a = make_phantom(spec);
  const Eigen::Matrix3d R = Eigen::AngleAxisd(0.7, Eigen::Vector3d(1, 2, 3).normalized()).toRotationMatrix();
  spec.rotation = R;
  const Phantom b = make_phantom(spec);
  ASSERT_EQ(a.labels.grid.size, b.labels.grid.size);
  EXPECT_EQ(a.labels.values, b.labels.values);
  EXPECT_NEAR((b.labels.grid.direction - R).norm(), 0, 1e-15);
  for (std::int64_t k : {std::int64_t(0), b.labels.grid.size[2] - 1})
    EXPECT_NEAR((b.labels.grid.point(3, 5, k) - R * a.labels.grid.point(3, 5, k)).norm(), 0, 1e-12);
  const Eigen::Matrix3f Rf = R.cast<float>();
  for (std::size_t v = 0; v < a.fibre.values.size(); ++v) {
    ASSERT_NEAR((b.fibre.values[v] - Rf * a.fibre.values[v]).norm(), 0, 1e-6);
    ASSERT_NEAR((b.sheet.values[v] - Rf * a.sheet.values[v]).norm(), 0, 1e-6);
  }
  spec.rotation = 2.0 * R;
  EXPECT_THROW(make_phantom(spec), cardio::Error);
  spec.rotation = -R;
  EXPECT_THROW(make_phantom(spec), cardio::Error);
}

TEST(Phantoms, BiventricularTopology) {
  PhantomSpec spec;
  spec.voxel_size = 1.0;
  spec.biventricular = true;
  const Phantom p = make_phantom(spec);
  const imaging::Grid& g = p.labels.grid;
  for (std::int32_t l = 0; l <= 4; ++l) EXPECT_GT(count_label(p.labels, l), 0) << "label " << l;
  // The RV cavity touches only RV cavity, RV free wall, LV myocardium (septum) or the empty layer
  // above the base; the LV cavity only LV myocardium or the layer above the base.
  std::int64_t septum_faces = 0;
  for (std::int64_t k = 1; k + 1 < g.size[2]; ++k)
    for (std::int64_t j = 1; j + 1 < g.size[1]; ++j)
      for (std::int64_t i = 1; i + 1 < g.size[0]; ++i) {
        const std::int32_t l = p.labels.at(i, j, k);
        if (l != 2 && l != 4) continue;
        const std::int64_t d[6][3] = {{-1, 0, 0}, {1, 0, 0}, {0, -1, 0}, {0, 1, 0}, {0, 0, -1}, {0, 0, 1}};
        for (const auto& o : d) {
          const std::int32_t n = p.labels.at(i + o[0], j + o[1], k + o[2]);
          const bool above_base = g.point(i + o[0], j + o[1], k + o[2]).z() > 5.0;
          if (l == 2) {
            EXPECT_TRUE(n == 2 || n == 1 || (n == 0 && above_base));
          } else {
            EXPECT_TRUE(n == 4 || n == 3 || n == 1 || (n == 0 && above_base));
          }
          if (l == 4 && n == 1) ++septum_faces;
        }
      }
  EXPECT_GT(septum_faces, 100);
}

TEST(Phantoms, RejectsBadSpecs) {
  PhantomSpec spec;
  spec.voxel_size = 0;
  EXPECT_THROW(make_phantom(spec), cardio::Error);
  spec.voxel_size = 1;
  spec.lv.epi_short = 6;
  EXPECT_THROW(make_phantom(spec), cardio::Error);
}

}  // namespace
}  // namespace cardio::phantoms
