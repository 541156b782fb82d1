// Cavity volume gradient, Promayon's exact volume projection, the pressure it implies, the cubic
// solver and the implicit Windkessel coupling.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <random>

#include "cardio/circulation/cavity_coupling.hpp"
#include "cardio/circulation/cubic.hpp"
#include "cardio/circulation/volume_constraint.hpp"
#include "cardio/circulation/windkessel.hpp"
#include "cardio/core/error.hpp"
#include "cardio/core/parallel.hpp"
#include "cardio/core/units.hpp"
#include "cardio/mechanics/integrators.hpp"
#include "test_meshes.hpp"

namespace cardio::circulation {
namespace {

using meshing::CavitySurface;

/// Rest positions with a smooth bulge plus a seeded random jitter (a general deformed state).
Eigen::Matrix3Xd deformed(const meshing::VoxelMesh& m, double amplitude, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uni(-1.0, 1.0);
  Eigen::Matrix3Xd x = m.mesh.rest;
  const Eigen::Vector3d c = x.rowwise().mean();
  for (Eigen::Index i = 0; i < x.cols(); ++i) {
    const Eigen::Vector3d r = x.col(i) - c;
    x.col(i) += 0.03 * r * std::sin(0.3 * r.norm());
    for (int d = 0; d < 3; ++d) x(d, i) += amplitude * uni(rng);
  }
  return x;
}

TEST(CavityVolume, GradientMatchesFiniteDifferencesIncludingTheLid) {
  const meshing::VoxelMesh m = testing::open_box_mesh();
  const CavitySurface& lv = m.cavities.at(0);
  ASSERT_TRUE(lv.has_lid());
  const Eigen::Matrix3Xd x = deformed(m, 0.05, 7);
  EXPECT_NEAR(cavity_volume_mm3(lv, x), meshing::cavity_volume(lv, x), 1e-9);
  const VolumeGradient g = volume_gradient(lv, x);
  ASSERT_EQ(g.nodes, lv.nodes);
  const double h = 1e-5, scale = g.grad.cwiseAbs().maxCoeff();
  double worst = 0;
  for (std::size_t k = 0; k < g.nodes.size(); ++k)
    for (int d = 0; d < 3; ++d) {
      Eigen::Matrix3Xd xp = x, xm = x;
      xp(d, g.nodes[k]) += h;
      xm(d, g.nodes[k]) -= h;
      const double fd = (cavity_volume_mm3(lv, xp) - cavity_volume_mm3(lv, xm)) / (2 * h);
      worst = std::max(worst, std::abs(fd - g.grad(d, Eigen::Index(k))));
    }
  EXPECT_LT(worst, 1e-7 * scale) << "max |FD - analytic| = " << worst;
  // Nodes off the surface do not change the volume: the listed nodes are all that matter.
  std::vector<bool> on(std::size_t(x.cols()), false);
  for (auto n : lv.nodes) on[std::size_t(n)] = true;
  Eigen::Matrix3Xd y = x;
  for (Eigen::Index i = 0; i < y.cols(); ++i)
    if (!on[std::size_t(i)]) y.col(i) += Eigen::Vector3d(0.3, -0.2, 0.1);
  EXPECT_EQ(cavity_volume_mm3(lv, y), cavity_volume_mm3(lv, x));
}

TEST(CavityVolume, PressureForcesAreThePressureTimesTheGradient) {
  const meshing::VoxelMesh m = testing::open_box_mesh();
  const CavitySurface& lv = m.cavities.at(0);
  const Eigen::Matrix3Xd x = deformed(m, 0.02, 3);
  Eigen::Matrix3Xd f = Eigen::Matrix3Xd::Zero(3, x.cols());
  add_pressure_forces(lv, x, 2.5, f);
  const VolumeGradient g = volume_gradient(lv, x);
  for (std::size_t k = 0; k < g.nodes.size(); ++k)
    EXPECT_LT((f.col(g.nodes[k]) - 2.5 * g.grad.col(Eigen::Index(k))).norm(), 1e-14);
  // A uniform pressure on a closed surface has no net force.
  EXPECT_LT(f.rowwise().sum().norm(), 1e-12);
}

TEST(CavityVolume, VolumeAndGradientInOnePassAreTheSeparateOnes) {
  // Several triangle blocks, so the volume's partial sums add across blocks as six_volume's do.
  const meshing::VoxelMesh m = testing::open_box_mesh({30, 28, 22});
  const CavitySurface& lv = m.cavities.at(0);
  ASSERT_GT(lv.triangles.size(), 4096u);
  const Eigen::Matrix3Xd x = deformed(m, 0.05, 5);
  const VolumeAndGradient vg = volume_and_gradient(lv, x);
  // meshing's serial sum in absolute coordinates is the independent reference for the volume.
  EXPECT_LT(std::abs(vg.volume_mm3 / meshing::cavity_volume(lv, x) - 1), 1e-10);
  EXPECT_LT(std::abs(vg.volume_mm3 / cavity_volume_mm3(lv, x) - 1), 1e-14);
  const VolumeGradient g = volume_gradient(lv, x);
  ASSERT_EQ(vg.gradient.nodes, g.nodes);
  EXPECT_TRUE((vg.gradient.grad.array() == g.grad.array()).all());
  Eigen::Matrix3Xd f1 = Eigen::Matrix3Xd::Zero(3, x.cols()), f2 = f1;
  add_pressure_forces(lv, x, 1.7, f1);
  add_pressure_forces(vg.gradient, 1.7, f2);
  EXPECT_TRUE((f1.array() == f2.array()).all());
}

TEST(CavityCoupling, FillingForcesReuseTheEndOfStepGradientOnlyAtThosePositions) {
  const meshing::VoxelMesh m = testing::open_box_mesh();
  const CavitySurface& lv = m.cavities.at(0);
  CavityCoupling coupling({CavityCirculation{"lv", {}, {}}}, {&lv}, m.mesh.rest, 1000.0);
  coupling.set_time(50.0);  // filling: the pressure ramps to the EDP over the first 100 ms
  ASSERT_EQ(coupling.cycles()[0].phase(), Phase::filling);
  const double p_kPa = 4.0 * units::kMmHgInKPa;  // half of the default 8 mmHg ramp
  Eigen::Matrix3Xd x = deformed(m, 0.02, 9);
  const auto forces = [&](const Eigen::Matrix3Xd& at) {
    Eigen::Matrix3Xd f = Eigen::Matrix3Xd::Zero(3, at.cols());
    coupling.add_forces(at, f);
    return f;
  };
  const auto expected = [&](const Eigen::Matrix3Xd& at) {
    Eigen::Matrix3Xd f = Eigen::Matrix3Xd::Zero(3, at.cols());
    add_pressure_forces(lv, at, p_kPa, f);
    return f;
  };
  EXPECT_LT((forces(x) - expected(x)).cwiseAbs().maxCoeff(), 1e-12);
  const std::vector<double> V = coupling.end_of_step_volumes_mL(x);
  EXPECT_LT(std::abs(V.at(0) * kMm3PerMl / meshing::cavity_volume(lv, x) - 1), 1e-10);
  EXPECT_LT((forces(x) - expected(x)).cwiseAbs().maxCoeff(), 1e-12);  // the kept gradient
  // The same array moved in place (a surface node first) is not the positions of that gradient.
  x.col(lv.nodes[0]) += Eigen::Vector3d(0.05, -0.03, 0.02);
  EXPECT_LT((forces(x) - expected(x)).cwiseAbs().maxCoeff(), 1e-12);
  // Nor is another array holding other positions.
  coupling.end_of_step_volumes_mL(x);
  const Eigen::Matrix3Xd y = deformed(m, 0.03, 10);
  EXPECT_LT((forces(y) - expected(y)).cwiseAbs().maxCoeff(), 1e-12);
  EXPECT_GT((expected(y) - expected(x)).cwiseAbs().maxCoeff(), 1e-6);  // the states do differ
}

TEST(CavityVolume, LargeCavityInTriangleBlocksIsExactAndBitIdenticalAtAnyThreadCount) {
  // Large enough for the sums to run in several blocks of triangles (in parallel).
  const meshing::VoxelMesh m = testing::open_box_mesh({30, 28, 22});
  const CavitySurface& lv = m.cavities.at(0);
  ASSERT_GT(lv.triangles.size(), 4096u);
  const Eigen::Matrix3Xd x0 = deformed(m, 0.05, 11);
  // Against meshing's serial sum in absolute coordinates (its own round-off, eps |x|^3 / V).
  EXPECT_LT(std::abs(cavity_volume_mm3(lv, x0) / meshing::cavity_volume(lv, x0) - 1), 1e-10);
  const VolumeGradient g = volume_gradient(lv, x0);
  const double h = 1e-5, scale = g.grad.cwiseAbs().maxCoeff();
  for (std::size_t k = 0; k < g.nodes.size(); k += 97)
    for (int d = 0; d < 3; ++d) {
      Eigen::Matrix3Xd xp = x0, xm = x0;
      xp(d, g.nodes[k]) += h;
      xm(d, g.nodes[k]) -= h;
      const double fd = (cavity_volume_mm3(lv, xp) - cavity_volume_mm3(lv, xm)) / (2 * h);
      EXPECT_NEAR(fd, g.grad(d, Eigen::Index(k)), 1e-7 * scale) << "node " << g.nodes[k];
    }
  WindkesselParams wp;
  wp.initial_pressure = 60;
  const Windkessel wk(wp);
  const double v_begin = cavity_volume_mm3(lv, x0) / kMm3PerMl;
  const auto run = [&](int threads) {
    set_thread_count(threads);
    Eigen::Matrix3Xd x = x0;
    const CoupledResult r = project_volume_windkessel(lv, m.mass, Eigen::Matrix3Xd(), wk, v_begin, 0.02, x);
    return std::make_pair(r, x);
  };
  const int threads = thread_count();
  const auto [r1, x1] = run(1);
  const auto [r2, x2] = run(std::max(2, threads));
  set_thread_count(threads);
  EXPECT_EQ(r1.projection.phi, r2.projection.phi);
  EXPECT_EQ(r1.projection.volume_mm3, r2.projection.volume_mm3);
  EXPECT_TRUE((x1.array() == x2.array()).all());
  EXPECT_NE(r1.projection.phi, 0.0);  // the comparison is not between unmoved states
  // The volume the projection reports (its cubic at phi) is the volume of the moved surface.
  EXPECT_LT(std::abs(r1.projection.volume_mm3 / cavity_volume_mm3(lv, x1) - 1), 1e-13);
}

TEST(Cubic, RootNearestZero) {
  // (x - 1)(x + 2)(x - 3) = x^3 - 2x^2 - 5x + 6
  EXPECT_DOUBLE_EQ(root_nearest_zero(6, -5, -2, 1), 1.0);
  const auto roots = real_roots(6, -5, -2, 1);
  ASSERT_EQ(roots.size(), 3u);
  EXPECT_NEAR(roots[0], -2, 1e-15);
  EXPECT_NEAR(roots[1], 1, 1e-15);
  EXPECT_NEAR(roots[2], 3, 1e-15);
  // (x + 0.25)(x - 4)(x - 5): the negative root is nearest.
  EXPECT_NEAR(root_nearest_zero(5, 17.75, -8.75, 1), -0.25, 1e-15);
  // Tie between -0.5 and 0.5 -> the positive one.
  EXPECT_DOUBLE_EQ(root_nearest_zero(-0.25, 0, 1, 0), 0.5);
  // Projection-like: tiny cubic and quadratic terms; root near -c0/c1, to full precision.
  const double c0 = 1e-3, c1 = 2.0, c2 = 1e-9, c3 = 1e-18;
  const double r = root_nearest_zero(c0, c1, c2, c3);
  EXPECT_LT(std::abs(c0 + r * (c1 + r * (c2 + r * c3))), 1e-18);
  EXPECT_NEAR(r, -5e-4, 1e-12);
  // Leading coefficient so small the Cauchy bound overflows: treated as the lower degree.
  EXPECT_NEAR(root_nearest_zero(-1, 1, 0, 1e-320), 1.0, 1e-15);
  // Triple root and a double root.
  EXPECT_NEAR(root_nearest_zero(-1, 3, -3, 1), 1.0, 1e-5);
  EXPECT_NEAR(root_nearest_zero(0, 0, 1, 1), 0.0, 0.0);
  // Linear and no-root cases.
  EXPECT_DOUBLE_EQ(root_nearest_zero(3, -2, 0, 0), 1.5);
  EXPECT_THROW(root_nearest_zero(1, 0, 1, 0), Error);
  EXPECT_THROW(root_nearest_zero(0, 0, 0, 0), Error);
  // Random cubics with known roots.
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> uni(-10, 10);
  for (int t = 0; t < 200; ++t) {
    const double a = uni(rng), b = uni(rng), c = uni(rng), s = uni(rng);
    // s (x - a)(x - b)(x - c)
    const double k3 = s, k2 = -s * (a + b + c), k1 = s * (a * b + b * c + c * a), k0 = -s * a * b * c;
    double nearest = a;
    for (double z : {b, c})
      if (std::abs(z) < std::abs(nearest)) nearest = z;
    const double sep = std::min({std::abs(a - b), std::abs(b - c), std::abs(c - a)});
    if (sep < 1e-3) continue;
    EXPECT_NEAR(root_nearest_zero(k0, k1, k2, k3), nearest, 1e-9 * (1 + 100 / sep)) << a << " " << b << " " << c;
  }
}

/// Free mask with the bottom (lowest k) nodes fixed and the x component of a few others fixed.
Eigen::Matrix3Xd some_fixed(const meshing::VoxelMesh& m, const CavitySurface& lv) {
  Eigen::Matrix3Xd free = Eigen::Matrix3Xd::Ones(3, m.mesh.n_nodes());
  const Eigen::Vector3d axis = m.grid.direction.col(2);
  double lowest = 1e300;
  for (auto n : lv.nodes) lowest = std::min(lowest, axis.dot(m.mesh.rest.col(n)));
  int fixed_x = 0;
  for (auto n : lv.nodes) {
    if (axis.dot(m.mesh.rest.col(n)) < lowest + 1e-9)
      free.col(n).setZero();
    else if (fixed_x++ % 5 == 0)
      free(0, n) = 0;
  }
  return free;
}

TEST(VolumeProjection, HitsTheTargetAndLeavesFixedComponentsUnmoved) {
  const meshing::VoxelMesh m = testing::open_box_mesh();
  const CavitySurface& lv = m.cavities.at(0);
  const double v_rest = meshing::cavity_volume(lv, m.mesh.rest);
  const Eigen::Matrix3Xd free = some_fixed(m, lv);
  for (double factor : {1.0, 0.93, 1.08, 0.6}) {
    const Eigen::Matrix3Xd x_free = deformed(m, 0.04, 5);
    Eigen::Matrix3Xd x = x_free;
    Eigen::Matrix3Xd v = Eigen::Matrix3Xd::Constant(3, x.cols(), 0.01);
    const double target = factor * v_rest;
    const ProjectionResult r = project_volume(lv, m.mass, free, target, 0.01, x, &v);
    // The centroid-relative sum is exact to round-off of V; meshing's sum in absolute coordinates
    // (this grid sits ~400 mm from the origin) carries round-off ~ eps |x|^3 / V per triangle.
    EXPECT_LT(std::abs(cavity_volume_mm3(lv, x) - target) / target, 1e-13) << "factor " << factor;
    EXPECT_LT(std::abs(r.volume_mm3 - target) / target, 1e-13);
    EXPECT_LT(std::abs(meshing::cavity_volume(lv, x) - target) / target, 1e-10) << "factor " << factor;
    EXPECT_NEAR(r.volume_free_mm3, meshing::cavity_volume(lv, x_free), 1e-10);
    // Fixed components bit-identical, and so is every node off the surface.
    for (Eigen::Index i = 0; i < x.cols(); ++i)
      for (int d = 0; d < 3; ++d)
        if (free(d, i) == 0) {
          EXPECT_EQ(x(d, i), x_free(d, i));
          EXPECT_EQ(v(d, i), 0.01);
        }
    // Free nodes moved along M^-1 grad V(X_free).
    const VolumeGradient g = volume_gradient(lv, x_free);
    for (std::size_t k = 0; k < g.nodes.size(); ++k) {
      const auto n = g.nodes[k];
      const Eigen::Vector3d expected = r.phi * g.grad.col(Eigen::Index(k)).cwiseProduct(free.col(n)) / m.mass[n];
      EXPECT_LT((x.col(n) - x_free.col(n) - expected).norm(), 1e-12);
    }
    // Velocities tangent to the constraint afterwards: dV/dt = g(X).v = 0.
    const VolumeGradient ga = volume_gradient(lv, x);
    double gv = 0, gn = 0;
    for (std::size_t k = 0; k < ga.nodes.size(); ++k) {
      gv += ga.grad.col(Eigen::Index(k)).dot(v.col(ga.nodes[k]));
      gn += ga.grad.col(Eigen::Index(k)).norm() * v.col(ga.nodes[k]).norm();
    }
    EXPECT_LT(std::abs(gv), 1e-13 * gn);
  }
}

TEST(VolumeProjection, Errors) {
  const meshing::VoxelMesh m = testing::open_box_mesh();
  const CavitySurface& lv = m.cavities.at(0);
  Eigen::Matrix3Xd x = m.mesh.rest;
  EXPECT_THROW(project_volume(lv, m.mass, Eigen::Matrix3Xd(), -1.0, 0.01, x), Error);
  EXPECT_THROW(project_volume(lv, m.mass, Eigen::Matrix3Xd(), 10.0, 0.0, x), Error);
  EXPECT_THROW(project_volume(lv, m.mass.head(3), Eigen::Matrix3Xd(), 10.0, 0.01, x), Error);
  try {
    project_volume(lv, m.mass, Eigen::Matrix3Xd::Zero(3, x.cols()), 10.0, 0.01, x);
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'lv'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("fixed"), std::string::npos) << e.what();
  }
  // Two cavities that share nodes cannot be projected in turn.
  try {
    project_volumes({lv, lv}, m.mass, Eigen::Matrix3Xd(), {10.0, 10.0}, 0.01, x);
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("share"), std::string::npos) << e.what();
  }
}

