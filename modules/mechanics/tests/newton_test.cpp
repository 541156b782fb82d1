// Newton's method (newton.hpp) against independent references: the assembled tangent of a loaded
// block (elements, follower pressure, elastic foundation) against central differences of the
// system's forces; the converged state against dynamic relaxation of the same problem; and the
// quadratic convergence the exact tangent must give.
#include <gtest/gtest.h>

#include <Eigen/Eigenvalues>
#include <sstream>

#include "cardio/core/parallel.hpp"
#include "cardio/mechanics/integrators.hpp"
#include "cardio/mechanics/myocardium.hpp"
#include "cardio/mechanics/newton.hpp"
#include "newton_impl.hpp"
#include "test_support.hpp"

namespace cardio::mechanics {
namespace {

// A 3 x 2 x 2 block of 1 mm sampled-axes elements with oblique random frames, the x = 0 face
// fixed, a follower pressure on the x = 3 face and a normal foundation on the y = 0 face.
struct LoadedBlock {
  HexMesh mesh;
  std::unique_ptr<MassSpringSystem> sys;
  std::vector<double> Ta, activation;  // the storage of the inputs (inputs())
};

LoadedBlock loaded_block() {
  LoadedBlock b;
  FibreField ff;
  ff.kind = FibreField::Kind::random;
  b.mesh = make_block({3, 2, 2, 1.0, Eigen::Vector3d::Zero()}, ff);
  GuccioneLaw law;
  law.bulk = 200;
  auto forces = std::make_unique<GuccioneForces>(b.mesh, std::vector<GuccioneLaw>{law}, ElementKind::sampled_axes);
  BoundaryConditions bc;
  DofConstraint fixed;
  std::vector<Quad> loaded, supported;
  for (const Quad& q : boundary_faces(b.mesh)) {
    Eigen::Vector3d c = Eigen::Vector3d::Zero();
    for (std::int32_t n : q) c += 0.25 * b.mesh.rest.col(n);
    if (c.x() < 1e-9)
      for (std::int32_t n : q) fixed.nodes.push_back(n);
    if (c.x() > 3 - 1e-9) loaded.push_back(q);
    if (c.y() < 1e-9) supported.push_back(q);
  }
  bc.constraints.push_back(fixed);
  bc.loads.pressures.push_back({loaded, 4.0});
  bc.foundations.push_back({supported, 0.5, ElasticFoundation::Direction::normal});
  b.sys = std::make_unique<MassSpringSystem>(b.mesh, std::move(forces), lumped_masses(b.mesh, {1.06}), std::move(bc));
  return b;
}

// The load path: pressure and active tension ramp together with s.
ForceInputs inputs(LoadedBlock& b, double s) {
  const auto n = std::size_t(b.mesh.n_elements());
  b.Ta.assign(n, 30.0 * s);
  b.activation.assign(n, 0.0);
  return {s, b.Ta, b.activation};
}

TEST(Newton, AssembledTangentIsTheDerivativeOfTheSystemForces) {
  LoadedBlock b = loaded_block();
  const ForceInputs in = inputs(b, 1.0);
  NewtonSolver newton(*b.sys, b.mesh);
  std::mt19937_64 rng(5);
  Eigen::Matrix3Xd x = b.mesh.rest + 0.08 * Eigen::Matrix3Xd::Random(3, b.mesh.n_nodes());
  Eigen::Matrix3Xd v = Eigen::Matrix3Xd::Zero(3, x.cols());
  b.sys->project(x, v, 1.0, 0.0);
  const Eigen::MatrixXd K = newton.dense_tangent(x, in);
  Eigen::MatrixXd fd = Eigen::MatrixXd::Zero(K.rows(), K.cols());
  const double h = 1e-6;
  Eigen::Matrix3Xd fp(3, x.cols()), fm(3, x.cols());
  for (std::int64_t nb = 0; nb < b.mesh.n_nodes(); ++nb)
    for (int j = 0; j < 3; ++j) {
      const std::int64_t col = newton.free_index(nb, j);
      if (col < 0) continue;
      Eigen::Matrix3Xd xp = x, xm = x;
      xp(j, nb) += h;
      xm(j, nb) -= h;
      b.sys->forces(xp, v, in, fp);
      b.sys->forces(xm, v, in, fm);
      for (std::int64_t na = 0; na < b.mesh.n_nodes(); ++na)
        for (int i = 0; i < 3; ++i)
          if (const std::int64_t row = newton.free_index(na, i); row >= 0)
            fd(row, col) = -(fp(i, na) - fm(i, na)) / (2 * h);
    }
  EXPECT_LT((K - fd).cwiseAbs().maxCoeff(), 1e-6 * K.cwiseAbs().maxCoeff());
}

TEST(Newton, ConvergesQuadraticallyToTheDynamicRelaxationEquilibrium) {
  LoadedBlock a = loaded_block(), b = loaded_block();
  // Newton, in two increments.
  NodeState sa = a.sys->rest_state();
  NewtonSolver newton(*a.sys, a.mesh);
  NewtonOptions o;
  o.residual_tol = 1e-10;
  o.linear_solver = LinearSolver::lu;  // the full tangent: the open face's follower load is not symmetric
  std::ostringstream log;
  const NewtonStats st = newton.solve(
      sa, [&](double s) { return inputs(a, s); }, 0.0, 1.0, o, &log);
  ASSERT_TRUE(st.converged) << log.str();
  std::cout << log.str();
  // The exact tangent: a handful of iterations per increment (quadratic convergence).
  EXPECT_LE(st.iterations, 12);
  EXPECT_EQ(st.cuts, 0);
  // Dynamic relaxation of the same problem along the same load path.
  NodeState sb = b.sys->rest_state();
  QuasiStaticOptions q;
  q.residual_tol = 1e-10;
  q.load_steps = 4;
  ASSERT_TRUE(solve_quasi_static(*b.sys, b.mesh, sb, q, [&](double s) { return inputs(b, s); }).converged);
  const double moved = (sb.x - b.mesh.rest).cwiseAbs().maxCoeff();
  EXPECT_GT(moved, 0.05);  // a real deformation
  EXPECT_LT((sa.x - sb.x).cwiseAbs().maxCoeff(), 1e-6 * moved);
}

// The loaded block solved by Newton with `o` to the relative residual `tol`: its displacement and
// the solver's counts.
std::pair<Eigen::Matrix3Xd, NewtonStats> solve_block(NewtonOptions o, double tol, double update_tol = 1e-6) {
  LoadedBlock b = loaded_block();
  NodeState s = b.sys->rest_state();
  NewtonSolver newton(*b.sys, b.mesh);
  o.residual_tol = tol;
  o.update_tol = update_tol;
  const NewtonStats st = newton.solve(
      s, [&](double f) { return inputs(b, f); }, 0.0, 1.0, o);
  EXPECT_TRUE(st.converged);
  return {Eigen::Matrix3Xd(s.x - b.mesh.rest), st};
}

// The Cholesky paths (symmetrised tangent, earlier factor reused as the preconditioner of
// conjugate gradients, indefinite tangents projected) must reach the equilibrium of the full,
// unsymmetric tangent solved by LU; reuse must actually save factorisations.
TEST(Newton, CholeskyVariantsReachTheSameEquilibriumAsLu) {
  auto solve = [](const NewtonOptions& o) { return solve_block(o, 1e-10); };
  NewtonOptions lu;
  lu.linear_solver = LinearSolver::lu;
  const auto [u_lu, st_lu] = solve(lu);
  NewtonOptions plain;
  plain.reuse_factorisation = false;
  plain.project_indefinite = false;
  const auto [u_plain, st_plain] = solve(plain);
  const auto [u_default, st_default] = solve(NewtonOptions{});
  NewtonOptions no_reuse;
  no_reuse.reuse_factorisation = false;
  const auto [u_no_reuse, st_no_reuse] = solve(no_reuse);
  const double moved = u_lu.cwiseAbs().maxCoeff();
  std::cout << "LU " << st_lu.iterations << " iterations; Cholesky " << st_plain.iterations << "; with reuse "
            << st_default.iterations << " iterations, " << st_default.factorisations << " factorisations, "
            << st_default.krylov_iterations << " CG iterations; without reuse " << st_no_reuse.factorisations
            << " factorisations\n";
  ASSERT_GT(moved, 0.05);
  EXPECT_LT((u_plain - u_lu).cwiseAbs().maxCoeff(), 1e-6 * moved);
  EXPECT_LT((u_default - u_lu).cwiseAbs().maxCoeff(), 1e-6 * moved);
  EXPECT_EQ(st_plain.factorisations, st_plain.iterations);
  EXPECT_GT(st_default.krylov_iterations, 0);
  EXPECT_LT(st_default.factorisations, st_no_reuse.factorisations);
}

// The open face's follower load has an antisymmetric tangent part at the face's free rim. The
// Cholesky factor is of the symmetrised tangent; corrected for the antisymmetric part (defect
// correction against the full tangent), its Newton steps are those of LU: as few iterations, where
// the symmetrised step alone converges only linearly.
TEST(Newton, CholeskyStepsCorrectedForTheAsymmetryConvergeLikeLu) {
  auto iterations = [](const NewtonOptions& o) { return solve_block(o, 1e-12, 1e-10).second.iterations; };
  NewtonOptions lu;
  lu.linear_solver = LinearSolver::lu;
  NewtonOptions plain;
  plain.reuse_factorisation = false;
  plain.project_indefinite = false;
  const int n_lu = iterations(lu), n_cholesky = iterations(plain);
  std::cout << "Newton iterations: LU " << n_lu << ", corrected Cholesky " << n_cholesky << "\n";
  EXPECT_LE(n_cholesky, n_lu);
}

// A first increment of a quarter of the range doubles after each success: 1/4, then 1/2, then the
// last quarter (the doubled 1 clipped to what is left): three increments to the same equilibrium.
TEST(Newton, FirstIncrementIsAFractionOfTheRangeAndDoubles) {
  auto solve = [](double first) {
    LoadedBlock b = loaded_block();
    NodeState s = b.sys->rest_state();
    NewtonSolver newton(*b.sys, b.mesh);
    NewtonOptions o;
    o.residual_tol = 1e-10;
    o.first_increment = first;
    o.linear_solver = LinearSolver::lu;  // the full tangent: no cuts (the open face's load is not symmetric)
    std::ostringstream log;
    const NewtonStats st = newton.solve(
        s, [&](double f) { return inputs(b, f); }, 0.0, 1.0, o, &log);
    EXPECT_TRUE(st.converged) << log.str();
    return std::make_tuple(Eigen::Matrix3Xd(s.x - b.mesh.rest), st, log.str());
  };
  const auto [u_whole, st_whole, log_whole] = solve(1.0);
  const auto [u_quarter, st_quarter, log_quarter] = solve(0.25);
  EXPECT_EQ(st_whole.increments, 1);
  EXPECT_EQ(st_quarter.increments, 3);
  EXPECT_EQ(st_quarter.cuts, 0);
  EXPECT_LT((u_quarter - u_whole).cwiseAbs().maxCoeff(), 1e-6 * u_whole.cwiseAbs().maxCoeff());
  // Every logged iteration names the tangent it solved with.
  EXPECT_NE(log_whole.find("(LU)"), std::string::npos) << log_whole;
  LoadedBlock b = loaded_block();
  NodeState s = b.sys->rest_state();
  NewtonSolver newton(*b.sys, b.mesh);
  NewtonOptions bad;
  bad.first_increment = 0;
  EXPECT_THROW(newton.solve(
                   s, [&](double f) { return inputs(b, f); }, 0.0, 1.0, bad),
               Error);
}

TEST(Newton, SameBitsAtAnyThreadCount) {
  std::vector<Eigen::Matrix3Xd> x;
  for (int threads : {1, 2}) {
    set_thread_count(threads);
    LoadedBlock b = loaded_block();
    NodeState s = b.sys->rest_state();
    NewtonSolver newton(*b.sys, b.mesh);
    ASSERT_TRUE(newton
                    .solve(
                        s, [&](double f) { return inputs(b, f); }, 0.0, 1.0, NewtonOptions{})
                    .converged);
    x.push_back(s.x);
  }
  EXPECT_EQ((x[0] - x[1]).cwiseAbs().maxCoeff(), 0.0);
}

TEST(NewtonProjection, KeepsASemidefiniteTangentAndClipsAnIndefiniteOne) {
  // Independent reference: the eigendecomposition, clipped.
  auto clipped = [](const ElementStiffness& K) {
    const Eigen::SelfAdjointEigenSolver<ElementStiffness> e(0.5 * (K + K.transpose()));
    return ElementStiffness(e.eigenvectors() * e.eigenvalues().cwiseMax(0.0).asDiagonal() *
                            e.eigenvectors().transpose());
  };
  const Eigen::Matrix<double, 24, 18> B = Eigen::Matrix<double, 24, 18>::Random();
  const ElementStiffness psd = B * B.transpose();  // rank 18: six zero modes, as an element has
  ElementStiffness K = psd;
  project_to_positive_part(K);
  EXPECT_LT((K - psd).cwiseAbs().maxCoeff(), 1e-12 * psd.cwiseAbs().maxCoeff());
  ElementStiffness indefinite = psd;
  indefinite -=
      3.0 * Eigen::Matrix<double, 24, 1>::Unit(5) * Eigen::Matrix<double, 24, 1>::Unit(5).transpose() * psd(5, 5);
  K = indefinite;
  project_to_positive_part(K);
  EXPECT_LT((K - clipped(indefinite)).cwiseAbs().maxCoeff(), 1e-9 * psd.cwiseAbs().maxCoeff());
  // Zero diagonal, indefinite off-diagonal block: a pivoted LDL^T stops early on it.
  ElementStiffness swap = ElementStiffness::Zero();
  swap(0, 1) = swap(1, 0) = 1;
  K = swap;
  project_to_positive_part(K);
  EXPECT_LT((K - clipped(swap)).cwiseAbs().maxCoeff(), 1e-12);
  EXPECT_GT(K(0, 0), 0.4);
}

}  // namespace
}  // namespace cardio::mechanics
