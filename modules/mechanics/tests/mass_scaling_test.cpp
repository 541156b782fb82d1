// Selective mass scaling (mass_scaling.hpp) against the assembled problem: the highest natural
// frequency from the dense generalised eigenproblem K u = omega^2 M u of the whole block, which
// shares no code with the element bounds.
#include <gtest/gtest.h>

#include <Eigen/Eigenvalues>
#include <cmath>

#include "cardio/mechanics/block.hpp"
#include "cardio/mechanics/mass_scaling.hpp"
#include "cardio/mechanics/myocardium.hpp"
#include "test_support.hpp"

namespace cardio::mechanics {
namespace {

// Highest omega of K u = omega^2 M u, K by central differences of the assembled forces.
double assembled_max_frequency(const InternalForces& model, const Eigen::Matrix3Xd& x,
                               const Eigen::VectorXd& nodal_mass) {
  const Eigen::MatrixXd K = testing::fd_stiffness(model, x);
  Eigen::VectorXd inv_sqrt_m(K.rows());
  for (Eigen::Index i = 0; i < K.rows(); ++i) inv_sqrt_m[i] = 1 / std::sqrt(nodal_mass[i / 3]);
  const Eigen::MatrixXd A = inv_sqrt_m.asDiagonal() * (0.5 * (K + K.transpose())) * inv_sqrt_m.asDiagonal();
  return std::sqrt(Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(A, Eigen::EigenvaluesOnly).eigenvalues().maxCoeff());
}

struct Block {
  HexMesh mesh;
  Eigen::VectorXd element_mass, nodal_mass;
};

// A 4 x 2 x 1 block of 1 mm voxels whose last column of elements is squeezed to 0.25 mm: the thin
// elements set the highest frequency, as thin fitted elements do at a heart's surface.
Block thin_block() {
  Block b;
  b.mesh = make_block({4, 2, 1, 1.0, Eigen::Vector3d::Zero()}, FibreField{});
  for (std::int32_t n = 0; n < b.mesh.n_nodes(); ++n)
    if (b.mesh.rest(0, n) > 3.5) b.mesh.rest(0, n) = 3.25;
  b.element_mass = 1.06 * element_volumes(b.mesh, b.mesh.rest);
  b.nodal_mass = Eigen::VectorXd::Zero(b.mesh.n_nodes());
  for (std::size_t e = 0; e < b.mesh.hexes.size(); ++e)
    for (std::int32_t n : b.mesh.hexes[e]) b.nodal_mass[n] += b.element_mass[Eigen::Index(e)] / 8;
  return b;
}

GuccioneLaw stiff_law() {
  GuccioneLaw law;
  law.bulk = 1000;
  return law;
}

TEST(SelectiveMassScaling, OneElementBoundIsItsExactHighestFrequency) {
  const HexMesh mesh = make_block({1, 1, 1, 1.0, Eigen::Vector3d::Zero()}, FibreField{});
  GuccioneForces model(mesh, {stiff_law()}, ElementKind::sampled_axes);
  const Eigen::VectorXd m = Eigen::VectorXd::Constant(1, 1.06);
  const double bound = element_frequency_bounds(mesh, model, m, mesh.rest)[0];
  EXPECT_NEAR(bound, assembled_max_frequency(model, mesh.rest, Eigen::VectorXd::Constant(8, 1.06 / 8)), 1e-5 * bound);
}

TEST(SelectiveMassScaling, ElementBoundsBoundTheMeshAndTheCapHoldsAfterScaling) {
  const Block b = thin_block();
  GuccioneForces model(b.mesh, {stiff_law()}, ElementKind::sampled_axes);
  const Eigen::VectorXd bounds = element_frequency_bounds(b.mesh, model, b.element_mass, b.mesh.rest);
  const double before = assembled_max_frequency(model, b.mesh.rest, b.nodal_mass);
  EXPECT_LE(before, bounds.maxCoeff() * (1 + 1e-6));
  EXPECT_GT(before, 0.5 * bounds.maxCoeff()) << "the bound is not far off";

  const SelectiveMassScaling none = selective_mass_scaling(b.mesh, b.nodal_mass, b.element_mass, bounds, 0);
  EXPECT_EQ(none.scaled_elements, 0);
  EXPECT_EQ(none.nodal_mass, b.nodal_mass);

  const double budget = 0.05;
  const SelectiveMassScaling s = selective_mass_scaling(b.mesh, b.nodal_mass, b.element_mass, bounds, budget);
  EXPECT_LE(s.added_mass_fraction, budget * (1 + 1e-9));
  EXPECT_GT(s.added_mass_fraction, 0.9 * budget) << "the budget is used";
  EXPECT_NEAR(s.nodal_mass.sum(), b.nodal_mass.sum() * (1 + s.added_mass_fraction), 1e-9 * b.nodal_mass.sum());
  EXPECT_EQ(s.scaled_elements, 2) << "only the two thin elements";
  const double after = assembled_max_frequency(model, b.mesh.rest, s.nodal_mass);
  EXPECT_LE(after, s.bound_frequency_after * (1 + 1e-6)) << "the cap bounds the assembled frequency";
  EXPECT_LT(after, 0.85 * before) << "and the stable step grew (cap " << s.bound_frequency_after << ")";
}

TEST(SelectiveMassScaling, RefusesABudgetOutsideItsRangeAndAnElementWithoutTangent) {
  const Block b = thin_block();
  GuccioneForces model(b.mesh, {stiff_law()}, ElementKind::sampled_axes);
  const Eigen::VectorXd bounds = element_frequency_bounds(b.mesh, model, b.element_mass, b.mesh.rest);
  EXPECT_THROW(selective_mass_scaling(b.mesh, b.nodal_mass, b.element_mass, bounds, 1.0), Error);
  GuccioneForces one_point(b.mesh, {stiff_law()}, ElementKind::one_point);
  EXPECT_THROW(element_frequency_bounds(b.mesh, one_point, b.element_mass, b.mesh.rest), Error);
}

}  // namespace
}  // namespace cardio::mechanics
