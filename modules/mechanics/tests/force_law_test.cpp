// Force laws of both elements against their energies (finite differences), zero force at rest,
// objectivity under random rigid motions, zero net force and torque .
#include <gtest/gtest.h>

#include <iostream>

#include "test_support.hpp"

namespace cardio::mechanics {
namespace {

using testing::bc_iso;

constexpr std::uint64_t kSeed = 20261122;

NodeMatrix cube(double h = 1.0) {
  const HexMesh m = make_block({1, 1, 1, h, Eigen::Vector3d::Zero()}, FibreField{});
  return gather(m.rest, m.hexes[0]);
}

Eigen::Matrix3d frame_of(const FibreField& ff) {
  const HexMesh m = make_block({1, 1, 1, 1.0, Eigen::Vector3d::Zero()}, ff);
  Eigen::Matrix3d R;
  R << m.fibre.col(0), m.sheet.col(0), m.normal(0);
  return R;
}

// Moduli variants exercising one term at a time, and all together.
std::vector<std::pair<std::string, BCModuli>> variants() {
  BCCalibration lin;
  lin.radial_share = 0.5;
  const BCModuli all = bc_iso(10, 0.3, lin);
  BCModuli none = all;
  none.axial = {AxisLaw{AxisLaw::Kind::linear, 0, 0}, AxisLaw{AxisLaw::Kind::linear, 0, 0},
                AxisLaw{AxisLaw::Kind::linear, 0, 0}};
  none.shear = {0, 0, 0};
  none.bulk_jacobian = none.radial = none.hourglass = 0;
  std::vector<std::pair<std::string, BCModuli>> v;
  BCModuli m = none;
  m.axial = all.axial;
  v.emplace_back("axial linear", m);
  m = none;
  for (int a = 0; a < 3; ++a) m.axial[a] = {AxisLaw::Kind::exponential, 2.0 * (a + 1), 4.0 + a};
  v.emplace_back("axial exponential", m);
  m = none;
  m.shear = {1.0, 2.0, 3.0};
  v.emplace_back("angular", m);
  m = none;
  m.bulk_jacobian = 5.0;
  v.emplace_back("jacobian volume", m);
  m = none;
  m.radial = 2.0;
  v.emplace_back("radial volume springs", m);
  m = none;
  m.hourglass = 10.0;
  v.emplace_back("hourglass", m);
  v.emplace_back("all terms", all);
  return v;
}

double bc_energy(const BCElementData& d, const BCModuli& m, const NodeMatrix& x, const NodeMatrix& X) {
  NodeMatrix f = NodeMatrix::Zero();
  return bc_element_forces(d, m, x, nullptr, X, f);
}

NodeMatrix bc_force(const BCElementData& d, const BCModuli& m, const NodeMatrix& x, const NodeMatrix& X,
                    const NodeMatrix* v = nullptr) {
  NodeMatrix f = NodeMatrix::Zero();
  bc_element_forces(d, m, x, v, X, f);
  return f;
}

NodeMatrix perturbed(const NodeMatrix& X, double amplitude, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-amplitude, amplitude);
  NodeMatrix x = X;
  for (int i = 0; i < 24; ++i) x.data()[i] += u(rng);
  return x;
}

class BourguignonCaniLaws : public ::testing::TestWithParam<bool> {};  // param: oblique frame

TEST_P(BourguignonCaniLaws, ForcesAreMinusEnergyGradient) {
  std::cout << "seed " << kSeed << "\n";
  std::mt19937_64 rng(kSeed);
  const NodeMatrix X = cube();
  const BCElementData d = bc_element_data(X, frame_of(GetParam() ? testing::oblique_fibres() : FibreField{}));
  for (const auto& [name, m] : variants()) {
    const NodeMatrix x = perturbed(X, 0.08, rng);
    const NodeMatrix f = bc_force(d, m, x, X);
    NodeMatrix fd;
    const double h = 1e-6;
    for (int i = 0; i < 24; ++i) {
      NodeMatrix xp = x, xm = x;
      xp.data()[i] += h;
      xm.data()[i] -= h;
      fd.data()[i] = -(bc_energy(d, m, xp, X) - bc_energy(d, m, xm, X)) / (2 * h);
    }
    EXPECT_GT(f.norm(), 1e-3) << name;
    EXPECT_LT((f - fd).norm(), 1e-7 * (1 + f.norm())) << name << "\nf =\n" << f << "\nfd =\n" << fd;
  }
}

TEST_P(BourguignonCaniLaws, ZeroForceAtRest) {
  const NodeMatrix X = cube(2.0);
  const BCElementData d = bc_element_data(X, frame_of(GetParam() ? testing::oblique_fibres() : FibreField{}));
  for (const auto& [name, m] : variants()) {
    EXPECT_LT(bc_force(d, m, X, X).norm(), 1e-12) << name;
    EXPECT_LT(std::abs(bc_energy(d, m, X, X)), 1e-24) << name;
  }
}

TEST_P(BourguignonCaniLaws, ObjectiveUnderRigidMotion) {
  std::mt19937_64 rng(kSeed + 1);
  const NodeMatrix X = cube();
  const BCElementData d = bc_element_data(X, frame_of(GetParam() ? testing::oblique_fibres() : FibreField{}));
  for (const auto& [name, m] : variants()) {
    const NodeMatrix x = perturbed(X, 0.1, rng);
    const Eigen::Matrix3d Q = testing::random_rotation(rng);
    const Eigen::Vector3d b(0.3, -2.0, 5.0);
    const NodeMatrix y = (Q * x).colwise() + b;
    // Rotated forces, same energy, same axis lengths and angles.
    EXPECT_LT((bc_force(d, m, y, X) - Q * bc_force(d, m, x, X)).norm(), 1e-10 * (1 + bc_force(d, m, x, X).norm()))
        << name;
    EXPECT_NEAR(bc_energy(d, m, y, X), bc_energy(d, m, x, X), 1e-12 * (1 + bc_energy(d, m, x, X))) << name;
  }
  const NodeMatrix x = perturbed(X, 0.1, rng);
  const Eigen::Matrix3d Q = testing::random_rotation(rng);
  const NodeMatrix y = (Q * x).colwise() + Eigen::Vector3d(1, 2, 3);
  const Eigen::Matrix3d Ax = x * d.W.transpose(), Ay = y * d.W.transpose();
  const Eigen::Matrix3d Gx = Ax.transpose() * Ax, Gy = Ay.transpose() * Ay;  // lengths^2 and dot products
  EXPECT_LT((Gx - Gy).norm(), 1e-12);
}

TEST_P(BourguignonCaniLaws, NoNetForceOrTorque) {
  std::mt19937_64 rng(kSeed + 2);
  const NodeMatrix X = cube();
  const BCElementData d = bc_element_data(X, frame_of(GetParam() ? testing::oblique_fibres() : FibreField{}));
  for (auto [name, m] : variants()) {
    m.damping_time = 0.3;  // damping forces must balance too
    const NodeMatrix x = perturbed(X, 0.1, rng);
    const NodeMatrix v = perturbed(NodeMatrix::Zero(), 1.0, rng);
    const NodeMatrix f = bc_force(d, m, x, X, &v);
    Eigen::Vector3d torque = Eigen::Vector3d::Zero();
    for (int i = 0; i < 8; ++i) torque += x.col(i).cross(f.col(i));
    EXPECT_LT(f.rowwise().sum().norm(), 1e-12 * (1 + f.norm())) << name;
    EXPECT_LT(torque.norm(), 1e-12 * (1 + f.norm())) << name;
  }
}

TEST_P(BourguignonCaniLaws, DampingVanishesForRigidVelocities) {
  std::mt19937_64 rng(kSeed + 3);
  const NodeMatrix X = cube();
  const BCElementData d = bc_element_data(X, frame_of(GetParam() ? testing::oblique_fibres() : FibreField{}));
  BCCalibration opt;
  opt.radial_share = 0.5;
  opt.damping_time = 0.5;
  const BCModuli m = bc_iso(10, 0.3, opt);
  const NodeMatrix x = perturbed(X, 0.1, rng);
  const Eigen::Vector3d w(0.3, -0.7, 0.2), c(1, 2, 3);
  NodeMatrix v;
  for (int i = 0; i < 8; ++i) v.col(i) = w.cross(Eigen::Vector3d(x.col(i))) + c;
  EXPECT_LT((bc_force(d, m, x, X, &v) - bc_force(d, m, x, X)).norm(), 1e-12);
  // ... while a stretching velocity is resisted.
  NodeMatrix stretch = NodeMatrix::Zero();
  stretch.row(0) = x.row(0);
  EXPECT_GT((bc_force(d, m, x, X, &stretch) - bc_force(d, m, x, X)).norm(), 1e-3);
}

INSTANTIATE_TEST_SUITE_P(Frames, BourguignonCaniLaws, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "oblique" : "aligned"; });

