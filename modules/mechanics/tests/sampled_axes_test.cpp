// The sampled-axes element (sampled_axes.hpp) against independent references: the continuum
// Guccione law at every sample of an affine motion (patch test), nodal forces of a uniform stress
// integrated independently, the exact hexahedron volume, forces against the energy gradient,
// objectivity of the production kernel, and exactly six zero-energy modes.
#include <gtest/gtest.h>

#include <Eigen/Eigenvalues>
#include <cmath>
#include <random>

#include "cardio/mechanics/myocardium.hpp"
#include "guccione_reference.hpp"
#include "test_support.hpp"

namespace cardio::mechanics {
namespace {

using testing::M3;
using testing::V3;

// A general (non-parallelepiped) hexahedron: a unit-ish cube with every node moved at random.
NodeMatrix distorted_hex(std::mt19937_64& rng, double amount = 0.15) {
  std::uniform_real_distribution<double> u(-amount, amount);
  const int corner[8][3] = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}, {0, 0, 1}, {1, 0, 1}, {1, 1, 1}, {0, 1, 1}};
  NodeMatrix X;
  for (int i = 0; i < 8; ++i)
    for (int d = 0; d < 3; ++d) X(d, i) = 1.2 * corner[i][d] + u(rng);
  return X;
}

std::array<M3, kSamples> random_frames(std::mt19937_64& rng) {
  std::array<M3, kSamples> R;
  for (auto& r : R) r = testing::random_rotation(rng);
  return R;
}

GuccioneLaw active_law() {
  GuccioneLaw law;
  law.bulk = 350;
  law.active.beta = 0.1;
  law.active.gamma = 0.3;
  law.cross_fibre = {0.3, 0.4};  // cross-fibre active stress (ActiveCrossFibre)
  return law;
}

// Independent trilinear gradient: dN_i/dX at xi from central differences of the shape functions
// and of the rest map (no code shared with the kernel).
Eigen::Matrix<double, 8, 3> reference_gradient(const NodeMatrix& X, const V3& xi) {
  auto N = [](const V3& p) {
    Eigen::Matrix<double, 8, 1> n;
    const int s[8][3] = {{-1, -1, -1}, {1, -1, -1}, {1, 1, -1}, {-1, 1, -1},
                         {-1, -1, 1},  {1, -1, 1},  {1, 1, 1},  {-1, 1, 1}};
    for (int i = 0; i < 8; ++i) n[i] = (1 + s[i][0] * p[0]) * (1 + s[i][1] * p[1]) * (1 + s[i][2] * p[2]) / 8;
    return n;
  };
  Eigen::Matrix<double, 8, 3> dNdxi;
  for (int a = 0; a < 3; ++a) {
    V3 h = V3::Zero();
    h[a] = 1e-6;
    dNdxi.col(a) = (N(xi + h) - N(xi - h)) / 2e-6;
  }
  return dNdxi * (X * dNdxi).inverse();
}

TEST(SampledAxes, ZeroForceAndEnergyAtRest) {
  std::mt19937_64 rng(3);
  const NodeMatrix X = distorted_hex(rng);
  const SampledElementData d = sampled_element_data(X, random_frames(rng));
  NodeMatrix f = NodeMatrix::Zero();
  EXPECT_NEAR(sampled_element_forces(d, active_law(), 0, 0, X, nullptr, f), 0, 1e-14);
  EXPECT_LT(f.norm(), 1e-12);  // rounding: the element's stiffness is about bulk * h^2 = 500 mN per unit strain
  // The rest volume is the exact volume of the trilinear hexahedron.
  EXPECT_NEAR(d.volume, hex_volume(X), 1e-12);
}

