// Calibration: the element's small-strain stiffness equals the requested constants, in closed
// form and by energy of one element under affine strain, for aligned and oblique frames.
#include <gtest/gtest.h>

#include "test_support.hpp"

namespace cardio::mechanics {
namespace {

using Voigt = Eigen::Matrix<double, 6, 6>;

Voigt isotropic_voigt(double E, double nu) {
  const double lam = E * nu / ((1 + nu) * (1 - 2 * nu)), mu = E / (2 * (1 + nu));
  Voigt C = Voigt::Zero();
  C.topLeftCorner<3, 3>().setConstant(lam);
  for (int i = 0; i < 3; ++i) C(i, i) += 2 * mu, C(i + 3, i + 3) = mu;
  return C;
}

TEST(CalibrationTest, IsotropicStiffnessIsExact) {
  for (double nu : {-0.3, 0.0, 0.3, 0.4, 0.45, 0.49}) {
    const Voigt C = stiffness_voigt(testing::bc_iso(7.0, nu));
    EXPECT_LT((C - isotropic_voigt(7.0, nu)).norm(), 1e-10 * C.norm()) << "nu " << nu;
    BCCalibration radial;
    radial.radial_share = 1.0;
    const Voigt Cr = stiffness_voigt(testing::bc_iso(7.0, nu, radial));
    EXPECT_LT((Cr - isotropic_voigt(7.0, nu)).norm(), 1e-10 * C.norm()) << "radial springs, nu " << nu;
  }
}

TEST(CalibrationTest, TransverselyIsotropicConstantsAreRecovered) {
  const ElasticConstants c = ElasticConstants::transversely_isotropic(50.0, 5.0, 3.0, 0.4);
  const Voigt S = stiffness_voigt(calibrate_bourguignon_cani(c, {})).inverse();
  EXPECT_NEAR(1 / S(0, 0), 50.0, 1e-9);
  EXPECT_NEAR(1 / S(1, 1), 5.0, 1e-9);
  EXPECT_NEAR(1 / S(2, 2), 5.0, 1e-9);
  EXPECT_NEAR(-S(2, 1) / S(1, 1), 0.4, 1e-9);
  EXPECT_NEAR(1 / S(5, 5), 3.0, 1e-9);        // f-s shear
  EXPECT_NEAR(1 / S(4, 4), 3.0, 1e-9);        // f-n shear
  EXPECT_NEAR(1 / S(3, 3), 5.0 / 2.8, 1e-9);  // isotropic s-n plane: E_c / (2 (1 + nu))

  const ElasticConstants k = ElasticConstants::transversely_isotropic_bulk(50.0, 5.0, 3.0, 20.0);
  const Voigt Sk = stiffness_voigt(calibrate_bourguignon_cani(k, {})).inverse();
  const double bulk = 1 / Sk.topLeftCorner<3, 3>().sum();
  EXPECT_NEAR(bulk, 20.0, 1e-8);
  EXPECT_NEAR(1 / Sk(0, 0), 50.0, 1e-8);
}

TEST(CalibrationTest, UnrepresentableConstantsAreRejected) {
  EXPECT_THROW(ElasticConstants::isotropic(-1, 0.3), Error);
  EXPECT_THROW(ElasticConstants::isotropic(1, 0.5), Error);
  EXPECT_THROW(ElasticConstants::isotropic(1, -1), Error);
  // A fibre modulus far below the cross-fibre one cannot be reached with one coupling modulus.
  EXPECT_THROW(calibrate_bourguignon_cani(ElasticConstants::transversely_isotropic(0.1, 10, 1, 0.45), {}), Error);
  EXPECT_THROW(calibrate_baudet(10, 0.5, 1, 0), Error);
  EXPECT_THROW(calibrate_baudet(10, -0.3, 1, 0), Error);
}

TEST(CalibrationTest, BaudetClosedForms) {
  // Baudet et al. 2007, eqs. 7-9.
  const BaudetConstants c = calibrate_baudet(12.0, 0.3, 2.0, 0.0, 1.0);
  EXPECT_DOUBLE_EQ(c.k_edge, 12.0 * 2.0 * (4 * 0.3 + 1) / (8 * 1.3));
  EXPECT_DOUBLE_EQ(c.k_diag, 3 * 12.0 * 2.0 / (8 * 1.3));
  EXPECT_DOUBLE_EQ(c.gamma, (4 * 0.3 - 1) / 2);
}

// Energy of one element under the affine strain eps (small) equals V0/2 eps:C:eps of the
// requested material rotated into the element's frame: the calibration holds for any frame.
class SingleElementEnergy : public ::testing::TestWithParam<int> {};

TEST_P(SingleElementEnergy, MatchesContinuum) {
  const int which = GetParam();
  FibreField ff = which == 0 ? FibreField{} : testing::oblique_fibres();
  const HexMesh mesh = make_block({1, 1, 1, 2.0, Eigen::Vector3d(1, 2, 3)}, ff);
  Eigen::Matrix3d R;
  R << mesh.fibre.col(0), mesh.sheet.col(0), mesh.normal(0);
  const ElasticConstants c =
      which == 2 ? ElasticConstants::transversely_isotropic(40, 4, 2, 0.35) : ElasticConstants::isotropic(10, 0.4);
  const BCModuli m = calibrate_bourguignon_cani(c, {});
  const Voigt C = rotate_voigt(stiffness_voigt(m), R);
  const NodeMatrix X = gather(mesh.rest, mesh.hexes[0]);
  const BCElementData d = bc_element_data(X, R);
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int trial = 0; trial < 5; ++trial) {
    Eigen::Matrix3d eps;
    for (int i = 0; i < 3; ++i)
      for (int j = i; j < 3; ++j) eps(i, j) = eps(j, i) = 1e-5 * u(rng);
    const NodeMatrix x = X + eps * X;
    NodeMatrix f = NodeMatrix::Zero();
    const double W = bc_element_forces(d, m, x, nullptr, X, f);
    Eigen::Matrix<double, 6, 1> e;
    e << eps(0, 0), eps(1, 1), eps(2, 2), 2 * eps(1, 2), 2 * eps(0, 2), 2 * eps(0, 1);
    const double W_cont = d.volume * 0.5 * e.dot(C * e);
    EXPECT_NEAR(W / W_cont, 1.0, 1e-4) << "trial " << trial;
  }
}

INSTANTIATE_TEST_SUITE_P(Frames, SingleElementEnergy, ::testing::Values(0, 1, 2), [](const auto& info) {
  return info.param == 0   ? "aligned_isotropic"
         : info.param == 1 ? "oblique_isotropic"
                           : "oblique_transversely_isotropic";
});

TEST(CalibrationTest, DeformationGradientFromAxesIsExactForAffineMaps) {
  const HexMesh mesh = make_block({1, 1, 1, 1.5, Eigen::Vector3d::Zero()}, testing::oblique_fibres());
  Eigen::Matrix3d R;
  R << mesh.fibre.col(0), mesh.sheet.col(0), mesh.normal(0);
  const NodeMatrix X = gather(mesh.rest, mesh.hexes[0]);
  const BCElementData d = bc_element_data(X, R);
  Eigen::Matrix3d F;
  F << 1.2, 0.1, -0.3, 0.05, 0.9, 0.2, 0.0, -0.1, 1.1;
  const NodeMatrix x = (F * X).colwise() + Eigen::Vector3d(3, 4, 5);
  EXPECT_LT((bc_deformation_gradient(d, R, x) - F).norm(), 1e-12);
}

}  // namespace
}  // namespace cardio::mechanics
