#pragma once
/// @file newton_impl.hpp (private)
/// The state of NewtonSolver, shared by newton.cpp (pattern, assembly, iterations, load stepping)
/// and newton_linear.cpp (the linear solves and the line search).
#include <Eigen/CholmodSupport>
#include <Eigen/SparseCore>
#include <chrono>
#include <vector>

#include "cardio/core/error.hpp"
#include "cardio/mechanics/newton.hpp"

namespace cardio::mechanics {

using Sparse = Eigen::SparseMatrix<double, Eigen::ColMajor, int>;

/// K <- its positive semidefinite part: the symmetric part with its negative eigenvalues set to
/// zero (projected Newton's element tangent).
void project_to_positive_part(ElementStiffness& K);

struct NewtonSolver::Impl {
  const MassSpringSystem& sys;
  const HexMesh& mesh;
  std::vector<int> dof;  // 3 n: free index of coordinate (i, node) at 3 node + i, or -1
  Sparse K;              // the pattern of the free coordinates, values reassembled
  // Element e's block (node a, node b), column j of node b, starts at K's value
  // block_start[((e 8 + b) 3 + j) 8 + a] (node a's free rows are consecutive there), or -1:
  // found once, so assembly does no searching.
  std::vector<int> block_start;
  // The pattern is structurally symmetric: K's value k at (i, j) has its mirror (j, i) at
  // K's value mirror[k], so the symmetric part is one pass over the values (symmetrise()).
  std::vector<int> mirror;
  Sparse sym;  // 0.5 (K + K^T), on K's pattern
  Eigen::CholmodSupernodalLLT<Sparse, Eigen::Lower> cholmod;
  bool analysed = false;
  double next_mu = 0;            // the diagonal shift to try first (0: none)
  bool factor_is_exact = false;  // the held factor is of an unshifted tangent
  bool reuse_pays = false;       // the tangent is likely close to the factorised one (see iterate())
  ForceInputs in;                // the inputs of the current load increment (solve())

  Impl(const MassSpringSystem& s, const HexMesh& m);

  void build_pattern();
  double& at(int row, int col) {
    const int* begin = K.innerIndexPtr() + K.outerIndexPtr()[col];
    const int* end = K.innerIndexPtr() + K.outerIndexPtr()[col + 1];
    const int* it = std::lower_bound(begin, end, row);
    CARDIO_CHECK(it != end && *it == row, "Newton: tangent entry outside the pattern");
    return K.valuePtr()[it - K.innerIndexPtr()];
  }
  void add_block(std::int32_t a, std::int32_t b, const Eigen::Matrix3d& k) {
    for (int j = 0; j < 3; ++j) {
      const int col = dof[std::size_t(3 * b + j)];
      if (col < 0) continue;
      for (int i = 0; i < 3; ++i) {
        const int row = dof[std::size_t(3 * a + i)];
        if (row >= 0) at(row, col) += k(i, j);
      }
    }
  }
  void find_block_starts();
  void find_mirrors();
  void symmetrise();
  void add_element(std::size_t e, const ElementStiffness& Ke);
  // project: each element's tangent with its negative eigenvalues set to zero (see iterate()).
  void assemble(const Eigen::Matrix3Xd& x, bool project = false, Tangent part = Tangent::exact);
  Eigen::VectorXd free_part(const Eigen::Matrix3Xd& f) const {
    Eigen::VectorXd r(K.rows());
    for (std::size_t k = 0; k < dof.size(); ++k)
      if (dof[k] >= 0) r[dof[k]] = f(Eigen::Index(k % 3), Eigen::Index(k / 3));
    return r;
  }
  // shift: if the tangent is indefinite, shift its diagonal until it factorises (else fail).
  bool solve_linear(const Eigen::VectorXd& r, const NewtonOptions& o, bool shift, NewtonStats& st, Eigen::VectorXd& dx);
  bool factorise(const Sparse& sym, bool shift);
  static constexpr int kDefectCorrections = 20;
  void correct_for_asymmetry(const Eigen::VectorXd& r, Eigen::VectorXd& dx);
  bool solve_with_old_factor(const Sparse& A, const Eigen::VectorXd& b, NewtonStats& st, Eigen::VectorXd& x);
  // Relative residual (max free |f| / force scale) at x, with f written.
  double residual(const Eigen::Matrix3Xd& x, Eigen::Matrix3Xd& f) const;
  // The step along dx (x_try, f_try, r_try at it); see the definition.
  double line_search(const Eigen::Matrix3Xd& x, const Eigen::VectorXd& dx, const Eigen::VectorXd& r0,
                     const NewtonOptions& o, Eigen::Matrix3Xd& x_try, Eigen::Matrix3Xd& f_try, double& r_try) const;
  // One line of the iteration log: the relative residual r, where the force and the update dx (times
  // the line-search step alpha) are largest, and the tangent solved with.
  void log_iteration(std::ostream& log, int it, double r, const Eigen::Matrix3Xd& x, const Eigen::Matrix3Xd& f,
                     const Eigen::VectorXd& dx, double alpha, const char* tangent, int cg) const;
  // The step direction dx where the exact tangent does not factorise; see the definition.
  bool fallback_direction(const Eigen::Matrix3Xd& x, const Eigen::VectorXd& r0, const NewtonOptions& o, NewtonStats& st,
                          Eigen::VectorXd& dx, const char*& tangent);
  // Newton iterations at the current load from s.x; true when converged.
  bool iterate(NodeState& s, const NewtonOptions& o, NewtonStats& st, std::ostream* log);
};

}  // namespace cardio::mechanics
