#include "cardio/mechanics/newton.hpp"

#include <dlfcn.h>
#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <ostream>
#include <sstream>
#include <vector>

#include "cardio/core/error.hpp"
#include "cardio/core/parallel.hpp"
#include "newton_impl.hpp"

namespace cardio::mechanics {
namespace {

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

NewtonSolver::Impl::Impl(const MassSpringSystem& s, const HexMesh& m) : sys(s), mesh(m) {
  single_threaded_blas();
  CARDIO_CHECK(sys.internal().has_stiffness(),
               "Newton's method needs the element's tangent stiffness; " << sys.internal().name() << " has none");
  build_pattern();
}

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
  for (const auto& pl : sys.loads().pressures)
    for (const Quad& q : pl.faces) link(q);
  for (const auto& lid : sys.loads().lids) link(lid.rim);  // every rim node moves the cap centre
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
  find_mirrors();
}

void NewtonSolver::Impl::find_mirrors() {
  mirror.assign(std::size_t(K.nonZeros()), -1);
  for (int col = 0; col < K.cols(); ++col)
    for (int k = K.outerIndexPtr()[col]; k < K.outerIndexPtr()[col + 1]; ++k)
      mirror[std::size_t(k)] = int(&at(col, K.innerIndexPtr()[k]) - K.valuePtr());
  sym = K;
}

// The follower pressure's load stiffness is not symmetric; the Cholesky factor is of this part.
// The same sums as Eigen's 0.5 * (K + K.transpose()), without building the transpose.
void NewtonSolver::Impl::symmetrise() {
  const double* v = K.valuePtr();
  double* s = sym.valuePtr();
  parallel_for(K.nonZeros(), [&](std::int64_t k) { s[k] = 0.5 * (v[k] + v[mirror[std::size_t(k)]]); });
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

// Most elements are already semidefinite: a pivoted LDL^T (a few microseconds) with no negative
// pivot that reproduces K finds them (Sylvester's law of inertia), and only the others pay for the
// eigendecomposition (about 20 us at 24 x 24). The reconstruction check catches the indefinite
// blocks with a zero diagonal, where LDL^T stops early.
void project_to_positive_part(ElementStiffness& K) {
  const ElementStiffness Ks = 0.5 * (K + K.transpose());
  const Eigen::LDLT<ElementStiffness> ldlt(Ks);
  const double scale = Ks.diagonal().cwiseAbs().maxCoeff();
  if (ldlt.info() == Eigen::Success && ldlt.vectorD().minCoeff() >= -1e-12 * scale &&
      (ldlt.reconstructedMatrix() - Ks).cwiseAbs().maxCoeff() <= 1e-12 * scale) {
    K = Ks;
    return;
  }
  const Eigen::SelfAdjointEigenSolver<ElementStiffness> eigen(Ks);
  K = eigen.eigenvectors() * eigen.eigenvalues().cwiseMax(0.0).asDiagonal() * eigen.eigenvectors().transpose();
}

void NewtonSolver::Impl::assemble(const Eigen::Matrix3Xd& x, bool project, Tangent part) {
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
      sys.internal().element_stiffness(std::int32_t(first + k), x, in, Kk, part);
      if (project) project_to_positive_part(Kk);
    });
    for (std::int64_t k = 0; k < count; ++k) add_element(std::size_t(first + k), Ke[std::size_t(k)]);
  }
  sys.add_boundary_stiffness(x, in.load_factor,
                             [&](std::int32_t a, std::int32_t b, const Eigen::Matrix3d& k) { add_block(a, b, k); });
}

double NewtonSolver::Impl::residual(const Eigen::Matrix3Xd& x, Eigen::Matrix3Xd& f) const {
  const Eigen::Matrix3Xd v = Eigen::Matrix3Xd::Zero(3, x.cols());
  sys.forces(x, v, in, f);
  if (!f.allFinite()) return INFINITY;
  Eigen::Matrix3Xd fext = Eigen::Matrix3Xd::Zero(3, x.cols());
  sys.add_loads(x, in.load_factor, fext);
  const Eigen::Matrix3Xd& free = sys.free_mask();
  const double r_free = f.cwiseProduct(free).cwiseAbs().maxCoeff();
  const double r_fixed = (f - f.cwiseProduct(free)).cwiseAbs().maxCoeff();
  return r_free / std::max({fext.cwiseAbs().maxCoeff(), r_fixed, 1e-300});
}