TEST(VolumeProjection, TwoCavitiesProjectedInTurn) {
  const meshing::VoxelMesh m = testing::two_box_mesh();
  ASSERT_EQ(m.cavities.size(), 2u);
  Eigen::Matrix3Xd x = deformed(m, 0.03, 9);
  const std::vector<double> targets = {0.9 * meshing::cavity_volume(m.cavities[0], m.mesh.rest),
                                       1.1 * meshing::cavity_volume(m.cavities[1], m.mesh.rest)};
  project_volumes(m.cavities, m.mass, Eigen::Matrix3Xd(), targets, 0.01, x);
  for (std::size_t c = 0; c < 2; ++c) {
    EXPECT_LT(std::abs(cavity_volume_mm3(m.cavities[c], x) / targets[c] - 1), 1e-13);
    EXPECT_LT(std::abs(meshing::cavity_volume(m.cavities[c], x) / targets[c] - 1), 1e-10);
  }
}

/// A wall in equilibrium with a cavity pressure p: internal force -p grad V plus springs to x_eq.
/// Replacing the pressure by the volume constraint, the projection's pressure must be p, with
/// either integrator (one projection per step, or Verlet's two).
TEST(VolumeProjection, MultiplierEqualsTheEquilibriumPressure) {
  const meshing::VoxelMesh m = testing::open_box_mesh({9, 9, 8}, {1.0, 1.0, 1.0});
  const CavitySurface& lv = m.cavities.at(0);
  const Eigen::Matrix3Xd x_eq = deformed(m, 0.02, 1);
  const double v_eq = meshing::cavity_volume(lv, x_eq);
  const Eigen::Matrix3Xd free = some_fixed(m, lv);
  const double p = 1.6;  // kPa (12 mmHg)
  const double k_spring = 5.0;
  const mechanics::ForceFn forces = [&](const Eigen::Matrix3Xd& x, const Eigen::Matrix3Xd&, double,
                                        Eigen::Matrix3Xd& f) {
    f = k_spring * (x_eq - x);
    add_pressure_forces(lv, x, -p, f);  // the wall pulls inward with exactly -p dV/dx
  };
  for (auto scheme : {mechanics::Scheme::semi_implicit_euler, mechanics::Scheme::verlet}) {
    std::vector<double> errors;
    for (double dt : {1e-2, 1e-3}) {
      mechanics::NodeState s;
      s.x = x_eq;
      s.v = Eigen::Matrix3Xd::Zero(3, x_eq.cols());
      s.mass = m.mass;
      s.f.resize(3, x_eq.cols());
      forces(s.x, s.v, 0, s.f);
      double impulse = 0;
      const mechanics::ProjectFn project = [&](Eigen::Matrix3Xd& x, Eigen::Matrix3Xd& v, double) {
        for (Eigen::Index i = 0; i < x.cols(); ++i)
          for (int d = 0; d < 3; ++d)
            if (free(d, i) == 0) {
              x(d, i) = x_eq(d, i);
              v(d, i) = 0;
            }
        impulse += project_volume(lv, m.mass, free, v_eq, dt, x, &v).impulse(dt);
      };
      double worst = 0;
      for (int n = 0; n < 20; ++n) {
        impulse = 0;
        mechanics::step(scheme, s, n * dt, dt, forces, project);
        worst = std::max(worst, std::abs(impulse / dt - p) / p);
        EXPECT_LT(std::abs(cavity_volume_mm3(lv, s.x) - v_eq), 1e-13 * v_eq);
      }
      // First order in the step's displacement dt^2 p M^-1 g relative to the element size: O(dt^2).
      EXPECT_LT(worst, 3 * dt * dt) << "scheme " << int(scheme) << " dt " << dt;
      EXPECT_LT((s.x - x_eq).cwiseAbs().maxCoeff(), dt * dt);
      errors.push_back(worst);
    }
    EXPECT_GT(errors[0] / errors[1], 50.0) << "pressure error " << errors[0] << " -> " << errors[1];
    std::cout << (scheme == mechanics::Scheme::verlet ? "verlet" : "semi-implicit Euler")
              << ": relative pressure error " << errors[0] << " (dt 0.01 ms), " << errors[1] << " (dt 0.001 ms)\n";
  }
}

