#pragma once
/// @file newton.hpp
/// Static equilibrium by Newton's method (docs/performance.md, "Newton"): the residual is the
/// system's total force on the free coordinates, the tangent K = -df/dx is assembled from the
/// elements' exact stiffnesses (InternalForces::element_stiffness), the follower pressures' load
/// stiffness and the elastic foundations, as a sparse matrix, and solved with CHOLMOD (supernodal
/// Cholesky of the symmetrised tangent, each step corrected against the full one; near equilibrium the last
/// factorisation preconditions conjugate gradients on the next tangent; an indefinite tangent is replaced by the one
/// without the volumetric term's geometric part, then projected element by element), Eigen's SparseLU (the full,
/// unsymmetric tangent) or conjugate gradients (incomplete Cholesky; for problems too large to factorise). A line
/// search on the energy's slope guards each update; a load increment that does not converge is cut in half and retried.
/// Deterministic: assembly sums in element order whatever the threads.
#include <Eigen/Core>
#include <functional>
#include <iosfwd>
#include <memory>
#include <string>

#include "cardio/mechanics/system.hpp"

namespace cardio::mechanics {

enum class LinearSolver { cholmod, lu, cg };

struct NewtonOptions {
  double residual_tol = 1e-8;  ///< max free |f| <= tol x force scale (largest load or reaction), as dynamic relaxation
  double update_tol = 1e-6;    ///< and the last update's max |dx| <= tol x the smallest rest edge
  int max_iterations = 30;     ///< per load increment
  int max_cuts = 10;           ///< halvings of a failed increment before giving up
  /// The first load increment as a fraction of [s_from, s_to]; each converged one doubles the next.
  /// Below 1 for soft structures whose stiffness grows with the load (an exponential law's toe).
  double first_increment = 1;
  int line_search_halvings = 8;
  LinearSolver linear_solver = LinearSolver::cholmod;
  /// cholmod: near equilibrium, solve with conjugate gradients preconditioned by the last
  /// factorisation before factorising again (same answers to the tolerances, fewer factorisations)
  bool reuse_factorisation = true;
  /// cholmod: an indefinite tangent is replaced by its elements' positive parts (projected
  /// Newton) before a diagonal shift is tried
  bool project_indefinite = true;
  /// with project_indefinite: first try the tangent without the volumetric term's geometric part
  /// (Tangent::without_volumetric_geometry), then the projection
  bool volumetric_fallback = true;
};

struct NewtonStats {
  bool converged = false;
  int increments = 0;         ///< converged load increments
  int cuts = 0;               ///< failed increments retried with half the load step
  int iterations = 0;         ///< Newton iterations (tangent assemblies and solves), failed ones included
  int factorisations = 0;     ///< sparse Cholesky factorisations attempted (cholmod; a failed one costs as much)
  int krylov_iterations = 0;  ///< conjugate-gradient iterations preconditioned by an earlier factorisation
  double residual = 0;        ///< final relative residual
  double reached = 0;         ///< load fraction of s.x on return (the last converged one)
  double assemble_seconds = 0, solve_seconds = 0;
};

class NewtonSolver {
 public:
  /// The sparsity pattern of the free coordinates is built once. sys.internal() must have a
  /// stiffness (InternalForces::has_stiffness); the pattern includes the faces of its pressure loads.
  NewtonSolver(const MassSpringSystem& sys, const HexMesh& mesh);
  ~NewtonSolver();
  NewtonSolver(const NewtonSolver&) = delete;
  NewtonSolver& operator=(const NewtonSolver&) = delete;

  /// Equilibrium at load fraction s_to from the converged state s.x at s_from. Each load increment
  /// (the first o.first_increment of the range, halved on failure, doubled after a success)
  /// evaluates the forces at path(s) of its end fraction s and projects the prescribed coordinates
  /// at its load factor. Logs every iteration (residual, update, line-search step, the tangent
  /// solved with, and where the residual and the update are largest) to log if given. On failure
  /// s.x holds the last converged state (at fraction `reached`) and converged is false. With
  /// s_from == s_to, s.x is an approximate equilibrium at s_to (e.g. from dynamic relaxation) that
  /// Newton refines at that load, with no cuts.
  NewtonStats solve(NodeState& s, const LoadPath& path, double s_from, double s_to, const NewtonOptions& o,
                    std::ostream* log = nullptr);

  /// The tangent K = -df/dx on the free coordinates at x with the inputs `in`, as assembled for
  /// the solver: for checks against finite differences.
  Eigen::MatrixXd dense_tangent(const Eigen::Matrix3Xd& x, const ForceInputs& in = {});
  /// Index of free coordinate i of node n in the tangent, or -1 if prescribed.
  std::int64_t free_index(std::int64_t n, int i) const;

 private:
  /// Newton iterations at the inputs `in` from s.x; on failure s.x is restored.
  bool increment(NodeState& s, const ForceInputs& in, const NewtonOptions& o, NewtonStats& st, std::ostream* log);

  struct Impl;
  std::unique_ptr<Impl> m;
};

}  // namespace cardio::mechanics
