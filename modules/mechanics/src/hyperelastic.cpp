#include "cardio/mechanics/hyperelastic.hpp"

#include <Eigen/Dense>
#include <cmath>
#include <string>

#include "cardio/core/error.hpp"
#include "cardio/core/parallel.hpp"
#include "hourglass.hpp"

namespace cardio::mechanics {
namespace {

using V3 = Eigen::Vector3d;

// Axis vectors l_a = sum_j W(a, j) x_j (as in bourguignon_cani.cpp).
inline Eigen::Matrix3d axes(const Eigen::Matrix<double, 3, 8>& W, const NodeMatrix& x) {
  Eigen::Matrix3d A = Eigen::Matrix3d::Zero();
  for (int j = 0; j < 8; ++j) {
    const V3 xj = x.col(j);
    A.col(0) += W(0, j) * xj;
    A.col(1) += W(1, j) * xj;
    A.col(2) += W(2, j) * xj;
  }
  return A;
}

// Q of the Guccione law (Land et al. 2015, eq. for problem 1) for a symmetric E.
inline double guccione_q(const GuccioneLaw& m, const Eigen::Matrix3d& E) {
  return m.b_f * E(0, 0) * E(0, 0) + m.b_t * (E(1, 1) * E(1, 1) + E(2, 2) * E(2, 2) + 2 * E(1, 2) * E(1, 2)) +
         2 * m.b_fs * (E(0, 1) * E(0, 1) + E(0, 2) * E(0, 2));
}

// (1/2) dQ/dE as a symmetric tensor: the moduli of the exponent applied to E.
inline Eigen::Matrix3d half_dq(const GuccioneLaw& m, const Eigen::Matrix3d& E) {
  Eigen::Matrix3d H;
  H(0, 0) = m.b_f * E(0, 0);
  H(1, 1) = m.b_t * E(1, 1);
  H(2, 2) = m.b_t * E(2, 2);
  H(1, 2) = H(2, 1) = m.b_t * E(1, 2);
  H(0, 1) = H(1, 0) = m.b_fs * E(0, 1);
  H(0, 2) = H(2, 0) = m.b_fs * E(0, 2);
  return H;
}

void check_range(bool ok, const char* what, double value, const char* range) {
  CARDIO_CHECK(ok, "Guccione law: " << what << " = " << value << " must be " << range);
}

}  // namespace

void GuccioneLaw::validate() const {
  check_range(std::isfinite(C) && C >= 0, "C [kPa]", C, "finite and >= 0");
  check_range(std::isfinite(b_f) && b_f >= 0, "b_f", b_f, "finite and >= 0");
  check_range(std::isfinite(b_t) && b_t >= 0, "b_t", b_t, "finite and >= 0");
  check_range(std::isfinite(b_fs) && b_fs >= 0, "b_fs", b_fs, "finite and >= 0");
  check_range(std::isfinite(bulk) && bulk >= 0, "bulk [kPa]", bulk, "finite and >= 0");
  check_range(std::isfinite(hourglass_factor) && hourglass_factor >= 0, "hourglass_factor", hourglass_factor,
              "finite and >= 0");
  check_range(std::isfinite(damping_time) && damping_time >= 0, "damping_time [ms]", damping_time, "finite and >= 0");
  check_range(std::isfinite(active.beta) && active.beta >= 0 && active.beta < 1, "active beta", active.beta,
              "in [0, 1)");
  check_range(std::isfinite(active.gamma) && active.gamma > -1, "active gamma", active.gamma, "> -1");
}

double guccione_energy_density(const GuccioneLaw& law, const Eigen::Matrix3d& E) {
  const Eigen::Matrix3d Es = 0.5 * (E + E.transpose());
  const double J = std::sqrt((Eigen::Matrix3d::Identity() + 2 * Es).determinant());
  return 0.5 * law.C * std::expm1(guccione_q(law, Es)) + 0.5 * law.bulk * (J - 1) * (J - 1);
}

Eigen::Matrix3d guccione_pk2(const GuccioneLaw& law, const Eigen::Matrix3d& E) {
  const Eigen::Matrix3d Es = 0.5 * (E + E.transpose());
  const Eigen::Matrix3d Cg = Eigen::Matrix3d::Identity() + 2 * Es;
  const double J = std::sqrt(Cg.determinant());
  return law.C * std::exp(guccione_q(law, Es)) * half_dq(law, Es) + law.bulk * (J - 1) * J * Cg.inverse();
}

Eigen::Matrix<double, 6, 6> guccione_stiffness_voigt(const GuccioneLaw& law) {
  Eigen::Matrix<double, 6, 6> S = Eigen::Matrix<double, 6, 6>::Zero();
  S.topLeftCorner<3, 3>().setConstant(law.bulk);
  S(0, 0) += law.C * law.b_f;
  S(1, 1) += law.C * law.b_t;
  S(2, 2) += law.C * law.b_t;
  S(3, 3) = 0.5 * law.C * law.b_t;   // sn
  S(4, 4) = 0.5 * law.C * law.b_fs;  // fn
  S(5, 5) = 0.5 * law.C * law.b_fs;  // fs
  return S;
}

double guccione_hourglass_modulus(const GuccioneLaw& law) {
  if (law.hourglass_factor == 0) return 0;
  const Eigen::Matrix3d N = guccione_stiffness_voigt(law).topLeftCorner<3, 3>();
  const Eigen::FullPivLU<Eigen::Matrix3d> lu(N);
  if (lu.rank() < 3) return 0;  // a direction without stiffness: no Young's modulus to match
  const Eigen::Matrix3d compliance = lu.inverse();
  return law.hourglass_factor / compliance.diagonal().maxCoeff();
}

double guccione_element_forces(const BCElementData& d, const GuccioneLaw& law, double hourglass_modulus, double Ta,
                               double activation, const NodeMatrix& x, const NodeMatrix* v, NodeMatrix& f) {
  const double V0 = d.volume;
  const Eigen::Matrix3d A = axes(d.W, x);  // current axes l_f, l_s, l_n
  const V3 ir0(d.inv_rest_length[0], d.inv_rest_length[1], d.inv_rest_length[2]);
  // Active strain (law.active): the elastic law sees the fibre rest length r_f0 (1 - beta a) and
  // the cross-fibre ones r_0 / sqrt(1 - beta a) (F_a isochoric: a free element shortens by beta a).
  const double shortening = 1 - law.active.beta * activation;
  const double widening = std::sqrt(shortening);
  const V3 ir(ir0[0] / shortening, ir0[1] * widening, ir0[2] * widening);
  const double C = law.C * (1 + law.active.gamma * activation);
  const Eigen::Matrix3d M = A.transpose() * A;  // l_a . l_b
  double W = 0;

  // Passive Guccione term: E_ab = (l_a . l_b / (r_a r_b) - delta_ab) / 2, S = C e^Q (dQ/dE)/2.
  Eigen::Matrix3d S = Eigen::Matrix3d::Zero();
  if (C != 0) {
    Eigen::Matrix3d E;
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 3; ++b) E(a, b) = 0.5 * (M(a, b) * ir[a] * ir[b] - (a == b ? 1.0 : 0.0));
    const double Q = guccione_q(law, E);
    W += 0.5 * V0 * C * std::expm1(Q);  // expm1: no cancellation at small strain
    S = (C * std::exp(Q)) * half_dq(law, E);
  }
  // Viscous stress tau C_small : dE/dt with the small-strain moduli of the (active) law:
  // dissipative, and zero for rigid motions (dE/dt = 0).
  if (v != nullptr && law.damping_time > 0 && C != 0) {
    const Eigen::Matrix3d N = A.transpose() * axes(d.W, *v);  // l_a . dl_b/dt
    Eigen::Matrix3d Edot;
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 3; ++b) Edot(a, b) = 0.5 * (N(a, b) + N(b, a)) * ir[a] * ir[b];
    S += (law.damping_time * C) * half_dq(law, Edot);
  }
  // dW/dA = V0 A D S D, D = diag(1/r): G = D S D, force on the axes g = -V0 A G.
  Eigen::Matrix3d G;
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b) G(a, b) = S(a, b) * ir[a] * ir[b];
  // Active tension Ta f0 (x) f0 in S (reference fibre length r_f0): potential V0 Ta E_ff,
  // force -V0 Ta l_f / r_f0^2 on the fibre axis, i.e. Ta lambda per rest cross-section V0 / r_f0.
  if (Ta != 0) {
    W += V0 * Ta * 0.5 * (M(0, 0) * ir0[0] * ir0[0] - 1);
    G(0, 0) += Ta * ir0[0] * ir0[0];
  }
  Eigen::Matrix3d g = -V0 * (A * G);

  // Volume penalty kappa V0/2 (J - 1)^2 with J = det A / (r_f0 r_s r_n) = det F (total, not elastic).
  if (law.bulk != 0) {
    const double inv_detL = ir0[0] * ir0[1] * ir0[2];
    const V3 c0 = A.col(1).cross(A.col(2)), c1 = A.col(2).cross(A.col(0)), c2 = A.col(0).cross(A.col(1));
    const double J = A.col(0).dot(c0) * inv_detL;
    W += 0.5 * V0 * law.bulk * (J - 1) * (J - 1);
    const double s = V0 * law.bulk * (J - 1) * inv_detL;
    g.col(0) -= s * c0;
    g.col(1) -= s * c1;
    g.col(2) -= s * c2;
  }

  // Axis forces to the nodes with the rest weights (the "-" points get -g through W).
  for (int j = 0; j < 8; ++j) f.col(j) += d.W(0, j) * g.col(0) + d.W(1, j) * g.col(1) + d.W(2, j) * g.col(2);

  // Hourglass control (hourglass.hpp): zero on affine motions, k = g h / 6.
  if (hourglass_modulus > 0) W += detail::hourglass_forces(hourglass_modulus * d.size / 6.0, x, f);
  return W;
}