TEST(WindkesselCoupling, ImplicitProjectionSatisfiesBothEquations) {
  const meshing::VoxelMesh m = testing::open_box_mesh();
  const CavitySurface& lv = m.cavities.at(0);
  const Eigen::Matrix3Xd x0 = m.mesh.rest;
  const double v_begin = meshing::cavity_volume(lv, x0) / kMm3PerMl;
  // The free state has shrunk by 2 % (the wall contracts); the Windkessel resists the outflow.
  const Eigen::Vector3d c = x0.rowwise().mean();
  Eigen::Matrix3Xd x = x0;
  for (Eigen::Index i = 0; i < x.cols(); ++i) x.col(i) = c + (x0.col(i) - c) * std::cbrt(0.98);
  WindkesselParams wp;
  wp.peripheral_resistance = 2e5;  // a small cavity (0.05 mL): scaled so that p ~ 10-100 mmHg
  wp.compliance = 1e-3;
  wp.characteristic_impedance = 1e4;
  wp.initial_pressure = 60;
  const Windkessel wk(wp);
  const double dt = 0.02;
  Eigen::Matrix3Xd v = Eigen::Matrix3Xd::Zero(3, x.cols());
  const CoupledResult r = project_volume_windkessel(lv, m.mass, Eigen::Matrix3Xd(), wk, v_begin, dt, x, &v);
  const auto [a, b] = wk.end_of_step_pressure(dt);
  EXPECT_NEAR(r.pressure_mmHg, a + b * r.outflow, 1e-9 * r.pressure_mmHg);
  EXPECT_NEAR(cavity_volume_mm3(lv, x) / kMm3PerMl, v_begin - r.outflow * dt, 1e-13 * v_begin);
  EXPECT_GT(r.outflow, 0);
  EXPECT_NEAR(r.pressure_mmHg, r.projection.phi / (dt * dt * units::kMmHgInKPa), 1e-12 * r.pressure_mmHg);
  // The Windkessel advanced with that outflow gives the same cavity pressure.
  Windkessel next = wk;
  next.advance(dt, r.outflow);
  EXPECT_NEAR(next.cavity_pressure(r.outflow), r.pressure_mmHg, 1e-9 * r.pressure_mmHg);
  // Explicit-coupling stability limit: finite with Z_c > 0, infinite without.
  EXPECT_GT(max_explicit_impedance_step(lv, m.mass, Eigen::Matrix3Xd(), x0, 50.0), 0);
  EXPECT_TRUE(std::isinf(max_explicit_impedance_step(lv, m.mass, Eigen::Matrix3Xd(), x0, 0.0)));
}

}  // namespace
}  // namespace cardio::circulation