TEST(SampledAxes, AffinePatchGivesTheContinuumStressAtEverySample) {
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 5; ++trial) {
    const NodeMatrix X = distorted_hex(rng);
    // One frame for all samples: F-bar projects the dilatational part of the sample stresses onto
    // the element mean, which reproduces the continuum stress when the material inside the element
    // is uniform (varying frames are checked through the energy gradient below).
    auto frames = random_frames(rng);
    frames.fill(frames[0]);
    const SampledElementData d = sampled_element_data(X, frames);
    M3 F = M3::Identity() + 0.15 * M3::Random();
    const NodeMatrix x = (F * X).colwise() + V3(0.3, -0.2, 0.1);
    // Fibre tension only, and with cross-fibre active stress on the sheet and sheet-normal axes.
    for (const auto& [Ta, cross] : {std::pair{0.0, ActiveCrossFibre{}}, std::pair{12.0, ActiveCrossFibre{}},
                                    std::pair{12.0, ActiveCrossFibre{0.3, 0.5}}}) {
      GuccioneLaw law;
      law.bulk = 350;
      law.cross_fibre = cross;
      const testing::Reference ref = testing::reference_of(law, Ta);
      NodeMatrix f = NodeMatrix::Zero();
      const double W = sampled_element_forces(d, law, Ta, 0, x, nullptr, f);
      // Energy: sum_g w_g W_ref(R_g^T F R_g) (the penalty's Jbar = det F for an affine motion).
      double W_ref = 0;
      NodeMatrix f_ref = NodeMatrix::Zero();
      for (int g = 0; g < kSamples; ++g) {
        const M3& R = frames[std::size_t(g)];
        const M3 Fm = R.transpose() * F * R;  // F in the sample's material frame
        W_ref += d.weight[std::size_t(g)] * testing::ref_W(ref, Fm);
        // Nodal forces of the uniform stress: f_j = -sum_g w_g F S grad N_j (S rotated to xyz).
        const M3 P = F * (R * testing::ref_S(ref, Fm) * R.transpose());
        const Eigen::Matrix<double, 8, 3> G = reference_gradient(X, sample_xi(g));
        f_ref -= d.weight[std::size_t(g)] * P * G.transpose();
      }
      EXPECT_NEAR(W, W_ref, 1e-10 * std::abs(W_ref)) << "trial " << trial << " Ta " << Ta << " n_s " << cross.sheet;
      EXPECT_LT((f - f_ref).norm(), 1e-7 * f_ref.norm()) << "trial " << trial << " Ta " << Ta << " n_s " << cross.sheet;
    }
  }
}

TEST(SampledAxes, InteriorNodesOfADistortedPatchAreInEquilibriumUnderAffineMotion) {
  // Patch test: 2x2x2 block, centre node moved off the lattice; a uniform deformation leaves the
  // centre node with zero force (the 2x2x2 rule integrates grad N det J exactly on any hexahedron).
  const BlockSpec spec{2, 2, 2, 1.0, V3::Zero()};
  HexMesh mesh = make_block(spec, testing::oblique_fibres());
  const std::int32_t centre = block_node(spec, 1, 1, 1);
  mesh.rest.col(centre) += V3(0.17, -0.11, 0.08);
  GuccioneForces model(mesh, {active_law()}, ElementKind::sampled_axes);
  const std::vector<double> Ta(8, 20.0), activation(8, 0.4);
  const M3 F = M3::Identity() + 0.2 * M3::Random();
  const Eigen::Matrix3Xd x = F * mesh.rest;
  Eigen::Matrix3Xd f = Eigen::Matrix3Xd::Zero(3, x.cols());
  model.add_forces(x, Eigen::Matrix3Xd(), {1.0, Ta, activation}, f);
  EXPECT_LT(f.col(centre).norm(), 1e-10 * f.colwise().norm().maxCoeff());
  EXPECT_GT(f.colwise().norm().maxCoeff(), 1e-3);  // the boundary does carry the stress
}

TEST(SampledAxes, ForcesAreTheEnergyGradient) {
  std::mt19937_64 rng(7);
  const NodeMatrix X = distorted_hex(rng);
  const SampledElementData d = sampled_element_data(X, random_frames(rng));
  const GuccioneLaw law = active_law();
  NodeMatrix x = X + 0.12 * NodeMatrix::Random();
  NodeMatrix f = NodeMatrix::Zero();
  sampled_element_forces(d, law, 25.0, 0.6, x, nullptr, f);
  double worst = 0;
  for (int j = 0; j < 8; ++j)
    for (int c = 0; c < 3; ++c) {
      const double h = 1e-6;
      NodeMatrix xp = x, xm = x, scratch = NodeMatrix::Zero();
      xp(c, j) += h;
      xm(c, j) -= h;
      const double dW = (sampled_element_forces(d, law, 25.0, 0.6, xp, nullptr, scratch) -
                         sampled_element_forces(d, law, 25.0, 0.6, xm, nullptr, scratch)) /
                        (2 * h);
      worst = std::max(worst, std::abs(f(c, j) + dW));
    }
  EXPECT_LT(worst, 1e-6 * f.norm());
}

