// Element-centre kinematics against closed forms: homogeneous stretch, simple shear, rigid motion,
// volume change, affine maps of distorted hexahedra (exact), a twist (O(h^2)), strain relative to a
// reference configuration, the cardiac (r, c, l) directions, errors and thread-count determinism.
#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <cmath>
#include <iostream>

#include "cardio/analysis/strain.hpp"
#include "cardio/analysis/volumes.hpp"
#include "cardio/core/error.hpp"
#include "cardio/core/parallel.hpp"
#include "test_meshes.hpp"

namespace cardio::analysis {
namespace {

using testing::affine;
using testing::block;

Eigen::Matrix3d F_of(const ElementStrains& s, Eigen::Index e) {
  Eigen::Matrix3d F;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) F(i, j) = s.F(3 * i + j, e);
  return F;
}
Eigen::Matrix3d E_of(const ElementStrains& s, Eigen::Index e) {
  Eigen::Matrix3d E;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) E(i, j) = s.E(3 * i + j, e);
  return E;
}

const CardiacAxis kZAxis{Eigen::Vector3d(0, 0, 0), Eigen::Vector3d(0, 0, 1)};

TEST(AnalysisStrain, HomogeneousStretchGivesTheClosedFormStrains) {
  const mechanics::HexMesh m = block(3, 1.5, Eigen::Vector3d(2, 1, -4));
  const double a = 1.2, b = 0.9, c = 0.8;
  const Eigen::Matrix3Xd x = affine(m.rest, Eigen::Vector3d(a, b, c).asDiagonal(), Eigen::Vector3d(0.3, -2, 1));
  const ElementStrains s = strains(m, x, rest_directions(m, kZAxis));
  const Eigen::Matrix3Xd principal = principal_strains(s);
  double err = 0;
  for (Eigen::Index e = 0; e < m.n_elements(); ++e) {
    err = std::max(err, (F_of(s, e) - Eigen::Matrix3d(Eigen::Vector3d(a, b, c).asDiagonal())).cwiseAbs().maxCoeff());
    err = std::max(err, std::abs(s.E_ff(e) - (a * a - 1) / 2));
    err = std::max(err, std::abs(s.E_ss(e) - (b * b - 1) / 2));
    err = std::max(err, std::abs(s.E_nn(e) - (c * c - 1) / 2));
    err = std::max(err, std::abs(s.J(e) - a * b * c));
    // Principal strains ascending: (c^2-1)/2 < (b^2-1)/2 < (a^2-1)/2.
    err = std::max(
        err,
        (principal.col(e) - Eigen::Vector3d((c * c - 1) / 2, (b * b - 1) / 2, (a * a - 1) / 2)).cwiseAbs().maxCoeff());
  }
  std::cout << "stretch: max error " << err << "\n";
  EXPECT_LT(err, 1e-14);
}

TEST(AnalysisStrain, FibreStretchOfAHomogeneousStretchIsTheStretchedUnitFibre) {
  mechanics::HexMesh m = block(3, 1.5, Eigen::Vector3d(2, 1, -4));
  const Eigen::Vector3d fibre = Eigen::Vector3d(1, 2, 2) / 3.0;  // a unit vector off the axes
  m.fibre = fibre.replicate(1, m.n_elements());
  const Eigen::Matrix3d F = Eigen::Vector3d(1.2, 0.9, 0.8).asDiagonal();
  const Eigen::VectorXd lambda = fibre_stretch(m, affine(m.rest, F, Eigen::Vector3d(0.3, -2, 1)));
  // |F f0| = sqrt((1.2/3)^2 + (1.8/3)^2 + (1.6/3)^2)
  const double expected = std::sqrt(0.16 + 0.36 + 1.6 * 1.6 / 9.0);
  ASSERT_EQ(lambda.size(), m.n_elements());
  for (Eigen::Index e = 0; e < lambda.size(); ++e) EXPECT_NEAR(lambda[e], expected, 1e-12);
}

