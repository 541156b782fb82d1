#include "cardio/mechanics/system.hpp"

#include <array>
#include <cmath>
#include <limits>
#include <map>

#include "cardio/core/error.hpp"
#include "cardio/core/parallel.hpp"
#include "lid_pressure.hpp"

namespace cardio::mechanics {

MassSpringSystem::MassSpringSystem(const HexMesh& mesh, std::unique_ptr<InternalForces> internal, Eigen::VectorXd mass,
                                   BoundaryConditions boundary)
    : m_internal(std::move(internal)), m_boundary(std::move(boundary)), m_rest(mesh.rest), m_mass(std::move(mass)) {
  CARDIO_CHECK(m_mass.size() == m_rest.cols(),
               "mass vector has " << m_mass.size() << " entries for " << m_rest.cols() << " nodes");
  for (Eigen::Index i = 0; i < m_mass.size(); ++i)
    CARDIO_CHECK(m_mass[i] > 0 && std::isfinite(m_mass[i]),
                 "node " << i << " has mass " << m_mass[i] << " mg (every node needs a positive mass)");
  m_min_edge = std::numeric_limits<double>::infinity();
  constexpr int edges[12][2] = {{0, 1}, {3, 2}, {4, 5}, {7, 6}, {0, 3}, {1, 2},
                                {4, 7}, {5, 6}, {0, 4}, {1, 5}, {2, 6}, {3, 7}};
  for (const Hex& h : mesh.hexes)
    for (const auto& e : edges) m_min_edge = std::min(m_min_edge, (m_rest.col(h[e[0]]) - m_rest.col(h[e[1]])).norm());
  check_nodes();
  m_free = Eigen::Matrix3Xd::Ones(3, m_rest.cols());
  for (const DofConstraint& c : m_boundary.constraints)
    for (std::int32_t n : c.nodes)
      for (int i = 0; i < 3; ++i)
        if (c.mask >> i & 1u) m_free(i, n) = 0;
  assemble_foundation_stiffness();
}

void MassSpringSystem::assemble_foundation_stiffness() {
  // Summed in face order (deterministic), kept per node in ascending node order.
  std::map<std::int32_t, Eigen::Matrix3d> stiffness;
  for (const ElasticFoundation& fd : m_boundary.foundations) {
    if (fd.stiffness == 0) continue;
    for (const Quad& q : fd.faces) {
      const auto [N, kA] = foundation_share(fd, q);
      if (kA == 0) continue;
      const Eigen::Matrix3d kP = kA * fd.projection(N);
      for (std::int32_t n : q) {
        const auto [it, added] = stiffness.try_emplace(n, Eigen::Matrix3d::Zero());
        it->second += kP;
      }
    }
  }
  for (const auto& [n, K] : stiffness) {
    m_foundation_nodes.push_back(n);
    m_foundation_stiffness.push_back(K);
  }
}

void MassSpringSystem::check_nodes() const {
  const auto check = [&](std::int32_t n, const char* what) {
    CARDIO_CHECK(n >= 0 && n < m_rest.cols(), what << " names node " << n << " outside the mesh");
  };
  for (const DofConstraint& c : m_boundary.constraints)
    for (std::int32_t n : c.nodes) check(n, "constraint");
  for (const NodalLoad& l : m_boundary.loads.nodal)
    for (std::int32_t n : l.nodes) check(n, "nodal load");
  for (const PressureLoad& p : m_boundary.loads.pressures)
    for (const Quad& q : p.faces)
      for (std::int32_t n : q) check(n, "pressure face");
  for (const LidPressureLoad& lid : m_boundary.loads.lids) {
    for (const auto& edge : lid.edges)
      for (std::int32_t n : edge) check(n, "lid pressure edge");
    for (std::int32_t n : lid.rim) check(n, "lid pressure rim");
  }
  for (const ElasticFoundation& fd : m_boundary.foundations)
    for (const Quad& q : fd.faces)
      for (std::int32_t n : q) check(n, "elastic foundation face");
}

NodeState MassSpringSystem::rest_state(const ForceInputs& in) const {
  NodeState st;
  st.x = m_rest;
  st.v = Eigen::Matrix3Xd::Zero(3, m_rest.cols());
  st.f.resize(3, m_rest.cols());
  st.mass = m_mass;
  project(st.x, st.v, in.load_factor, 0.0);
  forces(st.x, st.v, in, st.f);
  return st;
}

void MassSpringSystem::forces(const Eigen::Matrix3Xd& x, const Eigen::Matrix3Xd& v, const ForceInputs& in,
                              Eigen::Matrix3Xd& f) const {
  f.resize(3, x.cols());
  parallel_for(f.cols(), [&](std::int64_t i) { f.col(i).setZero(); });  // a serial memset idled the team
  m_internal->add_forces(x, v, in, f);
  add_foundation_forces(x, f);
  add_loads(x, in.load_factor, f);
}

std::pair<Eigen::Vector3d, double> MassSpringSystem::foundation_share(const ElasticFoundation& fd,
                                                                      const Quad& q) const {
  // Rest area vector of the bilinear quad: half the cross product of its diagonals.
  const Eigen::Vector3d a = 0.5 * (m_rest.col(q[2]) - m_rest.col(q[0])).cross(m_rest.col(q[3]) - m_rest.col(q[1]));
  const double area = a.norm();
  if (!(area > 0)) return {Eigen::Vector3d::Zero(), 0.0};
  return {a / area, 0.25 * fd.stiffness * area};  // a quarter of the face per node
}

void MassSpringSystem::add_foundation_forces(const Eigen::Matrix3Xd& x, Eigen::Matrix3Xd& f) const {
  parallel_for(static_cast<std::int64_t>(m_foundation_nodes.size()), [&](std::int64_t k) {
    const std::int32_t n = m_foundation_nodes[std::size_t(k)];
    f.col(n) -= m_foundation_stiffness[std::size_t(k)] * (x.col(n) - m_rest.col(n));
  });
}

namespace {

/// The 2x2 Gauss points on [0, 1].
const double kGauss[2] = {0.5 - 0.5 / std::sqrt(3.0), 0.5 + 0.5 / std::sqrt(3.0)};

/// The four corners of a boundary quad, in its node order.
using FaceNodes = std::array<Eigen::Vector3d, 4>;

/// The tangents x_xi and x_eta of the bilinear quad at (xi, eta) in [0, 1]^2.
std::pair<Eigen::Vector3d, Eigen::Vector3d> quad_tangents(const FaceNodes& x, double xi, double eta) {
  return {(1 - eta) * (x[1] - x[0]) + eta * (x[2] - x[3]), (1 - xi) * (x[3] - x[0]) + xi * (x[2] - x[1])};
}

/// visit(p, quad, corners) for every face of the follower pressures whose pressure p at load factor s
/// is not zero, serially in load and face order.
template <class Visit>
void for_each_pressed_face(const Loads& loads, const Eigen::Matrix3Xd& x, double s, Visit&& visit) {
  for (const PressureLoad& pl : loads.pressures) {
    const double p = s * pl.pressure;
    if (p == 0) continue;
    for (const Quad& q : pl.faces) visit(p, q, FaceNodes{x.col(q[0]), x.col(q[1]), x.col(q[2]), x.col(q[3])});
  }
}

}  // namespace

void MassSpringSystem::add_loads(const Eigen::Matrix3Xd& x, double s, Eigen::Matrix3Xd& f) const {
  if (s == 0) return;
  if (!m_boundary.loads.gravity.isZero()) {
    const Eigen::Vector3d g = s * m_boundary.loads.gravity;
    parallel_for(x.cols(), [&](std::int64_t n) { f.col(n) += m_mass[n] * g; });
  }
  for (const NodalLoad& l : m_boundary.loads.nodal)
    for (std::int32_t n : l.nodes) f.col(n) += s * l.force;
  // Follower pressure: f_i = -p int N_i (x_xi x x_eta) dxi deta, exact with 2x2 Gauss points
  // (the integrand is bi-quadratic). Serial over faces: the boundary is small and shares nodes.
  for_each_pressed_face(m_boundary.loads, x, s, [&](double p, const Quad& q, const FaceNodes& xq) {
    Eigen::Vector3d fq[4] = {Eigen::Vector3d::Zero(), Eigen::Vector3d::Zero(), Eigen::Vector3d::Zero(),
                             Eigen::Vector3d::Zero()};
    for (double xi : kGauss)
      for (double eta : kGauss) {
        const auto [dxi, deta] = quad_tangents(xq, xi, eta);
        const Eigen::Vector3d nda = 0.25 * dxi.cross(deta);
        const double N[4] = {(1 - xi) * (1 - eta), xi * (1 - eta), xi * eta, (1 - xi) * eta};
        for (int i = 0; i < 4; ++i) fq[i] -= p * N[i] * nda;
      }
    for (int i = 0; i < 4; ++i) f.col(q[i]) += fq[i];
  });
  for (const LidPressureLoad& lid : m_boundary.loads.lids) detail::add_lid_forces(lid, x, s * lid.pressure, f);
}

using detail::cross_matrix;

void MassSpringSystem::add_boundary_stiffness(const Eigen::Matrix3Xd& x, double s, const BlockAdder& add) const {
  for (const ElasticFoundation& fd : m_boundary.foundations) {
    if (fd.stiffness == 0) continue;
    for (const Quad& q : fd.faces) {
      const auto [N, kA] = foundation_share(fd, q);
      if (kA == 0) continue;
      const Eigen::Matrix3d k = kA * fd.projection(N);
      for (std::int32_t n : q) add(n, n, k);
    }
  }
  // Follower pressure (add_loads): f_a = -p sum_gauss N_a n, n = (x_xi x x_eta) / 4, so
  // d f_a / d x_b = -p sum N_a (c_b (-[x_eta]x) + d_b [x_xi]x) / 4 with c_b = dx_xi/dx_b, d_b = dx_eta/dx_b.
  for_each_pressed_face(m_boundary.loads, x, s, [&](double p, const Quad& q, const FaceNodes& xq) {
    Eigen::Matrix3d K[4][4];
    for (auto& row : K)
      for (auto& k : row) k.setZero();
    for (double xi : kGauss)
      for (double eta : kGauss) {
        const auto [dxi, deta] = quad_tangents(xq, xi, eta);
        const double N[4] = {(1 - xi) * (1 - eta), xi * (1 - eta), xi * eta, (1 - xi) * eta};
        const double c[4] = {-(1 - eta), 1 - eta, eta, -eta};
        const double d[4] = {-(1 - xi), -xi, xi, 1 - xi};
        const Eigen::Matrix3d A = cross_matrix(deta), B = cross_matrix(dxi);
        for (int b = 0; b < 4; ++b) {
          const Eigen::Matrix3d dn = 0.25 * (-c[b] * A + d[b] * B);
          for (int a = 0; a < 4; ++a) K[a][b] += p * N[a] * dn;  // -df_a/dx_b = p N_a dn/dx_b
        }
      }
    for (int a = 0; a < 4; ++a)
      for (int b = 0; b < 4; ++b) add(q[a], q[b], K[a][b]);
  });
  for (const LidPressureLoad& lid : m_boundary.loads.lids) detail::add_lid_stiffness(lid, x, s * lid.pressure, add);
}

void MassSpringSystem::project(Eigen::Matrix3Xd& x, Eigen::Matrix3Xd& v, double s, double s_dot) const {
  for (const DofConstraint& c : m_boundary.constraints)
    for (std::int32_t n : c.nodes) {
      const Eigen::Vector3d X = m_rest.col(n);
      const Eigen::Vector3d u = c.M * X + c.b;
      for (int i = 0; i < 3; ++i)
        if (c.mask >> i & 1u) {
          x(i, n) = X[i] + s * u[i];
          v(i, n) = s_dot * u[i];
        }
    }
}

}  // namespace cardio::mechanics