TEST(SampledAxes, TangentIsTheDerivativeOfTheForces) {
  // The automatic-differentiation tangent against central differences of the double kernel, at a
  // strongly deformed, active state of a distorted element: symmetric, zero on rigid translations.
  std::mt19937_64 rng(11);
  const NodeMatrix X = distorted_hex(rng);
  const SampledElementData d = sampled_element_data(X, random_frames(rng));
  const GuccioneLaw law = active_law();
  const NodeMatrix x = X + 0.12 * NodeMatrix::Random();
  ElementStiffness K;
  sampled_element_stiffness(d, law, 25.0, 0.6, x, K);
  ElementStiffness fd;
  const double h = 1e-6;
  for (int j = 0; j < 8; ++j)
    for (int c = 0; c < 3; ++c) {
      NodeMatrix xp = x, xm = x, fp = NodeMatrix::Zero(), fm = NodeMatrix::Zero();
      xp(c, j) += h;
      xm(c, j) -= h;
      sampled_element_forces(d, law, 25.0, 0.6, xp, nullptr, fp);
      sampled_element_forces(d, law, 25.0, 0.6, xm, nullptr, fm);
      const NodeMatrix df = fp - fm;
      fd.col(3 * j + c) = -Eigen::Map<const Eigen::Matrix<double, 24, 1>>(df.data()) / (2 * h);
    }
  EXPECT_LT((K - fd).cwiseAbs().maxCoeff(), 1e-6 * K.cwiseAbs().maxCoeff());
  EXPECT_LT((K - K.transpose()).cwiseAbs().maxCoeff(), 1e-10 * K.cwiseAbs().maxCoeff());
  for (int c = 0; c < 3; ++c) {
    Eigen::Matrix<double, 24, 1> t = Eigen::Matrix<double, 24, 1>::Zero();
    for (int j = 0; j < 8; ++j) t[3 * j + c] = 1;
    EXPECT_LT((K * t).cwiseAbs().maxCoeff(), 1e-10 * K.cwiseAbs().maxCoeff());
  }
  // At rest without tension: positive semi-definite with exactly six zero modes (rigid motions).
  sampled_element_stiffness(d, law, 0.0, 0.0, X, K);
  const Eigen::SelfAdjointEigenSolver<ElementStiffness> eig(0.5 * (K + K.transpose()));
  const double top = eig.eigenvalues().maxCoeff();
  int zero = 0;
  for (int i = 0; i < 24; ++i) {
    EXPECT_GT(eig.eigenvalues()[i], -1e-10 * top);
    zero += std::abs(eig.eigenvalues()[i]) < 1e-10 * top;
  }
  EXPECT_EQ(zero, 6);
}

TEST(SampledAxes, VolumeTermActsOnTheExactElementVolume) {
  // Jbar V0 equals the hexahedron's exact volume (divergence theorem, mesh.hpp) in any deformation.
  std::mt19937_64 rng(11);
  const NodeMatrix X = distorted_hex(rng);
  const SampledElementData d = sampled_element_data(X, random_frames(rng));
  const NodeMatrix x = X + 0.2 * NodeMatrix::Random();
  EXPECT_NEAR(sampled_element_dilatation(d, x).mean_J * d.volume, hex_volume(x), 1e-12 * hex_volume(x));
}

TEST(SampledAxes, ProductionKernelIsObjective) {
  std::mt19937_64 rng(13);
  const HexMesh mesh = make_block({3, 2, 2, 0.7, V3(1, 2, 3)}, FibreField{FibreField::Kind::random});
  GuccioneForces model(mesh, {active_law()}, ElementKind::sampled_axes);
  const std::vector<double> Ta(std::size_t(mesh.n_elements()), 15.0), activation(Ta.size(), 0.5);
  const ForceInputs in{1.0, Ta, activation};
  Eigen::Matrix3Xd x = mesh.rest + 0.08 * Eigen::Matrix3Xd::Random(3, mesh.n_nodes());
  const Eigen::VectorXd f0 = testing::flat_forces(model, x, in);
  const double W0 = model.energy(x, in);
  for (int k = 0; k < 3; ++k) {
    const M3 Q = testing::random_rotation(rng);
    const Eigen::Matrix3Xd y = (Q * x).colwise() + V3(4, -2, 7);
    const Eigen::VectorXd f1 = testing::flat_forces(model, y, in);
    Eigen::Matrix3Xd rotated = Q * Eigen::Map<const Eigen::Matrix3Xd>(f0.data(), 3, x.cols());
    EXPECT_LT((f1 - Eigen::Map<const Eigen::VectorXd>(rotated.data(), rotated.size())).norm(), 1e-10 * f0.norm());
    EXPECT_NEAR(model.energy(y, in), W0, 1e-11 * std::abs(W0));
  }
}

int zero_modes(const HexMesh& mesh) {
  GuccioneForces model(mesh, {GuccioneLaw{}}, ElementKind::sampled_axes);
  const Eigen::MatrixXd K = testing::fd_stiffness(model, mesh.rest);
  const Eigen::VectorXd ev = Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(0.5 * (K + K.transpose())).eigenvalues();
  return int((ev.cwiseAbs().array() < 1e-7 * ev.cwiseAbs().maxCoeff()).count());
}