// One line per iteration: where the residual and the update are largest tell a local problem
// (a rim node, a thin wall) from a global one.
void NewtonSolver::Impl::log_iteration(std::ostream& log, int it, double r, const Eigen::Matrix3Xd& x,
                                       const Eigen::Matrix3Xd& f, const Eigen::VectorXd& dx, double alpha,
                                       const char* tangent, int cg) const {
  Eigen::Index worst_force = 0, worst_dof = 0;
  f.cwiseProduct(sys.free_mask()).colwise().norm().maxCoeff(&worst_force);
  const double update = alpha * dx.cwiseAbs().maxCoeff(&worst_dof);
  const auto node_of = [&](Eigen::Index free) {
    return Eigen::Index(std::find(dof.begin(), dof.end(), int(free)) - dof.begin()) / 3;
  };
  std::ostringstream line;
  line << "  newton iteration " << it << ": residual " << std::scientific << std::setprecision(2) << r << " at ("
       << std::defaultfloat << std::setprecision(4) << x.col(worst_force).transpose() << ") mm, update "
       << std::scientific << std::setprecision(2) << update << " mm at (" << std::defaultfloat << std::setprecision(4)
       << x.col(node_of(worst_dof)).transpose() << ") mm, step " << alpha << " (" << tangent;
  if (cg > 0) line << ", " << cg << " CG";
  log << line.str() << ")" << std::endl;
}

// Indefinite far from equilibrium. First the tangent without the volumetric term's geometric part
// (Tangent::without_volumetric_geometry): on a soft, nearly incompressible heart that part alone
// turns the tangent indefinite, and leaving it out halved the iterations of the first increments
// (docs/heartbeat.md, "Why the soft inflations stall"). Then Newton on the elements' positive
// parts (projected Newton; Teran et al., SCA 2005, sec. 4), a descent direction that still sees
// the stiffness of every mode, where a diagonal shift stalls the soft ones under the stiff
// volumetric diagonal. Exact Newton resumes as soon as the tangent factorises.
bool NewtonSolver::Impl::fallback_direction(const Eigen::Matrix3Xd& x, const Eigen::VectorXd& r0,
                                            const NewtonOptions& o, NewtonStats& st, Eigen::VectorXd& dx,
                                            const char*& tangent) {
  const auto try_tangent = [&](bool project, Tangent part, bool shift) {
    auto t0 = Clock::now();
    assemble(x, project, part);
    st.assemble_seconds += seconds_since(t0);
    t0 = Clock::now();
    const bool solved = solve_linear(r0, o, shift, st, dx);
    st.solve_seconds += seconds_since(t0);
    return solved;
  };
  if (o.volumetric_fallback && try_tangent(false, Tangent::without_volumetric_geometry, false)) {
    tangent = "without volumetric geometry";
    return true;
  }
  const bool solved = try_tangent(true, Tangent::exact, true);
  tangent = factor_is_exact ? "projected" : "projected, shifted";
  return solved;
}