TEST(AxisLawTest, ExponentialLawIsGradientOfGuccioneEnergy) {
  // P = d psi / d lambda with psi = C/2 (exp(b E^2) - 1); small-strain modulus C b.
  BCModuli m;
  m.axial = {AxisLaw{AxisLaw::Kind::exponential, 16.0, 8.0}, AxisLaw{AxisLaw::Kind::exponential, 4.0, 2.0},
             AxisLaw{AxisLaw::Kind::exponential, 4.0, 2.0}};
  const NodeMatrix X = cube();
  const BCElementData d = bc_element_data(X, Eigen::Matrix3d::Identity());
  // Uniaxial stretch along f: the axial force equals V0/r * P(lambda) (docs/calibration.md sec. 3).
  for (double lambda : {0.9, 1.0001, 1.1, 1.2}) {
    NodeMatrix x = X;
    x.row(0) *= lambda;
    const NodeMatrix f = bc_force(d, m, x, X);
    const double E = 0.5 * (lambda * lambda - 1), C = 16.0 / 8.0, b = 8.0;
    const double P = lambda * C * b * E * std::exp(b * E * E);
    const double face = f(0, 1) + f(0, 2) + f(0, 5) + f(0, 6);                // the +x face nodes
    EXPECT_NEAR(-face, P, 1e-12 * (1 + std::abs(P))) << "lambda " << lambda;  // V0 = r = 1
  }
}

