#include "cardio/mechanics/newton.hpp"

#include <Eigen/CholmodSupport>
#include <dlfcn.h>
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
  Eigen::CholmodSupernodalLLT<Sparse, Eigen::Lower> cholmod;
  bool analysed = false;
  long shifted = 0;    // factorisations of a shifted (indefinite) tangent
  double next_mu = 0;  // the diagonal shift to try first (0: none)

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
  void assemble(const Eigen::Matrix3Xd& x);
  Eigen::VectorXd free_part(const Eigen::Matrix3Xd& f) const {
    Eigen::VectorXd r(K.rows());
    for (std::size_t k = 0; k < dof.size(); ++k)
      if (dof[k] >= 0) r[dof[k]] = f(Eigen::Index(k % 3), Eigen::Index(k / 3));
    return r;
  }
  bool solve_linear(const Eigen::VectorXd& r, LinearSolver which, Eigen::VectorXd& dx);
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
}

void NewtonSolver::Impl::assemble(const Eigen::Matrix3Xd& x) {
  std::fill(K.valuePtr(), K.valuePtr() + K.nonZeros(), 0.0);
  // Element tangents in parallel chunks, scattered serially in element order: the same sums for
  // any thread count.
  constexpr std::int64_t kChunk = 2048;
  std::vector<ElementStiffness> Ke(static_cast<std::size_t>(kChunk));
  const std::int64_t ne = mesh.n_elements();
  for (std::int64_t first = 0; first < ne; first += kChunk) {
    const std::int64_t count = std::min(kChunk, ne - first);
    parallel_for(count, [&](std::int64_t k) { sys.internal().element_stiffness(std::int32_t(first + k), x, Ke[std::size_t(k)]); });
    for (std::int64_t k = 0; k < count; ++k) {
      const Hex& h = mesh.hexes[std::size_t(first + k)];
      for (int a = 0; a < 8; ++a)
        for (int b = 0; b < 8; ++b) add_block(h[a], h[b], Ke[std::size_t(k)].template block<3, 3>(3 * a, 3 * b));
    }
  }
  sys.add_boundary_stiffness(x, 1.0, [&](std::int32_t a, std::int32_t b, const Eigen::Matrix3d& k) { add_block(a, b, k); });
}

bool NewtonSolver::Impl::solve_linear(const Eigen::VectorXd& r, LinearSolver which, Eigen::VectorXd& dx) {
  if (which == LinearSolver::lu) {
    Eigen::SparseLU<Sparse> lu;
    lu.compute(K);
    if (lu.info() != Eigen::Success) return false;
    dx = lu.solve(r);
    return dx.allFinite();
  }
  const Sparse T = K.transpose();
  const Sparse sym = 0.5 * (K + T);  // the follower pressure's load stiffness is not symmetric
  if (which == LinearSolver::cg) {
    Eigen::ConjugateGradient<Sparse, Eigen::Lower | Eigen::Upper, Eigen::IncompleteCholesky<double>> cg;
    cg.setTolerance(1e-10);
    cg.compute(sym);
    dx = cg.solve(r);
    return cg.info() == Eigen::Success && dx.allFinite();
  }
  const SerialLibraryRegions serial_cholmod;
  if (!analysed) {
    cholmod.cholmod().print = 0;  // silent: an indefinite tangent is handled below
    cholmod.analyzePattern(sym);
    analysed = true;
  }
  // Not positive definite (far from equilibrium the volume penalty's pressure makes the tangent
  // indefinite): shift the diagonal, mu D with D = |diag K|, growing mu tenfold until the
  // Cholesky succeeds (a Levenberg-Marquardt step: still a descent direction, and exact Newton
  // again near a stable equilibrium). The shift that worked, divided by ten, is tried first
  // next time, so a run of indefinite tangents does not pay for the failed attempts each time.
  const Eigen::VectorXd D = sym.diagonal().cwiseAbs();
  double mu = next_mu;
  for (;; mu = mu == 0 ? 1e-4 : 10 * mu) {
    if (mu > 1e2) return false;
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
  next_mu = mu >= 1e-3 ? mu / 10 : 0.0;
  dx = cholmod.solve(r);
  return dx.allFinite();
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
    const bool solved = solve_linear(r0, o.linear_solver, dx);
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