TEST(AnalysisStrain, SimpleShearGivesTheClosedFormStrains) {
  mechanics::HexMesh m = block(2, 1.0);
  m.fibre.colwise() = Eigen::Vector3d(1, 1, 0).normalized();
  m.sheet.colwise() = Eigen::Vector3d(-1, 1, 0).normalized();
  const double g = 0.35;
  Eigen::Matrix3d A = Eigen::Matrix3d::Identity();
  A(0, 1) = g;  // x = X + g Y e_x
  const ElementStrains s = strains(m, affine(m.rest, A, Eigen::Vector3d::Zero()), rest_directions(m, kZAxis));
  Eigen::Matrix3d E_exact;
  E_exact << 0, g / 2, 0, g / 2, g * g / 2, 0, 0, 0, 0;
  // Eigenvalues of the xy block [[0, g/2], [g/2, g^2/2]] and 0.
  const double m0 = g * g / 4, rad = std::sqrt(g * g * g * g / 16 + g * g / 4);
  const Eigen::Matrix3Xd principal = principal_strains(s);
  double err = 0;
  for (Eigen::Index e = 0; e < m.n_elements(); ++e) {
    err = std::max(err, (E_of(s, e) - E_exact).cwiseAbs().maxCoeff());
    err = std::max(err, std::abs(s.J(e) - 1));
    err = std::max(err, std::abs(s.E_ff(e) - (g / 2 + g * g / 4)));   // f = (1,1,0)/sqrt2
    err = std::max(err, std::abs(s.E_ss(e) - (-g / 2 + g * g / 4)));  // s = (-1,1,0)/sqrt2
    err = std::max(err, std::abs(s.E_nn(e)));
    err = std::max(err, (principal.col(e) - Eigen::Vector3d(m0 - rad, 0, m0 + rad)).cwiseAbs().maxCoeff());
  }
  std::cout << "shear: max error " << err << "\n";
  EXPECT_LT(err, 1e-14);
}

TEST(AnalysisStrain, RigidMotionOfDistortedHexahedraHasZeroStrain) {
  const mechanics::HexMesh m = block(3, 2.0, Eigen::Vector3d(30, -20, 100), 0.4);
  const Eigen::Matrix3d R = Eigen::AngleAxisd(2.1, Eigen::Vector3d(0.3, -1, 0.7).normalized()).toRotationMatrix();
  const ElementStrains s = strains(m, affine(m.rest, R, Eigen::Vector3d(-50, 4, 7)), rest_directions(m, kZAxis));
  double e_max = 0, f_err = 0, j_err = 0;
  for (Eigen::Index e = 0; e < m.n_elements(); ++e) {
    e_max = std::max(e_max, s.E.col(e).cwiseAbs().maxCoeff());
    f_err = std::max(f_err, (F_of(s, e) - R).cwiseAbs().maxCoeff());
    j_err = std::max(j_err, std::abs(s.J(e) - 1));
  }
  // Round-off floor: coordinates near 120 mm carry 120 eps absolute error, over 2 mm edges.
  const double floor = 120 * 2.2e-16 / 2.0;
  std::cout << "rigid: max |E| " << e_max << ", |F - R| " << f_err << ", |J - 1| " << j_err << " (round-off floor "
            << floor << ")\n";
  EXPECT_LT(e_max, 4 * floor);
  EXPECT_LT(f_err, 4 * floor);
  EXPECT_LT(j_err, 4 * floor);
}

TEST(AnalysisStrain, RigidRotationNearTheOriginHasZeroStrainToRoundOff) {
  const mechanics::HexMesh m = block(3, 1.0, Eigen::Vector3d(-1.5, -1.5, -1.5), 0.2);
  const Eigen::Matrix3d R = Eigen::AngleAxisd(0.8, Eigen::Vector3d(1, 1, -0.5).normalized()).toRotationMatrix();
  const ElementStrains s = strains(m, affine(m.rest, R, Eigen::Vector3d::Zero()), rest_directions(m, kZAxis));
  std::cout << "rigid near the origin: max |E| " << s.E.cwiseAbs().maxCoeff() << "\n";
  EXPECT_LT(s.E.cwiseAbs().maxCoeff(), 1e-14);
  EXPECT_LT((s.J.array() - 1).abs().maxCoeff(), 1e-14);
}

TEST(AnalysisStrain, AffineMapOfDistortedHexahedraIsExactIncludingTheVolumeChange) {
  const mechanics::HexMesh m = block(3, 1.0, Eigen::Vector3d(-1, 2, 3), 0.22, 11);
  Eigen::Matrix3d A;
  A << 1.3, 0.2, -0.1, 0.05, 0.9, 0.3, -0.2, 0.1, 1.1;
  const Eigen::Matrix3Xd x = affine(m.rest, A, Eigen::Vector3d(1, 2, 3));
  const ElementStrains s = strains(m, x, rest_directions(m, kZAxis));
  double f_err = 0, j_err = 0;
  for (Eigen::Index e = 0; e < m.n_elements(); ++e) {
    f_err = std::max(f_err, (F_of(s, e) - A).cwiseAbs().maxCoeff());
    j_err = std::max(j_err, std::abs(s.J(e) - A.determinant()));
  }
  const double dv = relative_volume_change(m, x);
  std::cout << "affine on distorted hexes: |F - A| " << f_err << ", |J - det A| " << j_err << ", volume change " << dv
            << " vs " << A.determinant() - 1 << "\n";
  EXPECT_LT(f_err, 1e-13);
  EXPECT_LT(j_err, 1e-13);
  EXPECT_NEAR(dv, A.determinant() - 1, 1e-13);
  EXPECT_NEAR(tissue_volume(m, x), A.determinant() * tissue_volume(m, m.rest), 1e-12);
}