GuccioneForces::GuccioneForces(const HexMesh& mesh, std::vector<GuccioneLaw> laws)
    : m_hexes(mesh.hexes), m_material(mesh.material), m_laws(std::move(laws)) {
  CARDIO_CHECK(!m_laws.empty(), "Guccione forces need at least one material law");
  for (std::size_t k = 0; k < m_laws.size(); ++k) {
    try {
      m_laws[k].validate();
    } catch (const std::exception& ex) {
      CARDIO_FAIL("material " << k << ": " << ex.what());
    }
    m_hourglass.push_back(guccione_hourglass_modulus(m_laws[k]));
  }
  for (std::size_t e = 0; e < m_hexes.size(); ++e)
    CARDIO_CHECK(m_material[e] < m_laws.size(), "element " << e << " has material " << m_material[e] << " but only "
                                                           << m_laws.size() << " are defined");
  m_data.resize(m_hexes.size());
  std::vector<std::string> errors(m_hexes.size());
  parallel_for(static_cast<std::int64_t>(m_hexes.size()), [&](std::int64_t e) {
    Eigen::Matrix3d frame;
    frame << mesh.fibre.col(e), mesh.sheet.col(e), mesh.normal(e);
    try {
      m_data[e] = bc_element_data(gather(mesh.rest, m_hexes[e]), frame);
    } catch (const std::exception& ex) {
      errors[e] = ex.what();
    }
  });
  for (std::size_t e = 0; e < errors.size(); ++e)
    if (!errors[e].empty()) CARDIO_FAIL("element " << e << ": " << errors[e]);
  m_schedule = schedule_elements(mesh);
}

