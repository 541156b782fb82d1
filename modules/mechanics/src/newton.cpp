#include "cardio/mechanics/newton.hpp"

#include <Eigen/CholmodSupport>
#include <dlfcn.h>
#include <Eigen/Eigenvalues>
#include <Eigen/IterativeLinearSolvers>
#include <Eigen/SparseCore>
#include <Eigen/SparseLU>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <ostream>
#include <sstream>
#include <vector>

#include "cardio/core/error.hpp"
#include "cardio/core/parallel.hpp"

namespace cardio::mechanics {
namespace {

using Sparse = Eigen::SparseMatrix<double, Eigen::ColMajor, int>;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// A multithreaded BLAS sums CHOLMOD's dense blocks in an order that depends on its thread count,
// so the solution would differ in the last bits between machines: one BLAS thread keeps the
// results bit-identical at any thread count (OpenBLAS: about 2x slower factorisations on 2 cores).
// Looked up at run time, so any BLAS the system provides works.
void single_threaded_blas() {
  using SetThreads = void (*)(int);
  if (auto set = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"))) set(1);
}

}  // namespace

struct NewtonSolver::Impl {
  const MassSpringSystem& sys;
  const HexMesh& mesh;
  std::vector<int> dof;  // 3 n: free index of coordinate (i, node) at 3 node + i, or -1
  Sparse K;              // the pattern of the free coordinates, values reassembled
  // Element e's block (node a, node b), column j of node b, starts at K's value
  // block_start[((e 8 + b) 3 + j) 8 + a] (node a's free rows are consecutive there), or -1:
  // found once, so assembly does no searching.
  std::vector<int> block_start;
  Eigen::CholmodSupernodalLLT<Sparse, Eigen::Lower> cholmod;
  bool analysed = false;
  long shifted = 0;    // factorisations of a shifted (indefinite) tangent
  double next_mu = 0;  // the diagonal shift to try first (0: none)
  bool factor_is_exact = false;  // the held factor is of an unshifted tangent