TEST(AnalysisStrain, KnownVolumeChangeGivesJ) {
  const mechanics::HexMesh m = block(2, 1.0);
  const double scale = std::cbrt(1.25);  // isotropic: V -> 1.25 V
  const ElementStrains s = strains(m, scale * m.rest, rest_directions(m, kZAxis));
  for (Eigen::Index e = 0; e < m.n_elements(); ++e) EXPECT_NEAR(s.J(e), 1.25, 1e-14);
  EXPECT_NEAR(relative_volume_change(m, scale * m.rest), 0.25, 1e-14);
}

/// Twist about z by kappa rad/mm: x = Rz(kappa Z) (X, Y) + Z e_z; not affine.
Eigen::Vector3d twist(const Eigen::Vector3d& X, double kappa) {
  const double c = std::cos(kappa * X.z()), s = std::sin(kappa * X.z());
  return {c * X.x() - s * X.y(), s * X.x() + c * X.y(), X.z()};
}
Eigen::Matrix3d twist_gradient(const Eigen::Vector3d& X, double kappa) {
  const double c = std::cos(kappa * X.z()), s = std::sin(kappa * X.z());
  Eigen::Matrix3d F;
  F << c, -s, kappa * (-s * X.x() - c * X.y()),  //
      s, c, kappa * (c * X.x() - s * X.y()),     //
      0, 0, 1;
  return F;
}

TEST(AnalysisStrain, TwistMatchesTheAnalyticGradientToSecondOrderInTheElementSize) {
  // Not affine: the centre gradient is a centred difference, error O(h^2) (halving h divides it by 4).
  const double kappa = 0.05;  // rad/mm
  double previous = 0;
  for (int n : {4, 8, 16}) {
    const double h = 8.0 / n;
    const mechanics::HexMesh m = block(n, h, Eigen::Vector3d(2, -3, 0));
    Eigen::Matrix3Xd x(3, m.n_nodes());
    for (Eigen::Index i = 0; i < m.n_nodes(); ++i) x.col(i) = twist(m.rest.col(i), kappa);
    const ElementStrains s = strains(m, x, rest_directions(m, kZAxis));
    const Eigen::Matrix3Xd c = element_centres(m, m.rest);
    double f_err = 0, e_err = 0;
    for (Eigen::Index e = 0; e < m.n_elements(); ++e) {
      const Eigen::Matrix3d F = twist_gradient(c.col(e), kappa);
      f_err = std::max(f_err, (F_of(s, e) - F).cwiseAbs().maxCoeff());
      e_err = std::max(e_err, (E_of(s, e) - green_lagrange(F)).cwiseAbs().maxCoeff());
    }
    std::cout << "twist h = " << h << " mm: max |F - F_exact| " << f_err << ", |E - E_exact| " << e_err << "\n";
    // Leading error: the centre gradient averages 4 edge differences offset by +-h/2 across the edge, so
    // dx/dX picks up (h^2/8) d^2/dZ^2 (dx/dX) = (h^2/8) kappa^2 (cos, sin, 0): kappa^2 h^2 / 8.
    EXPECT_LT(f_err, 1.05 * kappa * kappa * h * h / 8);
    EXPECT_GT(f_err, 0.95 * kappa * kappa * h * h / 8);  // the measured error is that term
    if (previous > 0) {
      EXPECT_GT(previous / f_err, 3.5);
      EXPECT_LT(previous / f_err, 4.5);
    }
    previous = f_err;
  }
}

