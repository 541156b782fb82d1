// The Guccione law on the element axes (hyperelastic.hpp) against independent continuum
// references written out here: energies of homogeneous deformations (single element and 3x3x3
// block, aligned and oblique frames), forces against the energy gradient, stresses recovered
// from face reactions of solved blocks, active tension, the activation-modulated option, zero
// modes, objectivity, damping and determinism.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <iostream>

#include "cardio/core/parallel.hpp"
#include "cardio/mechanics/integrators.hpp"
#include "cardio/mechanics/myocardium.hpp"
#include "guccione_reference.hpp"
#include "test_support.hpp"

namespace cardio::mechanics {
namespace {

using M3 = Eigen::Matrix3d;
using V3 = Eigen::Vector3d;
using testing::ref_Q;
using testing::ref_S;
using testing::ref_W;
using testing::Reference;
using testing::reference_of;

// Newton on g(u) = 0 in n unknowns with a finite-difference Jacobian (the reference solves).
Eigen::VectorXd newton(const std::function<Eigen::VectorXd(const Eigen::VectorXd&)>& g, Eigen::VectorXd u) {
  for (int it = 0; it < 100; ++it) {
    const Eigen::VectorXd r = g(u);
    if (r.norm() < 1e-13) break;
    Eigen::MatrixXd Jm(u.size(), u.size());
    for (Eigen::Index j = 0; j < u.size(); ++j) {
      Eigen::VectorXd up = u, um = u;
      up[j] += 1e-7;
      um[j] -= 1e-7;
      Jm.col(j) = (g(up) - g(um)) / 2e-7;
    }
    u -= Jm.lu().solve(r);
  }
  return u;
}

// Uniaxial stress along material axis `axis` at stretch lam: the other two stretches solve
// S_bb = 0 (diagonal F: the law has no normal-shear coupling). Returns Fm.
M3 ref_uniaxial(const Reference& r, int axis, double lam) {
  const int o1 = (axis + 1) % 3, o2 = (axis + 2) % 3;
  auto F_of = [&](const Eigen::VectorXd& u) {
    M3 F = M3::Zero();
    F(axis, axis) = lam;
    F(o1, o1) = u[0];
    F(o2, o2) = u[1];
    return F;
  };
  const Eigen::VectorXd u = newton(
      [&](const Eigen::VectorXd& u) {
        const M3 S = ref_S(r, F_of(u));
        return Eigen::Vector2d(S(o1, o1), S(o2, o2)).eval();
      },
      Eigen::Vector2d(1 / std::sqrt(lam), 1 / std::sqrt(lam)));
  return F_of(u);
}

// ---- Geometry helpers ----

M3 frame_of(const HexMesh& m, std::int64_t e = 0) {
  M3 R;
  R << m.fibre.col(e), m.sheet.col(e), m.normal(e);
  return R;
}

FibreField aligned() { return FibreField{}; }

// Homogeneous deformations in the material frame, up to strain t.
std::vector<std::pair<std::string, M3>> deformations(double t) {
  std::vector<std::pair<std::string, M3>> d;
  auto diag = [](double a, double b, double c) { return V3(a, b, c).asDiagonal().toDenseMatrix(); };
  const double l = 1 + t, c = 1 / std::sqrt(1 + t);
  d.emplace_back("uniaxial along f", diag(l, c, c));
  d.emplace_back("uniaxial along s", diag(c, l, c));
  d.emplace_back("uniaxial along n", diag(c, c, l));
  d.emplace_back("compression along f", diag(1 - t, 1 / std::sqrt(1 - t), 1 / std::sqrt(1 - t)));
  d.emplace_back("stretch along f, no lateral", diag(l, 1, 1));
  d.emplace_back("equibiaxial fs", diag(l, l, 1 / (l * l)));
  d.emplace_back("equibiaxial sn", diag(1 / (l * l), l, l));
  const std::pair<int, int> planes[] = {{0, 1}, {1, 0}, {0, 2}, {2, 0}, {1, 2}, {2, 1}};
  const char* names[] = {"shear fs", "shear sf", "shear fn", "shear nf", "shear sn", "shear ns"};
  for (int p = 0; p < 6; ++p) {
    M3 F = M3::Identity();
    F(planes[p].first, planes[p].second) = t;
    d.emplace_back(names[p], F);
  }
  M3 G;
  G << 0.7, -0.4, 0.2, 0.9, -1.0, 0.5, -0.3, 0.6, 0.8;
  d.emplace_back("general", M3::Identity() + t * G);
  return d;
}

// ---- Energies of homogeneous deformations ----

class GuccioneHomogeneous : public ::testing::TestWithParam<std::tuple<bool, int>> {};  // oblique, block size

TEST_P(GuccioneHomogeneous, EnergyEqualsContinuumAndInteriorIsInEquilibrium) {
  const auto [oblique, n] = GetParam();
  const HexMesh mesh = make_block({n, n, n, 0.8, V3(1, -2, 0.5)}, oblique ? testing::oblique_fibres() : aligned());
  const M3 R = frame_of(mesh);
  const double volume = std::pow(0.8 * n, 3);
  GuccioneLaw law;
  law.active = {0.15, 0.7};
  struct Case {
    double Ta, a;
  };
  double worst = 0;
  for (const Case cs : {Case{0, 0}, Case{6.0, 0}, Case{0, 0.8}, Case{4.0, 0.5}}) {
    GuccioneForces model(mesh, {law});
    const std::vector<double> Ta(mesh.n_elements(), cs.Ta), act(mesh.n_elements(), cs.a);
    const ForceInputs in{1.0, Ta, act};
    const Reference ref = reference_of(law, cs.Ta, cs.a);
    for (double t : {0.05, 0.10, 0.15})
      for (const auto& [name, Fm] : deformations(t)) {
        const M3 F = R * Fm * R.transpose();
        const Eigen::Matrix3Xd x = (F * mesh.rest).colwise() + V3(0.3, 0.1, -0.2);
        const double W = model.energy(x, in);
        const double W_ref = volume * ref_W(ref, Fm);
        const double err = std::abs(W - W_ref) / std::max(std::abs(W_ref), 1e-12);
        worst = std::max(worst, err);
        EXPECT_LT(err, 1e-11) << name << " t " << t << " Ta " << cs.Ta << " a " << cs.a << ": " << W << " vs " << W_ref;
        // Homogeneous stress: interior nodes carry no net force.
        Eigen::Matrix3Xd f = Eigen::Matrix3Xd::Zero(3, x.cols());
        model.add_forces(x, Eigen::Matrix3Xd(), in, f);
        double interior = 0;
        for (std::int64_t i = 0; i < mesh.n_nodes(); ++i) {
          const V3 u = (mesh.rest.col(i) - V3(1, -2, 0.5)) / 0.8;
          if (u.minCoeff() > 0.5 && u.maxCoeff() < n - 0.5) interior = std::max(interior, f.col(i).norm());
        }
        EXPECT_LT(interior, 1e-12 * std::max(1.0, f.cwiseAbs().maxCoeff())) << name;
      }
  }
  std::cout << (oblique ? "oblique" : "aligned") << " frame, " << n << "^3 elements: worst relative energy error "
            << worst << "\n";
}

INSTANTIATE_TEST_SUITE_P(Frames, GuccioneHomogeneous, ::testing::Combine(::testing::Bool(), ::testing::Values(1, 3)),
                         [](const auto& info) {
                           return std::string(std::get<0>(info.param) ? "oblique" : "aligned") + "_" +
                                  std::to_string(std::get<1>(info.param));
                         });

// ---- Forces are the exact energy gradient (all terms, non-affine states) ----

TEST(GuccioneForceLaw, ForcesAreTheEnergyGradient) {
  std::mt19937_64 rng(20261122);
  std::uniform_real_distribution<double> u(-1, 1);
  for (bool oblique : {false, true}) {
    const HexMesh mesh = make_block({1, 1, 1, 1.3, V3::Zero()}, oblique ? testing::oblique_fibres() : aligned());
    const M3 R = frame_of(mesh);
    const NodeMatrix X = gather(mesh.rest, mesh.hexes[0]);
    const BCElementData d = bc_element_data(X, R);
    GuccioneLaw law;
    law.active = {0.2, 0.5};
    const double g = guccione_hourglass_modulus(law);
    for (const auto& [name, Fm] : deformations(0.15)) {
      NodeMatrix x = R * Fm * R.transpose() * X;
      for (int i = 0; i < 24; ++i) x.data()[i] += 0.05 * u(rng);  // non-affine: hourglass modes too
      for (double Ta : {0.0, 7.5})
        for (double a : {0.0, 0.6}) {
          NodeMatrix f = NodeMatrix::Zero();
          guccione_element_forces(d, law, g, Ta, a, x, nullptr, f);
          NodeMatrix fd;
          const double h = 1e-6;
          for (int i = 0; i < 24; ++i) {
            NodeMatrix xp = x, xm = x, scratch = NodeMatrix::Zero();
            xp.data()[i] += h;
            xm.data()[i] -= h;
            const double Wp = guccione_element_forces(d, law, g, Ta, a, xp, nullptr, scratch);
            const double Wm = guccione_element_forces(d, law, g, Ta, a, xm, nullptr, scratch);
            fd.data()[i] = -(Wp - Wm) / (2 * h);
          }
          EXPECT_LT((f - fd).cwiseAbs().maxCoeff(), 1e-7 * f.cwiseAbs().maxCoeff())
              << name << (oblique ? " oblique" : " aligned") << " Ta " << Ta << " a " << a;
        }
    }
  }
}

// The physical hourglass control (GuccioneHourglass): forces are the exact gradient of the
// energy with every option (stiffening on and off, stress term on and off), for
// cubes and a non-cubic box, aligned and oblique frames, with active tension and activation.
TEST(GuccioneForceLaw, PhysicalHourglassForcesAreTheEnergyGradient) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  using HS = GuccioneLaw::HourglassStress;
  for (bool oblique : {false, true})
    for (bool box : {false, true}) {
      HexMesh mesh = make_block({1, 1, 1, 1.3, V3::Zero()}, oblique ? testing::oblique_fibres() : aligned());
      if (box) mesh.rest = V3(1.0, 0.6, 1.7).asDiagonal() * mesh.rest;  // a non-cubic voxel
      const M3 R = frame_of(mesh);
      const NodeMatrix X = gather(mesh.rest, mesh.hexes[0]);
      const BCElementData d = bc_element_data(X, R);
      for (HS stress : {HS::none, HS::elastic})
        for (bool stiffening : {false, true}) {
          GuccioneLaw law;
          law.active = {0.2, 0.5};
          law.hourglass_stress = stress;
          law.hourglass_stiffening = stiffening;
          const GuccioneHourglass hg = guccione_hourglass_data(X, R, d, law);
          for (const auto& [name, Fm] : deformations(0.15)) {
            NodeMatrix x = R * Fm * R.transpose() * X;
            for (int i = 0; i < 24; ++i) x.data()[i] += 0.08 * u(rng);  // hourglass modes too
            for (double Ta : {0.0, 7.5})
              for (double a : {0.0, 0.6}) {
                NodeMatrix f = NodeMatrix::Zero();
                guccione_element_forces(d, &hg, law, Ta, a, x, nullptr, f);
                NodeMatrix fd;
                const double h = 1e-6;
                for (int i = 0; i < 24; ++i) {
                  NodeMatrix xp = x, xm = x, scratch = NodeMatrix::Zero();
                  xp.data()[i] += h;
                  xm.data()[i] -= h;
                  const double Wp = guccione_element_forces(d, &hg, law, Ta, a, xp, nullptr, scratch);
                  const double Wm = guccione_element_forces(d, &hg, law, Ta, a, xm, nullptr, scratch);
                  fd.data()[i] = -(Wp - Wm) / (2 * h);
                }
                EXPECT_LT((f - fd).cwiseAbs().maxCoeff(), 1e-7 * f.cwiseAbs().maxCoeff())
                    << name << (oblique ? " oblique" : " aligned") << (box ? " box" : " cube") << " stress "
                    << int(stress) << " stiffening " << stiffening << " Ta " << Ta << " a " << a;
              }
          }
        }
    }
}

TEST(GuccioneForceLaw, ObjectiveWithZeroNetForceAndTorque) {
  std::mt19937_64 rng(99);
  std::uniform_real_distribution<double> u(-1, 1);
  const HexMesh mesh = make_block({1, 1, 1, 1.0, V3::Zero()}, testing::oblique_fibres());
  const NodeMatrix X = gather(mesh.rest, mesh.hexes[0]);
  const BCElementData d = bc_element_data(X, frame_of(mesh));
  GuccioneLaw law;
  law.active = {0.1, 0.3};
  const double g = guccione_hourglass_modulus(law);
  for (int trial = 0; trial < 5; ++trial) {
    NodeMatrix x = X;
    for (int i = 0; i < 24; ++i) x.data()[i] += 0.12 * u(rng);
    const M3 Q = testing::random_rotation(rng);
    const NodeMatrix y = (Q * x).colwise() + V3(u(rng), u(rng), u(rng));
    NodeMatrix fx = NodeMatrix::Zero(), fy = NodeMatrix::Zero();
    const double Wx = guccione_element_forces(d, law, g, 5.0, 0.4, x, nullptr, fx);
    const double Wy = guccione_element_forces(d, law, g, 5.0, 0.4, y, nullptr, fy);
    EXPECT_NEAR(Wy, Wx, 1e-12 * std::abs(Wx));
    EXPECT_LT((fy - Q * fx).norm(), 1e-11 * fx.norm());
    V3 torque = V3::Zero();
    for (int j = 0; j < 8; ++j) torque += x.col(j).cross(fx.col(j));
    EXPECT_LT(fx.rowwise().sum().norm(), 1e-12 * fx.norm());
    EXPECT_LT(torque.norm(), 1e-12 * fx.norm());
  }
}

TEST(GuccioneForceLaw, DampingDissipatesAndIgnoresRigidMotion) {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(-1, 1);
  const HexMesh mesh = make_block({1, 1, 1, 1.0, V3::Zero()}, testing::oblique_fibres());
  const NodeMatrix X = gather(mesh.rest, mesh.hexes[0]);
  const BCElementData d = bc_element_data(X, frame_of(mesh));
  GuccioneLaw law;
  law.damping_time = 0.2;
  NodeMatrix x = X;
  for (int i = 0; i < 24; ++i) x.data()[i] += 0.1 * u(rng);
  NodeMatrix f0 = NodeMatrix::Zero();
  guccione_element_forces(d, law, 0.0, 0.0, 0.0, x, nullptr, f0);
  for (int trial = 0; trial < 5; ++trial) {
    NodeMatrix v;
    for (int i = 0; i < 24; ++i) v.data()[i] = u(rng);
    NodeMatrix f = NodeMatrix::Zero();
    guccione_element_forces(d, law, 0.0, 0.0, 0.0, x, &v, f);
    EXPECT_LE((f - f0).cwiseProduct(v).sum(), 0.0) << "damping power must be <= 0";
    // A rigid velocity (translation + rotation) produces no damping force.
    const V3 w(u(rng), u(rng), u(rng)), b(u(rng), u(rng), u(rng));
    NodeMatrix vr;
    for (int j = 0; j < 8; ++j) vr.col(j) = b + w.cross(x.col(j));
    NodeMatrix fr = NodeMatrix::Zero();
    guccione_element_forces(d, law, 0.0, 0.0, 0.0, x, &vr, fr);
    EXPECT_LT((fr - f0).norm(), 1e-13 * f0.norm());
  }
}

// Small strain: the energy is 1/2 eps : C : eps with guccione_stiffness_voigt (used for the
// hourglass modulus and the time step), in any frame.
TEST(GuccioneForceLaw, SmallStrainStiffness) {
  for (bool oblique : {false, true}) {
    const HexMesh mesh = make_block({1, 1, 1, 1.0, V3::Zero()}, oblique ? testing::oblique_fibres() : aligned());
    const M3 R = frame_of(mesh);
    GuccioneForces model(mesh, {GuccioneLaw{}});
    const Eigen::Matrix<double, 6, 6> C = rotate_voigt(guccione_stiffness_voigt(GuccioneLaw{}), R);
    std::mt19937_64 rng(3);
    std::uniform_real_distribution<double> u(-1, 1);
    for (int trial = 0; trial < 5; ++trial) {
      M3 eps;
      for (int i = 0; i < 3; ++i)
        for (int j = i; j < 3; ++j) eps(i, j) = eps(j, i) = 1e-6 * u(rng);
      Eigen::Matrix<double, 6, 1> e;
      e << eps(0, 0), eps(1, 1), eps(2, 2), 2 * eps(1, 2), 2 * eps(0, 2), 2 * eps(0, 1);
      const double W = model.energy(mesh.rest + eps * mesh.rest);
      EXPECT_NEAR(W / (0.5 * e.dot(C * e)), 1.0, 1e-5);
    }
  }
  // Default law: E_c of diag(16, 4, 4) + 200 11^T, by Sherman-Morrison.
  const double s = 1 / 16.0 + 2 / 4.0, q = 200 / (1 + 200 * s);
  EXPECT_NEAR(guccione_hourglass_modulus(GuccioneLaw{}), 1 / (0.25 - q / 16), 1e-12);
}

// ---- Stresses from the reactions of solved 3x3x3 blocks ----

struct Solved {
  Eigen::Matrix3Xd x, f_internal;
  QuasiStaticResult result;
};

Solved solve(const HexMesh& mesh, const GuccioneLaw& law, std::vector<DofConstraint> constraints, double Ta = 0,
             double a = 0) {
  auto model = std::make_unique<GuccioneForces>(mesh, std::vector<GuccioneLaw>{law});
  const std::vector<double> Tas(mesh.n_elements(), Ta), as(mesh.n_elements(), a);
  BoundaryConditions bc;
  bc.constraints = std::move(constraints);
  MassSpringSystem sys(mesh, std::move(model), lumped_masses(mesh, {1.0}), std::move(bc));
  // The prescribed displacements ramp, the active tension is on from the start.
  const LoadPath path = [&](double s) { return ForceInputs{s, Tas, as}; };
  NodeState s = sys.rest_state(path(0.0));
  QuasiStaticOptions opt;
  opt.load_steps = 3;
  opt.residual_tol = 1e-11;
  Solved out;
  out.result = solve_quasi_static(sys, mesh, s, opt, path);
  out.x = s.x;
  out.f_internal = Eigen::Matrix3Xd::Zero(3, s.x.cols());
  sys.internal().add_forces(s.x, Eigen::Matrix3Xd(), path(1.0), out.f_internal);
  return out;
}

// Free bodies (no reactions to scale a residual by): Newton on the free DOFs with the
// finite-difference stiffness, to an absolute force tolerance [mN].
Solved newton_solve(const HexMesh& mesh, const GuccioneLaw& law, std::vector<DofConstraint> constraints, double Ta,
                    double a) {
  auto owned = std::make_unique<GuccioneForces>(mesh, std::vector<GuccioneLaw>{law});
  const GuccioneForces& model = *owned;
  const std::vector<double> Tas(mesh.n_elements(), Ta), as(mesh.n_elements(), a);
  const ForceInputs in{1.0, Tas, as};
  BoundaryConditions bc;
  bc.constraints = std::move(constraints);
  MassSpringSystem sys(mesh, std::move(owned), lumped_masses(mesh, {1.0}), std::move(bc));
  NodeState s = sys.rest_state(in);
  const Eigen::Map<const Eigen::VectorXd> free(sys.free_mask().data(), sys.free_mask().size());
  std::vector<Eigen::Index> dofs;
  for (Eigen::Index i = 0; i < free.size(); ++i)
    if (free[i] != 0) dofs.push_back(i);
  Solved out;
  for (int it = 0; it < 50; ++it) {
    const Eigen::VectorXd f = testing::flat_forces(model, s.x, in);
    Eigen::VectorXd r(dofs.size());
    for (std::size_t k = 0; k < dofs.size(); ++k) r[k] = f[dofs[k]];
    out.result.residual = r.cwiseAbs().maxCoeff();
    out.result.iterations = it;
    if (out.result.residual < 1e-12) {
      out.result.converged = true;
      break;
    }
    const Eigen::MatrixXd K = testing::fd_stiffness(model, s.x, 1e-6, in);
    Eigen::MatrixXd Kff(dofs.size(), dofs.size());
    for (std::size_t i = 0; i < dofs.size(); ++i)
      for (std::size_t j = 0; j < dofs.size(); ++j) Kff(i, j) = K(dofs[i], dofs[j]);
    const Eigen::VectorXd dx = Kff.lu().solve(r);  // K dx = f (K = -df/dx)
    for (std::size_t k = 0; k < dofs.size(); ++k) s.x.data()[dofs[k]] += dx[k];
  }
  out.x = s.x;
  out.f_internal = Eigen::Matrix3Xd::Zero(3, s.x.cols());
  model.add_forces(s.x, Eigen::Matrix3Xd(), in, out.f_internal);
  return out;
}

std::vector<std::int32_t> nodes_where(const HexMesh& m, const std::function<bool(const V3&)>& pred) {
  std::vector<std::int32_t> n;
  for (std::int32_t i = 0; i < m.n_nodes(); ++i)
    if (pred(m.rest.col(i))) n.push_back(i);
  return n;
}

// Reaction (external force) on the nodes of a face, per rest area: P N.
V3 face_traction(const Solved& s, const std::vector<std::int32_t>& face, double area) {
  V3 r = V3::Zero();
  for (std::int32_t i : face) r -= s.f_internal.col(i);
  return r / area;
}

DofConstraint roller(std::vector<std::int32_t> nodes, int axis, double rate = 0) {
  DofConstraint c;
  c.nodes = std::move(nodes);
  c.mask = static_cast<std::uint8_t>(1u << axis);
  c.M(axis, axis) = rate;
  return c;
}

// Uniaxial stretch along a lattice axis (fibres along x): rollers on the three low faces, the
// high face of `axis` moved; the lateral faces are free, so the lateral stretches come from the
// solve. Checked against ref_uniaxial.
TEST(GuccioneStress, UniaxialAlongAndAcrossFibres) {
  const double L = 3.0;
  const HexMesh mesh = make_block({3, 3, 3, 1.0, V3::Zero()}, aligned());
  const GuccioneLaw law;
  const Reference ref = reference_of(law);
  const char* names[] = {"along f (x)", "across, along s (y)", "across, along n (z)"};
  for (int axis = 0; axis < 3; ++axis)
    for (double t : {0.05, 0.15, -0.10}) {
      std::vector<DofConstraint> c;
      for (int k = 0; k < 3; ++k)
        c.push_back(roller(nodes_where(mesh, [&](const V3& X) { return X[k] == 0 || (k == axis && X[k] == L); }), k,
                           k == axis ? t : 0.0));
      const Solved s = solve(mesh, law, c);
      ASSERT_TRUE(s.result.converged);
      const auto face = nodes_where(mesh, [&](const V3& X) { return X[axis] == L; });
      const V3 P = face_traction(s, face, L * L);
      const M3 Fm = ref_uniaxial(ref, axis, 1 + t);
      const M3 P_ref = Fm * ref_S(ref, Fm);
      const double J = Fm.determinant();
      // Lateral stretches from the corner node (L, L, L).
      const V3 corner = s.x.col(block_node({3, 3, 3, 1.0, V3::Zero()}, 3, 3, 3)) / L;
      const double err = std::abs(P[axis] - P_ref(axis, axis)) / std::abs(P_ref(axis, axis));
      std::cout << "uniaxial " << names[axis] << " strain " << t << ": P = " << P[axis] << " kPa (continuum "
                << P_ref(axis, axis) << ", rel. error " << err << "), Cauchy " << P[axis] * (1 + t) / J
                << " kPa, J - 1 = " << J - 1 << ", stretches " << corner.transpose() << " (continuum "
                << Fm.diagonal().transpose() << ")\n";
      EXPECT_LT(err, 1e-6);
      EXPECT_LT((corner - Fm.diagonal()).cwiseAbs().maxCoeff(), 1e-8);
      EXPECT_LT((P - P_ref.col(axis)).norm(), 1e-6 * std::abs(P_ref(axis, axis)));
    }
}

// Simple shear with the boundary prescribed and the interior nodes free, fibres aligned and
// oblique: the full traction vector P N on the moving face equals the continuum P = F S.
TEST(GuccioneStress, SimpleShearInAllPlanes) {
  const double L = 3.0;
  const GuccioneLaw law;
  const Reference ref = reference_of(law);
  for (bool oblique : {false, true}) {
    const HexMesh mesh = make_block({3, 3, 3, 1.0, V3::Zero()}, oblique ? testing::oblique_fibres() : aligned());
    const M3 R = frame_of(mesh);
    const auto boundary = nodes_where(mesh, [&](const V3& X) { return X.minCoeff() == 0 || X.maxCoeff() == L; });
    const std::pair<int, int> planes[] = {{0, 1}, {0, 2}, {1, 2}};  // fs, fn, sn when aligned
    const char* names[] = {"fs (x along y)", "fn (x along z)", "sn (y along z)"};
    for (int p = 0; p < 3; ++p)
      for (double gamma : {0.05, 0.15}) {
        const auto [i, j] = planes[p];
        DofConstraint c;
        c.nodes = boundary;
        c.M(i, j) = gamma;  // u_i = gamma X_j
        const Solved s = solve(mesh, law, {c});
        ASSERT_TRUE(s.result.converged);
        M3 F = M3::Identity();
        F(i, j) = gamma;
        const M3 Fm = R.transpose() * F * R;
        const M3 P_ref = R * (Fm * ref_S(ref, Fm)) * R.transpose();  // global first PK
        const auto face = nodes_where(mesh, [&](const V3& X) { return X[j] == L; });
        const V3 T = face_traction(s, face, L * L);
        const double err = (T - P_ref.col(j)).norm() / std::abs(P_ref(i, j));
        std::cout << (oblique ? "oblique" : "aligned") << " simple shear " << names[p] << " gamma " << gamma << ": P_"
                  << i << j << " = " << T[i] << " kPa (continuum " << P_ref(i, j) << "), rel. error " << err << "\n";
        EXPECT_LT(err, 1e-6);
      }
  }
}

// ---- Active tension ----

// With no passive stiffness the force on the fibre faces is Ta lambda per rest cross-section,
// along the current fibre: the reaction on a face with normal N is Ta (F f0)(f0 . N) A0.
TEST(GuccioneActive, FibreForceIsTaLambdaPerRestArea) {
  GuccioneLaw law;
  law.C = 0;
  law.bulk = 0;
  for (bool oblique : {false, true})
    for (int n : {1, 3}) {
      const HexMesh mesh = make_block({n, n, n, 1.0, V3::Zero()}, oblique ? testing::oblique_fibres() : aligned());
      const V3 f0 = mesh.fibre.col(0);
      GuccioneForces model(mesh, {law});
      const std::vector<double> Ta(mesh.n_elements(), 12.0);
      for (double lam : {0.85, 1.0, 1.15}) {
        const M3 F = M3::Identity() + (lam - 1) * f0 * f0.transpose();
        const Eigen::Matrix3Xd x = F * mesh.rest;
        Eigen::Matrix3Xd f = Eigen::Matrix3Xd::Zero(3, x.cols());
        model.add_forces(x, Eigen::Matrix3Xd(), {1.0, Ta, {}}, f);
        V3 reaction = V3::Zero();
        for (std::int32_t i : nodes_where(mesh, [&](const V3& X) { return X[0] == n; })) reaction -= f.col(i);
        const V3 expected = 12.0 * lam * f0 * f0[0] * (n * n);
        EXPECT_LT((reaction - expected).norm(), 1e-12 * 12.0 * n * n) << "lambda " << lam;
      }
    }
}

// A free fibre-aligned element (symmetry rollers only) under Ta contracts to the stretch where
// S_ff(passive) + Ta + S_ff(volume) = 0 and the lateral stresses vanish.
TEST(GuccioneActive, FreeElementReachesTheClosedFormEquilibrium) {
  for (int n : {1, 3})
    for (double Ta : {2.0, 10.0}) {
      const HexMesh mesh = make_block({n, n, n, 1.0, V3::Zero()}, aligned());
      const GuccioneLaw law;
      std::vector<DofConstraint> c;
      for (int k = 0; k < 3; ++k) c.push_back(roller(nodes_where(mesh, [&](const V3& X) { return X[k] == 0; }), k));
      const Solved s = newton_solve(mesh, law, c, Ta, 0.0);
      ASSERT_TRUE(s.result.converged);
      const Reference ref = reference_of(law, Ta);
      const Eigen::VectorXd u = newton(
          [&](const Eigen::VectorXd& u) {
            const M3 S = ref_S(ref, V3(u[0], u[1], u[1]).asDiagonal());
            return Eigen::Vector2d(S(0, 0), S(1, 1)).eval();
          },
          Eigen::Vector2d(0.9, 1.05));
      const V3 stretch = s.x.col(block_node({n, n, n, 1.0, V3::Zero()}, n, n, n)) / n;
      std::cout << n << "^3 free block, Ta " << Ta << " kPa: fibre stretch " << stretch[0] << " (closed form " << u[0]
                << "), cross " << stretch[1] << " (" << u[1] << "), J - 1 = " << stretch.prod() - 1 << "\n";
      EXPECT_NEAR(stretch[0], u[0], 1e-8);
      EXPECT_NEAR(stretch[1], u[1], 1e-8);
      EXPECT_NEAR(stretch[2], u[1], 1e-8);
    }
}

// Activation-modulated option: the free element settles where d W / d(lambda, mu) = 0 of the
// closed-form energy (1 + gamma a) C/2 (exp(Q(E_e)) - 1) + kappa/2 (J - 1)^2, which is the
// isochoric active shortening lambda = 1 - beta a, mu = (1 - beta a)^-1/2 for any kappa.
TEST(GuccioneActive, ActivationModulatedRestLengthAndStiffness) {
  const HexMesh mesh = make_block({1, 1, 1, 1.0, V3::Zero()}, aligned());
  std::vector<DofConstraint> c;
  for (int k = 0; k < 3; ++k) c.push_back(roller(nodes_where(mesh, [&](const V3& X) { return X[k] == 0; }), k));
  for (double bulk : {0.0, 200.0}) {
    GuccioneLaw law;
    law.bulk = bulk;
    law.active = {0.15, 1.0};
    const double a = 0.8;
    const Solved s = newton_solve(mesh, law, c, 0.0, a);
    ASSERT_TRUE(s.result.converged);
    const Reference ref = reference_of(law, 0.0, a);
    auto W2 = [&](const Eigen::VectorXd& u) { return ref_W(ref, V3(u[0], u[1], u[1]).asDiagonal()); };
    const Eigen::VectorXd u = newton(
        [&](const Eigen::VectorXd& u) {
          Eigen::VectorXd g(2);
          for (int k = 0; k < 2; ++k) {
            Eigen::VectorXd up = u, um = u;
            up[k] += 1e-5;
            um[k] -= 1e-5;
            g[k] = (W2(up) - W2(um)) / 2e-5;
          }
          return g;
        },
        Eigen::Vector2d(0.9, 1.05));
    const V3 stretch = s.x.col(block_node({1, 1, 1, 1.0, V3::Zero()}, 1, 1, 1));
    std::cout << "activation " << a << ", beta 0.15, gamma 1, bulk " << bulk << ": fibre stretch " << stretch[0]
              << " (closed form " << u[0] << "), cross " << stretch[1] << " (" << u[1] << ")\n";
    EXPECT_NEAR(stretch[0], u[0], 1e-7);
    EXPECT_NEAR(stretch[1], u[1], 1e-7);
    EXPECT_NEAR(stretch[0], 1 - 0.15 * a, 1e-8);
    EXPECT_NEAR(stretch[1], 1 / std::sqrt(1 - 0.15 * a), 1e-8);
    EXPECT_NEAR(stretch[2], 1 / std::sqrt(1 - 0.15 * a), 1e-8);
  }
}

// ---- Zero modes, determinism, input checks ----

int count_zero_modes(const Eigen::MatrixXd& K) {
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(0.5 * (K + K.transpose()));
  const Eigen::VectorXd mag = es.eigenvalues().cwiseAbs();
  return static_cast<int>((mag.array() < 1e-7 * mag.maxCoeff()).count());
}

TEST(GuccioneZeroModes, FreeBlockHasOnlyRigidModes) {
  for (bool oblique : {false, true}) {
    const HexMesh mesh = make_block({3, 3, 3, 1.0, V3::Zero()}, oblique ? testing::oblique_fibres() : aligned());
    GuccioneForces model(mesh, {GuccioneLaw{}});
    const Eigen::MatrixXd K = testing::fd_stiffness(model, mesh.rest);
    EXPECT_LT((K - K.transpose()).norm(), 1e-6 * K.norm());
    EXPECT_EQ(count_zero_modes(K), 6) << (oblique ? "oblique" : "aligned");
    GuccioneLaw bare;
    bare.hourglass_factor = 0;
    GuccioneForces no_control(mesh, {bare});
    std::cout << (oblique ? "oblique" : "aligned") << " 3x3x3 block without hourglass control: "
              << count_zero_modes(testing::fd_stiffness(no_control, mesh.rest)) << " zero modes\n";
  }
}

// The physical control on one element and on blocks: a cube, a non-cubic box, aligned, oblique
// and random frames all have the 6 rigid modes only; each of the 12 hourglass modes has energy.
TEST(GuccioneZeroModes, PhysicalControlLeavesOnlyRigidModes) {
  FibreField random;
  random.kind = FibreField::Kind::random;
  const FibreField fields[] = {aligned(), testing::oblique_fibres(), random};
  const char* names[] = {"aligned", "oblique", "random"};
  for (int fi = 0; fi < 3; ++fi)
    for (int n : {1, 2})
      for (bool box : {false, true}) {
        HexMesh mesh = make_block({n, n, n, 1.0, V3::Zero()}, fields[fi]);
        if (box) mesh.rest = V3(1.0, 0.5, 2.0).asDiagonal() * mesh.rest;
        GuccioneForces model(mesh, {GuccioneLaw{}});
        const Eigen::MatrixXd K = testing::fd_stiffness(model, mesh.rest);
        EXPECT_LT((K - K.transpose()).norm(), 1e-6 * K.norm());
        EXPECT_EQ(count_zero_modes(K), 6) << names[fi] << " " << n << "^3 " << (box ? "box" : "cube");
      }
}

// Calibration (docs/calibration.md G.7): an element in the continuum's pure-bending field
// (uniaxial stress E_x kappa z along the lattice axis x, fibres along x, anticlastic lateral
// contraction included) has the continuum energy E_x kappa^2 V alpha_z^2 / 6, for a cube and for
// boxes (alpha_z the half edge across which the strain varies); the axes see nothing of it.
TEST(GuccioneHourglassCalibration, PureBendingEnergyOfOneElement) {
  const GuccioneLaw law;
  const Eigen::Matrix<double, 6, 6> S = guccione_stiffness_voigt(law).inverse();  // aligned: lattice = material
  const double Ex = 1 / S(0, 0), nu_y = -S(1, 0) / S(0, 0), nu_z = -S(2, 0) / S(0, 0);
  const double kappa = 1e-5;
  for (const V3& size : {V3(1, 1, 1), V3(1.5, 0.8, 0.6), V3(0.7, 1.2, 1.9)}) {
    HexMesh mesh = make_block({1, 1, 1, 1.0, V3::Zero()}, aligned());
    mesh.rest = size.asDiagonal() * (mesh.rest.colwise() - V3(0.5, 0.5, 0.5));  // centred box
    GuccioneForces model(mesh, {law});
    Eigen::Matrix3Xd x = mesh.rest;
    for (std::int64_t i = 0; i < mesh.n_nodes(); ++i) {
      const V3 X = mesh.rest.col(i);
      x.col(i) +=
          kappa * V3(X[0] * X[2], -nu_y * X[1] * X[2], -0.5 * (X[0] * X[0] + nu_z * X[2] * X[2] - nu_y * X[1] * X[1]));
    }
    const double V = size.prod(), az = 0.5 * size[2];
    const double W_ref = Ex * kappa * kappa * V * az * az / 6;
    EXPECT_NEAR(model.energy(x) / W_ref, 1.0, 1e-4) << "box " << size.transpose();
  }
}

TEST(GuccioneForces, ThreadCountDoesNotChangeForces) {
  FibreField ff;
  ff.kind = FibreField::Kind::random;
  const HexMesh mesh = make_block({16, 8, 8, 1.0, V3::Zero()}, ff);
  GuccioneLaw law;
  law.damping_time = 0.05;
  law.active = {0.1, 0.5};
  GuccioneForces model(mesh, {law});
  std::vector<double> Ta(mesh.n_elements()), act(mesh.n_elements());
  for (std::int64_t e = 0; e < mesh.n_elements(); ++e) Ta[e] = 0.01 * e, act[e] = (e % 7) / 7.0;
  const ForceInputs in{1.0, Ta, act};
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<double> u(-0.05, 0.05);
  Eigen::Matrix3Xd x = mesh.rest, v(3, mesh.n_nodes());
  for (Eigen::Index i = 0; i < x.size(); ++i) x.data()[i] += u(rng), v.data()[i] = u(rng);
  const int previous = thread_count();
  Eigen::Matrix3Xd f[2];
  double W[2];
  for (int k = 0; k < 2; ++k) {
    set_thread_count(k + 1);
    f[k] = Eigen::Matrix3Xd::Zero(3, x.cols());
    model.add_forces(x, v, in, f[k]);
    W[k] = model.energy(x, in);
  }
  set_thread_count(previous);
  EXPECT_EQ(std::memcmp(f[0].data(), f[1].data(), sizeof(double) * f[0].size()), 0);
  EXPECT_EQ(W[0], W[1]);
}

TEST(GuccioneForces, RejectsBadInput) {
  const HexMesh mesh = make_block({2, 1, 1, 1.0, V3::Zero()}, aligned());
  GuccioneLaw bad;
  bad.C = -1;
  EXPECT_THROW(GuccioneForces(mesh, {bad}), Error);
  bad = {};
  bad.active.beta = 1.0;
  EXPECT_THROW(GuccioneForces(mesh, {bad}), Error);
  GuccioneForces model(mesh, {GuccioneLaw{}});
  // The inputs are checked at every evaluation: one value per element (or none), finite Ta, a in [0, 1].
  Eigen::Matrix3Xd f = Eigen::Matrix3Xd::Zero(3, mesh.n_nodes());
  const auto forces = [&](std::vector<double> Ta, std::vector<double> a) {
    model.add_forces(mesh.rest, Eigen::Matrix3Xd(), {1.0, Ta, a}, f);
  };
  EXPECT_THROW(forces({1.0}, {}), Error);
  EXPECT_THROW(forces({1.0, 1.0}, {0.5, 1.5}), Error);
  EXPECT_THROW(forces({1.0, NAN}, {}), Error);
  EXPECT_THROW(model.energy(mesh.rest, {1.0, std::vector<double>{1.0, 2.0, 3.0}, {}}), Error);
  EXPECT_NO_THROW(forces({1.0, 2.0}, {0.5, 1.0}));
  EXPECT_NO_THROW(forces({}, {}));
}

// The continuum helpers of the header agree with the test's reference.
TEST(GuccioneForces, ContinuumHelpersMatchReference) {
  GuccioneLaw law;
  const Reference ref = reference_of(law);
  for (const auto& [name, Fm] : deformations(0.15)) {
    const M3 E = 0.5 * (Fm.transpose() * Fm - M3::Identity());
    EXPECT_NEAR(guccione_energy_density(law, E), ref_W(ref, Fm), 1e-13) << name;
    EXPECT_LT((guccione_pk2(law, E) - ref_S(ref, Fm)).norm(), 1e-12) << name;
  }
}

}  // namespace
}  // namespace cardio::mechanics
