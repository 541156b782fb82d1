// The largest frequency of the linearised system, for the explicit integrators' stable step.
#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "cardio/core/parallel.hpp"
#include "cardio/mechanics/integrators.hpp"

namespace cardio::mechanics {
namespace {

/// y = M^-1 K v on the free coordinates, K v by a one-sided difference of the forces from f(x),
/// which is evaluated once: the step of 1e-7 of the smallest edge leaves a relative error of about
/// 1e-7 in the frequency, at half the force evaluations of a central difference (the estimate runs
/// every 10-50 ms of a beat).
class StiffnessProduct {
 public:
  StiffnessProduct(const MassSpringSystem& sys, const Eigen::Matrix3Xd& x, const ForceInputs& in)
      : m_sys(sys), m_x(x), m_in(in), m_f0(forces(x)) {}

  void apply(const Eigen::Matrix3Xd& v, Eigen::Matrix3Xd& y) {
    const double eps = 1e-7 * m_sys.min_edge() / v.cwiseAbs().maxCoeff();
    const Eigen::Matrix3Xd fp = forces(m_x + eps * v);
    const Eigen::VectorXd& m = m_sys.mass();
    const Eigen::Matrix3Xd& free = m_sys.free_mask();
    y.resize(3, m_x.cols());
    parallel_for(m_x.cols(), [&](std::int64_t i) {
      y.col(i) = (-(fp.col(i) - m_f0.col(i)) / eps / m[i]).cwiseProduct(free.col(i));
    });
  }

 private:
  Eigen::Matrix3Xd forces(const Eigen::Matrix3Xd& x) const {
    Eigen::Matrix3Xd f = Eigen::Matrix3Xd::Zero(3, x.cols());
    m_sys.internal().add_forces(x, Eigen::Matrix3Xd(), m_in, f);
    m_sys.add_foundation_forces(x, f);  // elastic supports stiffen their nodes too
    return f;
  }

  const MassSpringSystem& m_sys;
  const Eigen::Matrix3Xd& m_x;
  const ForceInputs& m_in;
  const Eigen::Matrix3Xd m_f0;
};

/// Mass inner product a^T M b, summed in a fixed order.
double mass_dot(const Eigen::VectorXd& m, const Eigen::Matrix3Xd& a, const Eigen::Matrix3Xd& b) {
  return deterministic_sum(a.cols(), [&](std::int64_t i) { return m[i] * a.col(i).dot(b.col(i)); });
}

/// The start vector: the deterministic random one, or the warm one with a tenth of it mixed in (a
/// mode that takes over elsewhere in the mesh, a stiffening region far from the last one, must be
/// present in the start vector to grow within a few iterations; the last vector alone may hold
/// almost none of it). M-normalised; empty if it has no free component.
Eigen::Matrix3Xd start_vector(const MassSpringSystem& sys, const Eigen::Matrix3Xd* warm, std::int64_t n) {
  const Eigen::Matrix3Xd& free = sys.free_mask();
  Eigen::Matrix3Xd u(3, n);
  std::mt19937_64 rng(12345);  // fixed seed: the estimate is deterministic
  std::uniform_real_distribution<double> uni(-1.0, 1.0);
  for (std::int64_t i = 0; i < n; ++i)
    for (int d = 0; d < 3; ++d) u(d, i) = uni(rng) * free(d, i);
  if (warm != nullptr && warm->cols() == n && warm->allFinite()) {
    const Eigen::Matrix3Xd w = warm->cwiseProduct(free);
    const double wn = std::sqrt(mass_dot(sys.mass(), w, w)), rn = std::sqrt(mass_dot(sys.mass(), u, u));
    if (wn > 0 && rn > 0) u = w / wn + (0.1 / rn) * u;
  }
  const double un = std::sqrt(mass_dot(sys.mass(), u, u));
  return un > 0 ? Eigen::Matrix3Xd(u / un) : Eigen::Matrix3Xd();
}

/// `steps` Lanczos steps on M^-1 K in the mass inner product from the M-normalised v, with full
/// reorthogonalisation (Golub & Van Loan, Matrix Computations, 4th ed., sec. 10.1 and 10.3.1):
/// returns the largest Ritz value and leaves its Ritz vector (M-normalised) in v.
double lanczos_cycle(StiffnessProduct& K, const Eigen::VectorXd& m, int steps, Eigen::Matrix3Xd& v) {
  std::vector<Eigen::Matrix3Xd> basis{v};
  std::vector<double> alpha, beta;
  Eigen::Matrix3Xd y;
  for (int k = 0; k < steps; ++k) {
    K.apply(basis.back(), y);
    alpha.push_back(mass_dot(m, basis.back(), y));
    for (const Eigen::Matrix3Xd& q : basis) y -= mass_dot(m, q, y) * q;  // exactly: the 3-term recurrence
    const double b = std::sqrt(mass_dot(m, y, y));
    if (k + 1 == steps || !(b > 1e-12 * std::abs(alpha.back()))) break;  // done, or an invariant subspace
    beta.push_back(b);
    basis.push_back(y / b);
  }
  const Eigen::Index size = Eigen::Index(alpha.size());
  Eigen::MatrixXd T = Eigen::MatrixXd::Zero(size, size);
  for (Eigen::Index k = 0; k < size; ++k) {
    T(k, k) = alpha[std::size_t(k)];
    if (k + 1 < size) T(k, k + 1) = T(k + 1, k) = beta[std::size_t(k)];
  }
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> ritz(T);
  const Eigen::Index top = size - 1;  // the eigenvalues ascend
  v.setZero();
  for (Eigen::Index k = 0; k < size; ++k) v += ritz.eigenvectors()(k, top) * basis[std::size_t(k)];
  return ritz.eigenvalues()[top];
}

}  // namespace

double estimate_max_frequency(const MassSpringSystem& sys, const Eigen::Matrix3Xd& x, int iterations,
                              const ForceInputs& in) {
  return estimate_max_frequency(sys, x, iterations, nullptr, in);
}

// Restarted Lanczos: cycles of at most kMaxLanczosBasis steps, each from the last one's Ritz
// vector, so the memory stays at a few state vectors. The largest Ritz value never falls below the
// Rayleigh quotient of as many power iterations from the same start (the power iterate lies in the
// same Krylov space); it converges at about the square root of the power method's gap ratio.
double estimate_max_frequency(const MassSpringSystem& sys, const Eigen::Matrix3Xd& x, int iterations,
                              Eigen::Matrix3Xd* vector, const ForceInputs& in) {
  constexpr int kMaxLanczosBasis = 12;
  Eigen::Matrix3Xd v = start_vector(sys, vector, x.cols());
  if (v.size() == 0) return 0;
  StiffnessProduct K(sys, x, in);
  double lambda = 0;
  for (int done = 0; done < iterations; done += kMaxLanczosBasis)
    lambda = lanczos_cycle(K, sys.mass(), std::min(kMaxLanczosBasis, iterations - done), v);
  if (vector != nullptr) *vector = v;
  return std::sqrt(std::max(0.0, lambda));
}

}  // namespace cardio::mechanics