TEST(AnalysisStrain, StrainRelativeToAReferenceOfComposedAffineMaps) {
  mechanics::HexMesh m = block(3, 1.0, Eigen::Vector3d(4, 0, -2), 0.2, 5);
  for (Eigen::Index e = 0; e < m.n_elements(); ++e) {  // a non-trivial rest frame
    m.fibre.col(e) = Eigen::Vector3d(1, 2, 0.5).normalized();
    m.sheet.col(e) = Eigen::Vector3d(1, 2, 0.5).cross(Eigen::Vector3d(0, 0, 1)).normalized();
  }
  Eigen::Matrix3d A, B;  // rest -> reference (e.g. end-diastole), reference -> current
  A << 1.1, 0.1, 0, 0, 1.05, 0.05, 0.02, 0, 0.95;
  B << 0.85, -0.05, 0.1, 0.02, 1.1, 0, 0, 0.08, 1.02;
  const Eigen::Matrix3Xd x_ref = affine(m.rest, A, Eigen::Vector3d(1, 1, 1));
  const Eigen::Matrix3Xd x = affine(x_ref, B, Eigen::Vector3d(-2, 0, 3));
  const ElementDirections rest = rest_directions(m, kZAxis);
  const ElementDirections ref = push_forward(m, x_ref, rest);
  const ElementStrains s = strains_relative(m, x_ref, x, ref);
  double err = 0;
  for (Eigen::Index e = 0; e < m.n_elements(); ++e) {
    err = std::max(err, (F_of(s, e) - B).cwiseAbs().maxCoeff());
    err = std::max(err, (E_of(s, e) - 0.5 * (B.transpose() * B - Eigen::Matrix3d::Identity())).cwiseAbs().maxCoeff());
    err = std::max(err, std::abs(s.J(e) - B.determinant()));
    // Fibre strain from the reference: half the squared stretch ratio of the material fibre minus 1.
    const Eigen::Vector3d f0 = m.fibre.col(e);
    const double ratio = (B * A * f0).squaredNorm() / (A * f0).squaredNorm();
    err = std::max(err, std::abs(s.E_ff(e) - (ratio - 1) / 2));
    err = std::max(err, (ref.fibre.col(e) - (A * f0).normalized()).cwiseAbs().maxCoeff());
    // Same for the longitudinal material line (rest direction z).
    const Eigen::Vector3d l0(0, 0, 1);
    err = std::max(err, std::abs(s.E_ll(e) - ((B * A * l0).squaredNorm() / (A * l0).squaredNorm() - 1) / 2));
  }
  std::cout << "relative to reference: max error " << err << "\n";
  EXPECT_LT(err, 1e-13);
}

/// Two separate unit cubes centred at `a` and `b`.
mechanics::HexMesh two_cubes(const Eigen::Vector3d& a, const Eigen::Vector3d& b) {
  const mechanics::HexMesh ca = block(1, 1.0, a - Eigen::Vector3d::Constant(0.5));
  const mechanics::HexMesh cb = block(1, 1.0, b - Eigen::Vector3d::Constant(0.5));
  mechanics::HexMesh m = ca;
  m.rest.resize(3, 16);
  m.rest << ca.rest, cb.rest;
  mechanics::Hex h = cb.hexes[0];
  for (auto& i : h) i += 8;
  m.hexes.push_back(h);
  m.fibre = Eigen::Vector3d::UnitX().replicate(1, 2);
  m.sheet = Eigen::Vector3d::UnitY().replicate(1, 2);
  m.material.assign(2, 0);
  return m;
}

TEST(AnalysisStrain, CardiacDirectionsAboutTheLongAxis) {
  // Axis along +z through (1, 1, 0); direction given unnormalised. Cubes at +x and -y of the axis.
  const CardiacAxis axis{Eigen::Vector3d(1, 1, -3), Eigen::Vector3d(0, 0, 2.5)};
  const mechanics::HexMesh m = two_cubes(Eigen::Vector3d(6, 1, 2), Eigen::Vector3d(1, -4, 7));
  const ElementDirections d = rest_directions(m, axis);
  EXPECT_LT((d.radial.col(0) - Eigen::Vector3d(1, 0, 0)).norm(), 1e-15);
  EXPECT_LT((d.circumferential.col(0) - Eigen::Vector3d(0, 1, 0)).norm(), 1e-15);  // l x r: counterclockwise from base
  EXPECT_LT((d.radial.col(1) - Eigen::Vector3d(0, -1, 0)).norm(), 1e-15);
  EXPECT_LT((d.circumferential.col(1) - Eigen::Vector3d(1, 0, 0)).norm(), 1e-15);
  EXPECT_LT((d.longitudinal.col(1) - Eigen::Vector3d(0, 0, 1)).norm(), 1e-15);
  EXPECT_LT((d.normal.col(0) - Eigen::Vector3d(0, 0, 1)).norm(), 1e-15);  // f x s
  // Stretch diag(a, b, c): cube 0 has r = x, c = y; cube 1 has r = -y, c = x.
  const double a = 1.1, b = 0.85, c = 0.95;
  const ElementStrains s =
      strains(m, affine(m.rest, Eigen::Vector3d(a, b, c).asDiagonal(), Eigen::Vector3d::Zero()), d);
  EXPECT_NEAR(s.E_rr(0), (a * a - 1) / 2, 1e-15);
  EXPECT_NEAR(s.E_cc(0), (b * b - 1) / 2, 1e-15);
  EXPECT_NEAR(s.E_rr(1), (b * b - 1) / 2, 1e-15);
  EXPECT_NEAR(s.E_cc(1), (a * a - 1) / 2, 1e-15);
  EXPECT_NEAR(s.E_ll(0), (c * c - 1) / 2, 1e-15);
  EXPECT_LT(s.E_cc(0), 0);  // circumferential shortening is negative
}