  Impl(const MassSpringSystem& s, const HexMesh& m) : sys(s), mesh(m) {
    single_threaded_blas();
    CARDIO_CHECK(sys.internal().has_stiffness(),
                 "Newton's method needs the element's tangent stiffness; " << sys.internal().name() << " has none");
    build_pattern();
  }

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
  void add_element(std::size_t e, const ElementStiffness& Ke);
  // project: each element's tangent with its negative eigenvalues set to zero (see iterate()).
  void assemble(const Eigen::Matrix3Xd& x, bool project = false);
  Eigen::VectorXd free_part(const Eigen::Matrix3Xd& f) const {
    Eigen::VectorXd r(K.rows());
    for (std::size_t k = 0; k < dof.size(); ++k)
      if (dof[k] >= 0) r[dof[k]] = f(Eigen::Index(k % 3), Eigen::Index(k / 3));
    return r;
  }
  // shift: if the tangent is indefinite, shift its diagonal until it factorises (else fail).
  bool solve_linear(const Eigen::VectorXd& r, const NewtonOptions& o, bool shift, NewtonStats& st, Eigen::VectorXd& dx);
  bool factorise(const Sparse& sym, bool shift);
  bool solve_with_old_factor(const Sparse& A, const Eigen::VectorXd& b, NewtonStats& st, Eigen::VectorXd& x);
  // Relative residual (max free |f| / force scale) at x, with f written.
  double residual(const Eigen::Matrix3Xd& x, Eigen::Matrix3Xd& f) const;
  // Newton iterations at the current load from s.x; true when converged.
  bool iterate(NodeState& s, const NewtonOptions& o, NewtonStats& st, std::ostream* log);
};

void NewtonSolver::Impl::build_pattern() {
  const std::int64_t n = mesh.n_nodes();
  dof.assign(std::size_t(3 * n), -1);
  const Eigen::Matrix3Xd& free = sys.free_mask();
  int next = 0;
  for (std::int64_t node = 0; node < n; ++node)
    for (int i = 0; i < 3; ++i)
      if (free(i, node) != 0) dof[std::size_t(3 * node + i)] = next++;
  // Node neighbours through the elements and the loaded/supported faces.
  std::vector<std::vector<std::int32_t>> nb(static_cast<std::size_t>(n));
  auto link = [&](const auto& nodes) {
    for (std::int32_t a : nodes)
      for (std::int32_t b : nodes) nb[std::size_t(a)].push_back(b);
  };
  for (const Hex& h : mesh.hexes) link(h);
  for (const auto& pl : sys.loads.pressures)
    for (const Quad& q : pl.faces) link(q);
  for (auto& v : nb) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
  }
  K.resize(next, next);
  Eigen::VectorXi per_column = Eigen::VectorXi::Zero(next);
  for (std::int64_t b = 0; b < n; ++b)
    for (int j = 0; j < 3; ++j) {
      const int col = dof[std::size_t(3 * b + j)];
      if (col >= 0)
        for (std::int32_t a : nb[std::size_t(b)])
          for (int i = 0; i < 3; ++i) per_column[col] += dof[std::size_t(3 * a + i)] >= 0;
    }
  K.reserve(per_column);
  for (std::int64_t b = 0; b < n; ++b)
    for (int j = 0; j < 3; ++j) {
      const int col = dof[std::size_t(3 * b + j)];
      if (col < 0) continue;
      std::vector<int> rows;
      for (std::int32_t a : nb[std::size_t(b)])
        for (int i = 0; i < 3; ++i)
          if (dof[std::size_t(3 * a + i)] >= 0) rows.push_back(dof[std::size_t(3 * a + i)]);
      std::sort(rows.begin(), rows.end());
      for (int row : rows) K.insert(row, col) = 0.0;
    }
  K.makeCompressed();
  find_block_starts();
}

void NewtonSolver::Impl::find_block_starts() {
  block_start.assign(std::size_t(mesh.n_elements()) * 192, -1);
  for (std::size_t e = 0; e < mesh.hexes.size(); ++e) {
    const Hex& h = mesh.hexes[e];
    for (int b = 0; b < 8; ++b)
      for (int j = 0; j < 3; ++j) {
        const int col = dof[std::size_t(3 * h[b] + j)];
        if (col < 0) continue;
        for (int a = 0; a < 8; ++a) {
          const int* rows = &dof[std::size_t(3 * h[a])];
          const int* first_free = std::find_if(rows, rows + 3, [](int d) { return d >= 0; });
          if (first_free == rows + 3) continue;
          block_start[((e * 8 + std::size_t(b)) * 3 + std::size_t(j)) * 8 + std::size_t(a)] =
              int(&at(*first_free, col) - K.valuePtr());
        }
      }
  }
}

void NewtonSolver::Impl::add_element(std::size_t e, const ElementStiffness& Ke) {
  const Hex& h = mesh.hexes[e];
  double* values = K.valuePtr();
  for (int b = 0; b < 8; ++b)
    for (int j = 0; j < 3; ++j)
      for (int a = 0; a < 8; ++a) {
        int k = block_start[((e * 8 + std::size_t(b)) * 3 + std::size_t(j)) * 8 + std::size_t(a)];
        if (k < 0) continue;
        for (int i = 0; i < 3; ++i)
          if (dof[std::size_t(3 * h[a] + i)] >= 0) values[k++] += Ke(3 * a + i, 3 * b + j);
      }
}

void NewtonSolver::Impl::assemble(const Eigen::Matrix3Xd& x, bool project) {
  std::fill(K.valuePtr(), K.valuePtr() + K.nonZeros(), 0.0);
  // Element tangents in parallel chunks, scattered serially in element order: the same sums for
  // any thread count.
  constexpr std::int64_t kChunk = 2048;
  std::vector<ElementStiffness> Ke(static_cast<std::size_t>(kChunk));
  const std::int64_t ne = mesh.n_elements();
  for (std::int64_t first = 0; first < ne; first += kChunk) {
    const std::int64_t count = std::min(kChunk, ne - first);
    parallel_for(count, [&](std::int64_t k) {
      ElementStiffness& Kk = Ke[std::size_t(k)];
      sys.internal().element_stiffness(std::int32_t(first + k), x, Kk);
      if (project) {
        const Eigen::SelfAdjointEigenSolver<ElementStiffness> eigen(0.5 * (Kk + Kk.transpose()));
        Kk = eigen.eigenvectors() * eigen.eigenvalues().cwiseMax(0.0).asDiagonal() * eigen.eigenvectors().transpose();
      }
    });
    for (std::int64_t k = 0; k < count; ++k) add_element(std::size_t(first + k), Ke[std::size_t(k)]);
  }
  sys.add_boundary_stiffness(x, 1.0, [&](std::int32_t a, std::int32_t b, const Eigen::Matrix3d& k) { add_block(a, b, k); });
}

bool NewtonSolver::Impl::solve_linear(const Eigen::VectorXd& r, const NewtonOptions& o, bool shift, NewtonStats& st,
                                      Eigen::VectorXd& dx) {
  if (o.linear_solver == LinearSolver::lu) {
    Eigen::SparseLU<Sparse> lu;
    lu.compute(K);
    if (lu.info() != Eigen::Success) return false;
    dx = lu.solve(r);
    return dx.allFinite();
  }
  const Sparse T = K.transpose();
  const Sparse sym = 0.5 * (K + T);  // the follower pressure's load stiffness is not symmetric
  if (o.linear_solver == LinearSolver::cg) {
    Eigen::ConjugateGradient<Sparse, Eigen::Lower | Eigen::Upper, Eigen::IncompleteCholesky<double>> cg;
    cg.setTolerance(1e-10);
    cg.compute(sym);
    dx = cg.solve(r);
    return cg.info() == Eigen::Success && dx.allFinite();
  }
  const SerialLibraryRegions serial_cholmod;
  if (o.reuse_factorisation && factor_is_exact && solve_with_old_factor(sym, r, st, dx)) return true;
  ++st.factorisations;
  if (!factorise(sym, shift)) return false;
  dx = cholmod.solve(r);
  return dx.allFinite();
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
      ++shifted;
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

double NewtonSolver::Impl::residual(const Eigen::Matrix3Xd& x, Eigen::Matrix3Xd& f) const {
  const Eigen::Matrix3Xd v = Eigen::Matrix3Xd::Zero(3, x.cols());
  sys.forces(x, v, 1.0, f);
  if (!f.allFinite()) return INFINITY;
  Eigen::Matrix3Xd fext = Eigen::Matrix3Xd::Zero(3, x.cols());
  sys.add_loads(x, 1.0, fext);
  const Eigen::Matrix3Xd& free = sys.free_mask();
  const double r_free = f.cwiseProduct(free).cwiseAbs().maxCoeff();
  const double r_fixed = (f - f.cwiseProduct(free)).cwiseAbs().maxCoeff();
  return r_free / std::max({fext.cwiseAbs().maxCoeff(), r_fixed, 1e-300});
}

bool NewtonSolver::Impl::iterate(NodeState& s, const NewtonOptions& o, NewtonStats& st, std::ostream* log) {
  const double h = sys.min_edge();
  Eigen::Matrix3Xd f(3, s.x.cols()), f_try(3, s.x.cols()), x_try;
  double r = residual(s.x, f);
  for (int it = 1; it <= o.max_iterations; ++it) {
    ++st.iterations;
    auto t0 = Clock::now();
    assemble(s.x);
    st.assemble_seconds += seconds_since(t0);
    t0 = Clock::now();
    Eigen::VectorXd dx;
    const Eigen::VectorXd r0 = free_part(f);
    bool solved = solve_linear(r0, o, !o.project_indefinite, st, dx);
    if (!solved && o.project_indefinite) {
      // Indefinite far from equilibrium: Newton on the elements' positive parts (projected
      // Newton; Teran et al., SCA 2005, sec. 4) is a descent direction that still sees the
      // stiffness of every mode, where a diagonal shift stalls the soft ones under the stiff
      // volumetric diagonal. Exact Newton resumes as soon as the tangent factorises.
      st.solve_seconds += seconds_since(t0);
      t0 = Clock::now();
      assemble(s.x, true);
      st.assemble_seconds += seconds_since(t0);
      t0 = Clock::now();
      solved = solve_linear(r0, o, true, st, dx);
    }
    st.solve_seconds += seconds_since(t0);
    if (!solved) return false;
    // Line search on the energy along dx (Crisfield, Non-linear FE analysis of solids and
    // structures, vol. 1, sec. 9.3): g(a) = dx . f(x + a dx) is minus the energy's slope. Accept a
    // while the energy still falls (g > 0) or once |g| has dropped enough; else take the secant
    // root of g; an inverted sample (NaN forces) halves a. The residual norm would be a poor
    // merit: the stiff volume penalty makes it grow even along a good step.
    const double g0 = dx.dot(r0);
    double alpha = 1, r_try = INFINITY;
    for (int k = 0; k <= o.line_search_halvings; ++k) {
      x_try = s.x;
      for (std::size_t c = 0; c < dof.size(); ++c)
        if (dof[c] >= 0) x_try(Eigen::Index(c % 3), Eigen::Index(c / 3)) += alpha * dx[dof[c]];
      r_try = residual(x_try, f_try);
      if (!std::isfinite(r_try)) {
        alpha *= 0.5;
        continue;
      }
      const double g = dx.dot(free_part(f_try));
      if (!(g0 > 0) || g >= 0 || std::abs(g) <= 0.8 * g0 || k == o.line_search_halvings) break;
      alpha = std::clamp(alpha * g0 / (g0 - g), 0.1 * alpha, alpha);
    }
    if (!std::isfinite(r_try)) return false;
    const double update = alpha * dx.cwiseAbs().maxCoeff();
    s.x = x_try;
    f = f_try;
    r = r_try;
    st.residual = r;
    if (log) {
      std::ostringstream line;
      line << "  newton iteration " << it << ": residual " << std::scientific << std::setprecision(2) << r << ", update "
           << update << " mm, step " << std::defaultfloat << alpha;
      *log << line.str() << std::endl;
    }
    if (r <= o.residual_tol && update <= o.update_tol * h) return true;
  }
  return false;
}

NewtonStats NewtonSolver::solve(NodeState& s, const LoadSetter& set_load, double s_from, double s_to,
                                const NewtonOptions& o, std::ostream* log) {
  NewtonStats st;
  const Eigen::Matrix3Xd v = Eigen::Matrix3Xd::Zero(3, s.x.cols());
  double done = s_from, step = s_to - s_from;
  while (done < s_to) {
    const double target = std::min(s_to, done + step);
    const Eigen::Matrix3Xd x_saved = s.x;
    set_load(target);
    Eigen::Matrix3Xd vv = v;
    m->sys.project(s.x, vv, 1.0, 0.0);
    if (m->iterate(s, o, st, log)) {
      done = target;
      ++st.increments;
      step = std::min(2 * step, s_to - s_from);
      continue;
    }
    s.x = x_saved;  // back to the last converged state, half the increment
    ++st.cuts;
    step *= 0.5;
    if (log) *log << "  newton: increment to load " << target << " did not converge; halving it" << std::endl;
    if (st.cuts > o.max_cuts) {
      set_load(done);
      st.converged = false;
      return st;
    }
  }
  s.v.setZero();
  m->sys.forces(s.x, s.v, 1.0, s.f);
  st.converged = true;
  return st;
}

NewtonSolver::NewtonSolver(const MassSpringSystem& sys, const HexMesh& mesh) : m(std::make_unique<Impl>(sys, mesh)) {}
NewtonSolver::~NewtonSolver() = default;

std::int64_t NewtonSolver::free_index(std::int64_t n, int i) const { return m->dof[std::size_t(3 * n + i)]; }

Eigen::MatrixXd NewtonSolver::dense_tangent(const Eigen::Matrix3Xd& x) {
  m->assemble(x);
  return Eigen::MatrixXd(m->K);
}

}  // namespace cardio::mechanics