void GuccioneForces::set_active_tension(std::vector<double> Ta, std::vector<double> activation) {
  const std::size_t n = m_hexes.size();
  CARDIO_CHECK(Ta.empty() || Ta.size() == n, "active tension has " << Ta.size() << " values for " << n << " elements");
  CARDIO_CHECK(activation.empty() || activation.size() == n,
               "activation has " << activation.size() << " values for " << n << " elements");
  for (std::size_t e = 0; e < Ta.size(); ++e)
    CARDIO_CHECK(std::isfinite(Ta[e]), "active tension of element " << e << " is " << Ta[e] << " kPa");
  for (std::size_t e = 0; e < activation.size(); ++e)
    CARDIO_CHECK(activation[e] >= 0 && activation[e] <= 1,
                 "activation of element " << e << " is " << activation[e] << " (must be in [0, 1])");
  m_Ta = std::move(Ta);
  m_activation = std::move(activation);
}

void GuccioneForces::add_forces(const Eigen::Matrix3Xd& x, const Eigen::Matrix3Xd& v, Eigen::Matrix3Xd& f) const {
  const bool with_v = v.cols() == x.cols() && max_damping_time() > 0;
  // The schedule makes the scatter race-free and its summation order thread-count independent.
  for_each_element(m_schedule, [&](std::int32_t e) {
    const Hex& hx = m_hexes[e];
    const NodeMatrix xe = gather(x, hx);
    NodeMatrix ve, fe = NodeMatrix::Zero();
    if (with_v) ve = gather(v, hx);
    const std::uint16_t mat = m_material[e];
    guccione_element_forces(m_data[e], m_laws[mat], m_hourglass[mat], m_Ta.empty() ? 0.0 : m_Ta[e],
                            m_activation.empty() ? 0.0 : m_activation[e], xe, with_v ? &ve : nullptr, fe);
    for (int i = 0; i < 8; ++i) f.col(hx[i]) += fe.col(i);
  });
}

double GuccioneForces::energy(const Eigen::Matrix3Xd& x) const {
  return deterministic_sum(static_cast<std::int64_t>(m_hexes.size()), [&](std::int64_t e) {
    NodeMatrix fe = NodeMatrix::Zero();
    const std::uint16_t mat = m_material[e];
    return guccione_element_forces(m_data[e], m_laws[mat], m_hourglass[mat], m_Ta.empty() ? 0.0 : m_Ta[e],
                                   m_activation.empty() ? 0.0 : m_activation[e], gather(x, m_hexes[e]), nullptr, fe);
  });
}

double GuccioneForces::max_damping_time() const {
  double t = 0;
  for (const auto& m : m_laws) t = std::max(t, m.damping_time);
  return t;
}

}  // namespace cardio::mechanics