TEST(BaudetCubeLawTest, SpringsAreEnergyGradientAndCorrectionIsBalanced) {
  std::mt19937_64 rng(kSeed + 4);
  const NodeMatrix X = cube(1.5);
  const BaudetConstants c = calibrate_baudet(10, 0.4, 1.5, 0.2, 1.0);
  for (int trial = 0; trial < 3; ++trial) {
    const NodeMatrix x = perturbed(X, 0.1, rng);
    NodeMatrix f = NodeMatrix::Zero(), fd;
    baudet_element_forces(c, x, nullptr, X, f, false);
    const double h = 1e-6;
    for (int i = 0; i < 24; ++i) {
      NodeMatrix xp = x, xm = x, t = NodeMatrix::Zero();
      xp.data()[i] += h;
      xm.data()[i] -= h;
      const double ep = baudet_element_forces(c, xp, nullptr, X, t, false);
      const double em = baudet_element_forces(c, xm, nullptr, X, t, false);
      fd.data()[i] = -(ep - em) / (2 * h);
    }
    EXPECT_LT((f - fd).norm(), 1e-7 * (1 + f.norm()));
    // With the corrective forces and damping: zero net force and torque, objective.
    const NodeMatrix v = perturbed(NodeMatrix::Zero(), 1.0, rng);
    NodeMatrix fc = NodeMatrix::Zero();
    baudet_element_forces(c, x, &v, X, fc, true);
    Eigen::Vector3d torque = Eigen::Vector3d::Zero();
    for (int i = 0; i < 8; ++i) torque += x.col(i).cross(fc.col(i));
    EXPECT_LT(fc.rowwise().sum().norm(), 1e-12 * (1 + fc.norm()));
    EXPECT_LT(torque.norm(), 1e-12 * (1 + fc.norm()));
    const Eigen::Matrix3d Q = testing::random_rotation(rng);
    NodeMatrix fr = NodeMatrix::Zero(), fx = NodeMatrix::Zero();
    baudet_element_forces(c, (Q * x).colwise() + Eigen::Vector3d(1, 1, 1), nullptr, X, fr, true);
    baudet_element_forces(c, x, nullptr, X, fx, true);
    EXPECT_LT((fr - Q * fx).norm(), 1e-10 * (1 + fx.norm()));
  }
  NodeMatrix f0 = NodeMatrix::Zero();
  baudet_element_forces(c, X, nullptr, X, f0, true);
  EXPECT_LT(f0.norm(), 1e-12);
}

}  // namespace
}  // namespace cardio::mechanics