TEST(SampledAxes, FreeBlockHasExactlySixZeroModesWithoutHourglassControl) {
  const BlockSpec spec{3, 3, 3, 1.0, V3::Zero()};
  EXPECT_EQ(zero_modes(make_block(spec, FibreField{})), 6) << "aligned frames";
  EXPECT_EQ(zero_modes(make_block(spec, testing::oblique_fibres())), 6) << "oblique frames";
  // Per-sample frames turning through the block, as in a heart wall.
  HexMesh turning = make_block(spec, FibreField{});
  std::mt19937_64 rng(17);
  turning.sample_fibre.resize(3, 8 * turning.n_elements());
  turning.sample_sheet.resize(3, 8 * turning.n_elements());
  for (Eigen::Index c = 0; c < turning.sample_fibre.cols(); ++c) {
    const M3 R = testing::random_rotation(rng);
    turning.sample_fibre.col(c) = R.col(0);
    turning.sample_sheet.col(c) = R.col(1);
  }
  EXPECT_EQ(zero_modes(turning), 6) << "random per-sample frames";
  EXPECT_EQ(zero_modes(make_block({1, 1, 1, 1.0, V3::Zero()}, FibreField{})), 6) << "one element";
}

TEST(SampledAxes, FBarEnergyGrowsWithoutBoundAsOneSampleCollapses) {
  // Push node 0 of a cube into the element until its octant's sample collapses. The Guccione
  // energy of a compressed sample is bounded (E -> -I/2), so without F-bar a sample could invert
  // at finite energy whenever the element's mean volume is kept. With F-bar the law sees
  // (Jbar / J_0)^(1/3) F_0 and the energy diverges as J_0 -> 0, even with no volume penalty.
  // An inverted sample gives NaN, never a finite energy.
  std::mt19937_64 rng(23);
  const NodeMatrix X = distorted_hex(rng, 0.0);
  const SampledElementData d = sampled_element_data(X, random_frames(rng));
  GuccioneLaw law;  // Land et al. 2015 problem 2 constants (mild exponent: no overflow)
  law.C = 10;
  law.b_f = law.b_t = law.b_fs = 1;
  law.bulk = 0;
  auto state = [&](double t) {
    NodeMatrix x = X;
    x.col(0) += t * V3(1, 1, 1);
    return x;
  };
  double lo = 0, hi = 1.2;  // bisection for the collapse of the first sample
  for (int k = 0; k < 60; ++k)
    (sampled_element_dilatation(d, state(0.5 * (lo + hi))).min_sample_J > 0 ? lo : hi) = 0.5 * (lo + hi);
  ASSERT_GT(lo, 0.1);
  double previous = 0, first = 0;
  for (int k = 1; k <= 6; ++k) {
    NodeMatrix f = NodeMatrix::Zero();
    const double W = sampled_element_forces(d, law, 0, 0, state(lo * (1 - std::pow(2.0, -k))), nullptr, f);
    EXPECT_GT(W, previous) << "2^-" << k << " before collapse";
    if (k == 1) first = W;
    previous = W;
  }
  EXPECT_GT(previous, 100 * first);
  NodeMatrix f = NodeMatrix::Zero();
  EXPECT_TRUE(std::isnan(sampled_element_forces(d, law, 0, 0, state(hi + 0.01), nullptr, f)));
  EXPECT_TRUE(f.array().isNaN().all());
}

TEST(SampledAxes, RejectsAnElementInvertedAtRest) {
  std::mt19937_64 rng(19);
  NodeMatrix X = distorted_hex(rng, 0.0);
  X.col(0).swap(X.col(6));  // two opposite corners exchanged
  EXPECT_THROW(sampled_element_data(X, random_frames(rng)), cardio::Error);
}

TEST(SampledAxes, WorstElementFindsTheInvertedOne) {
  const HexMesh mesh = make_block({3, 1, 1, 1.0, V3::Zero()}, FibreField{});
  Eigen::Matrix3Xd x = mesh.rest;
  EXPECT_NEAR(worst_element(mesh, x).J, 1.0, 1e-12);
  // Push the +x face of element 2 through its -x face.
  for (std::int32_t n = 0; n < mesh.n_nodes(); ++n)
    if (mesh.rest(0, n) > 2.5) x(0, n) = 1.5;
  const WorstElement w = worst_element(mesh, x);
  EXPECT_EQ(w.element, 2);
  EXPECT_LT(w.J, 0);
}

}  // namespace
}  // namespace cardio::mechanics