TEST(AnalysisStrain, ElementOnTheAxisGetsTheDocumentedFallbackRadial) {
  const mechanics::HexMesh m = two_cubes(Eigen::Vector3d(0, 0, 0), Eigen::Vector3d(0, 3, 0));
  const ElementDirections d = rest_directions(m, CardiacAxis{Eigen::Vector3d::Zero(), Eigen::Vector3d(0, 0, 1)});
  EXPECT_EQ(d.radial.col(0), Eigen::Vector3d(1, 0, 0));  // the coordinate axis most orthogonal to l (first of ties)
  EXPECT_EQ(d.circumferential.col(0), Eigen::Vector3d(0, 1, 0));
}

TEST(AnalysisStrain, BadInputThrowsClearErrors) {
  mechanics::HexMesh m = block(2, 1.0);
  EXPECT_THROW(rest_directions(m, CardiacAxis{Eigen::Vector3d::Zero(), Eigen::Vector3d::Zero()}), cardio::Error);
  EXPECT_THROW(rest_directions(m, CardiacAxis{Eigen::Vector3d::Zero(), Eigen::Vector3d(0, NAN, 1)}), cardio::Error);
  const ElementDirections d = rest_directions(m, kZAxis);
  EXPECT_THROW(strains(m, m.rest.leftCols(5), d), cardio::Error);
  mechanics::HexMesh flat = m;
  for (Eigen::Index i = 0; i < flat.n_nodes(); ++i) flat.rest(2, i) = 0;  // every element degenerate
  try {
    strains(flat, flat.rest, d);
    ADD_FAILURE() << "no error for degenerate elements";
  } catch (const cardio::Error& e) {
    EXPECT_NE(std::string(e.what()).find("degenerate"), std::string::npos) << e.what();
  }
  Eigen::Matrix3Xd collapsed = m.rest;
  collapsed.row(0).setZero();  // F(x_ref) singular
  EXPECT_THROW(strains_relative(m, collapsed, m.rest, d), cardio::Error);
  EXPECT_THROW(push_forward(m, collapsed, d), cardio::Error);
}

TEST(AnalysisStrain, ResultsAreBitIdenticalForAnyThreadCount) {
  const mechanics::HexMesh m = block(12, 1.0, Eigen::Vector3d(-6, -6, -6), 0.2, 3);
  Eigen::Matrix3Xd x(3, m.n_nodes());
  for (Eigen::Index i = 0; i < m.n_nodes(); ++i) x.col(i) = twist(m.rest.col(i), 0.1) * 1.02;
  const int threads = thread_count();
  set_thread_count(1);
  const ElementStrains a = strains(m, x, rest_directions(m, kZAxis));
  const double va = tissue_volume(m, x);
  set_thread_count(std::max(2, threads));
  const ElementStrains b = strains(m, x, rest_directions(m, kZAxis));
  const double vb = tissue_volume(m, x);
  set_thread_count(threads);
  EXPECT_TRUE((a.E.array() == b.E.array()).all());
  EXPECT_TRUE((a.E_cc.array() == b.E_cc.array()).all());
  set_thread_count(1);
  const Eigen::Matrix3Xd principal_a = principal_strains(a);
  set_thread_count(std::max(2, threads));
  const Eigen::Matrix3Xd principal_b = principal_strains(b);
  set_thread_count(threads);
  EXPECT_TRUE((principal_a.array() == principal_b.array()).all());
  EXPECT_EQ(va, vb);
  EXPECT_GT(a.E.cwiseAbs().maxCoeff(), 1e-3);  // the comparison is not between zeros
}

}  // namespace
}  // namespace cardio::analysis