bool NewtonSolver::Impl::iterate(NodeState& s, const NewtonOptions& o, NewtonStats& st, std::ostream* log) {
  const double h = sys.min_edge();
  Eigen::Matrix3Xd f(3, s.x.cols()), f_try(3, s.x.cols()), x_try;
  double r = residual(s.x, f);
  reuse_pays = true;  // a new load on a converged state: the tangent has changed little
  for (int it = 1; it <= o.max_iterations; ++it) {
    ++st.iterations;
    auto t0 = Clock::now();
    assemble(s.x);
    st.assemble_seconds += seconds_since(t0);
    t0 = Clock::now();
    Eigen::VectorXd dx;
    const Eigen::VectorXd r0 = free_part(f);
    const int krylov_before = st.krylov_iterations, factorisations_before = st.factorisations;
    bool solved = solve_linear(r0, o, !o.project_indefinite, st, dx);
    const char* tangent = o.linear_solver == LinearSolver::lu          ? "LU"
                          : o.linear_solver == LinearSolver::cg        ? "CG"
                          : st.factorisations == factorisations_before ? "lagged factor"
                          : factor_is_exact                            ? "exact"
                                                                       : "shifted";
    st.solve_seconds += seconds_since(t0);
    if (!solved && o.project_indefinite) solved = fallback_direction(s.x, r0, o, st, dx, tangent);
    if (!solved) return false;
    double r_try = INFINITY;
    const double alpha = line_search(s.x, dx, r0, o, x_try, f_try, r_try);
    if (!std::isfinite(r_try)) return false;
    const double update = alpha * dx.cwiseAbs().maxCoeff();
    reuse_pays = alpha == 1 && r_try <= 0.1 * r;  // converging fast: the next tangent is close
    s.x = x_try;
    f = f_try;
    r = r_try;
    st.residual = r;
    if (log) log_iteration(*log, it, r, s.x, f, dx, alpha, tangent, st.krylov_iterations - krylov_before);
    if (r <= o.residual_tol && update <= o.update_tol * h) return true;
  }
  return false;
}

bool NewtonSolver::increment(NodeState& s, const ForceInputs& in, const NewtonOptions& o, NewtonStats& st,
                             std::ostream* log) {
  const Eigen::Matrix3Xd x_saved = s.x;
  m->in = in;
  Eigen::Matrix3Xd v = Eigen::Matrix3Xd::Zero(3, s.x.cols());
  m->sys.project(s.x, v, in.load_factor, 0.0);
  if (m->iterate(s, o, st, log)) return true;
  s.x = x_saved;  // back to the state the increment started from
  return false;
}

NewtonStats NewtonSolver::solve(NodeState& s, const LoadPath& path, double s_from, double s_to, const NewtonOptions& o,
                                std::ostream* log) {
  CARDIO_CHECK(path, "Newton: no load path");
  NewtonStats st;
  CARDIO_CHECK(o.first_increment > 0 && o.first_increment <= 1,
               "Newton: first_increment " << o.first_increment << " outside (0, 1]");
  st.reached = s_from;
  if (s_from == s_to) {  // refine an approximate equilibrium at s_to, no cuts
    if (!increment(s, path(s_to), o, st, log)) return st;
    ++st.increments;
  }
  double done = s_from, step = (s_to - s_from) * o.first_increment;
  while (done < s_to) {
    const double target = std::min(s_to, done + step);
    if (increment(s, path(target), o, st, log)) {
      done = st.reached = target;
      ++st.increments;
      step = std::min(2 * step, s_to - s_from);
      continue;
    }
    ++st.cuts;  // half the increment from the last converged state
    step *= 0.5;
    if (log) *log << "  newton: increment to load " << target << " did not converge; halving it" << std::endl;
    if (st.cuts > o.max_cuts) {
      st.converged = false;
      return st;
    }
  }
  s.v.setZero();
  m->sys.forces(s.x, s.v, m->in, s.f);
  st.converged = true;
  return st;
}

NewtonSolver::NewtonSolver(const MassSpringSystem& sys, const HexMesh& mesh) : m(std::make_unique<Impl>(sys, mesh)) {}
NewtonSolver::~NewtonSolver() = default;

std::int64_t NewtonSolver::free_index(std::int64_t n, int i) const { return m->dof[std::size_t(3 * n + i)]; }

Eigen::MatrixXd NewtonSolver::dense_tangent(const Eigen::Matrix3Xd& x, const ForceInputs& in) {
  m->in = in;
  m->assemble(x);
  return Eigen::MatrixXd(m->K);
}

}  // namespace cardio::mechanics
