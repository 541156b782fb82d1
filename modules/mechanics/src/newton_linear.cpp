#include <Eigen/CholmodSupport>
#include <Eigen/IterativeLinearSolvers>
#include <Eigen/SparseLU>
#include <algorithm>
#include <cmath>

#include "cardio/core/parallel.hpp"
#include "newton_impl.hpp"

namespace cardio::mechanics {

bool NewtonSolver::Impl::solve_linear(const Eigen::VectorXd& r, const NewtonOptions& o, bool shift, NewtonStats& st,
                                      Eigen::VectorXd& dx) {
  if (o.linear_solver == LinearSolver::lu) {
    Eigen::SparseLU<Sparse> lu;
    lu.compute(K);
    if (lu.info() != Eigen::Success) return false;
    dx = lu.solve(r);
    return dx.allFinite();
  }
  symmetrise();
  if (o.linear_solver == LinearSolver::cg) {
    Eigen::ConjugateGradient<Sparse, Eigen::Lower | Eigen::Upper, Eigen::IncompleteCholesky<double>> cg;
    cg.setTolerance(1e-10);
    cg.compute(sym);
    dx = cg.solve(r);
    return cg.info() == Eigen::Success && dx.allFinite();
  }
  const SerialLibraryRegions serial_cholmod;
  if (o.reuse_factorisation && factor_is_exact && reuse_pays && solve_with_old_factor(sym, r, st, dx)) {
    correct_for_asymmetry(r, dx);
    return dx.allFinite();
  }
  ++st.factorisations;
  if (!factorise(sym, shift)) return false;
  dx = cholmod.solve(r);
  if (factor_is_exact) correct_for_asymmetry(r, dx);
  return dx.allFinite();
}

// The factor is of the symmetric part of K; a follower pressure on an open surface leaves an
// antisymmetric part at its rim, so that S^-1 r is an inexact Newton step (Newton then converges
// linearly or cycles). Defect correction (iterative refinement with S as the approximate inverse;
// Golub & Van Loan, Matrix Computations, 4th ed., sec. 3.5.3), dx += S^-1 (r - K dx), while it
// reduces the defect: where K is symmetric the first defect is at round-off.
void NewtonSolver::Impl::correct_for_asymmetry(const Eigen::VectorXd& r, Eigen::VectorXd& dx) {
  Eigen::VectorXd defect = r - K * dx;
  double norm = defect.norm();
  for (int k = 0; k < kDefectCorrections && norm > 1e-10 * r.norm(); ++k) {
    const Eigen::VectorXd next = dx + cholmod.solve(defect);
    const Eigen::VectorXd next_defect = r - K * next;
    const double next_norm = next_defect.norm();
    if (!(next_norm < 0.9 * norm)) return;
    dx = next;
    defect = next_defect;
    norm = next_norm;
  }
}

bool NewtonSolver::Impl::factorise(const Sparse& sym, bool shift) {
  if (!analysed) {
    cholmod.cholmod().print = 0;  // silent: an indefinite tangent is handled below
    cholmod.analyzePattern(sym);
    analysed = true;
  }
  // Not positive definite: shift the diagonal, mu D with D = |diag K|, growing mu tenfold until
  // the Cholesky succeeds (a Levenberg-Marquardt step: still a descent direction). The shift that
  // worked, divided by ten, is tried first next time, so a run of indefinite tangents does not pay
  // for the failed attempts each time.
  factor_is_exact = false;  // until a factorisation succeeds, the held one is unusable
  const Eigen::VectorXd D = sym.diagonal().cwiseAbs();
  double mu = shift ? next_mu : 0.0;
  for (;; mu = mu == 0 ? 1e-4 : 10 * mu) {
    if (mu > 1e2 || (mu > 0 && !shift)) return false;
    if (mu == 0) {
      cholmod.factorize(sym);
    } else {
      Sparse shifted_matrix = sym;
      for (int i = 0; i < shifted_matrix.cols(); ++i) shifted_matrix.coeffRef(i, i) += mu * D[i];
      cholmod.factorize(shifted_matrix);
    }
    if (cholmod.info() == Eigen::Success) break;
  }
  factor_is_exact = mu == 0;
  next_mu = mu >= 1e-3 ? mu / 10 : 0.0;
  return true;
}

// Near a stable equilibrium the tangent changes little from one iteration to the next, so the
// last (unshifted) Cholesky factor is a good preconditioner for conjugate gradients on the new
// one: triangular solves instead of a factorisation (inexact Newton with a lagged preconditioner;
// Knoll & Keyes, J. Comput. Phys. 193:357, 2004, sec. 3). Solved to 1e-4 relative: the next
// Newton residual is then about 1e-4 of this one's, which the convergence test sees. Gives up,
// for a fresh factorisation, on negative curvature or after the iterations a factorisation would
// cost: a fixed multiple of CHOLMOD's flop counts, never a timing, so the path is the same on
// every machine.
bool NewtonSolver::Impl::solve_with_old_factor(const Sparse& A, const Eigen::VectorXd& b, NewtonStats& st,
                                               Eigen::VectorXd& x) {
  const double solve_flops = 4 * cholmod.cholmod().lnz + 2 * double(A.nonZeros());
  const int max_iterations = int(std::clamp(0.2 * cholmod.cholmod().fl / solve_flops, 5.0, 100.0));
  const double stop = 1e-4 * b.norm();
  x = Eigen::VectorXd::Zero(b.size());
  Eigen::VectorXd r = b, z = cholmod.solve(r), p = z, Ap;
  double rz = r.dot(z);
  for (int k = 1; k <= max_iterations; ++k) {
    ++st.krylov_iterations;
    Ap = A * p;
    const double curvature = p.dot(Ap);
    if (!(curvature > 0)) return false;
    const double step = rz / curvature;
    x += step * p;
    r -= step * Ap;
    if (r.norm() <= stop) return x.allFinite();
    z = cholmod.solve(r);
    const double rz_next = r.dot(z);
    p = z + (rz_next / rz) * p;
    rz = rz_next;
  }
  return false;
}

// Line search on the energy along dx (Crisfield, Non-linear FE analysis of solids and structures,
// vol. 1, sec. 9.3): g(a) = dx . f(x + a dx) is minus the energy's slope, g(0) > 0. The full step
// is taken while the energy still falls there; else the root of g is bracketed and found by
// Illinois regula falsi, to |g| <= 0.5 g(0) (the curvature condition of a strong Wolfe search).
// An inverted sample (NaN forces) bisects towards the last good point. The residual norm would be
// a poor merit: the stiff volume penalty makes it grow even along a good step.
double NewtonSolver::Impl::line_search(const Eigen::Matrix3Xd& x, const Eigen::VectorXd& dx, const Eigen::VectorXd& r0,
                                       const NewtonOptions& o, Eigen::Matrix3Xd& x_try, Eigen::Matrix3Xd& f_try,
                                       double& r_try) const {
  const double g0 = dx.dot(r0);
  double lo = 0, g_lo = g0, hi = 1, g_hi = NAN, alpha = 1;
  int last_moved = 0;  // Illinois: which end moved last (-1 lo, +1 hi)
  for (int k = 0;; ++k) {
    x_try = x;
    for (std::size_t c = 0; c < dof.size(); ++c)
      if (dof[c] >= 0) x_try(Eigen::Index(c % 3), Eigen::Index(c / 3)) += alpha * dx[dof[c]];
    r_try = residual(x_try, f_try);
    const double g = std::isfinite(r_try) ? dx.dot(free_part(f_try)) : NAN;
    const bool last = k == o.line_search_halvings;
    if (std::isfinite(g) && (!(g0 > 0) || std::abs(g) <= 0.5 * g0 || (g > 0 && alpha == hi) || last)) return alpha;
    if (last) return alpha;  // NaN: the caller fails the iteration
    if (!std::isfinite(g)) {
      hi = alpha, g_hi = NAN;
      alpha = 0.5 * (lo + hi);
      continue;
    }
    if (g > 0) {
      if (last_moved == -1 && std::isfinite(g_hi)) g_hi *= 0.5;
      lo = alpha, g_lo = g, last_moved = -1;
    } else {
      if (last_moved == 1) g_lo *= 0.5;
      hi = alpha, g_hi = g, last_moved = 1;
    }
    alpha = std::isfinite(g_hi)
                ? std::clamp(lo + (hi - lo) * g_lo / (g_lo - g_hi), lo + 0.05 * (hi - lo), hi - 0.05 * (hi - lo))
                : 0.5 * (lo + hi);
  }
}

}  // namespace cardio::mechanics
