#include "cardio/mechanics/bourguignon_cani.hpp"

#include <Eigen/Dense>
#include <cmath>
#include <limits>

#include "cardio/core/error.hpp"
#include "cardio/core/parallel.hpp"
#include "element_axes.hpp"
#include "hourglass.hpp"

namespace cardio::mechanics {
namespace {

using V3 = Eigen::Vector3d;

// Point on face `face` of hexahedron X at bilinear coords (zeta, eta) (B&C 2000, sec. 4).
V3 face_point(const NodeMatrix& X, int face, double zeta, double eta) {
  const auto& F = kHexFaces[face];
  return zeta * eta * X.col(F[0]) + (1 - zeta) * eta * X.col(F[1]) + (1 - zeta) * (1 - eta) * X.col(F[2]) +
         zeta * (1 - eta) * X.col(F[3]);
}

// Intersect the ray c + t d (t > 0) with the bilinear face: Newton on (zeta, eta, t).
bool intersect_face(const NodeMatrix& X, int face, const V3& c, const V3& d, AxisEndpoint& out, double& t_out) {
  const auto& F = kHexFaces[face];
  const V3 A = X.col(F[0]), B = X.col(F[1]), C = X.col(F[2]), D = X.col(F[3]);
  double z = 0.5, e = 0.5;
  double t = (0.25 * (A + B + C + D) - c).dot(d);
  const double size = (A - C).norm() + (B - D).norm();
  for (int it = 0; it < 50; ++it) {
    const V3 r = face_point(X, face, z, e) - (c + t * d);
    Eigen::Matrix3d J;
    J << e * (A - B) + (1 - e) * (D - C), z * A + (1 - z) * B - (1 - z) * C - z * D, -d;
    const double det = J.determinant();
    if (!(std::abs(det) > 1e-14 * size * size)) return false;  // ray parallel to the face
    const V3 step = J.inverse() * r;
    z -= step[0];
    e -= step[1];
    t -= step[2];
    // Planar faces converge in one or two iterations, warped ones in a few.
    if (std::abs(step[0]) + std::abs(step[1]) < 1e-13 * (1 + std::abs(z) + std::abs(e)) &&
        std::abs(step[2]) < 1e-13 * (size + std::abs(t)))
      break;
  }
  const double tol = 1e-9;
  if (!(z >= -tol && z <= 1 + tol && e >= -tol && e <= 1 + tol && t > 0)) return false;
  out.face = face;
  out.zeta = std::clamp(z, 0.0, 1.0);
  out.eta = std::clamp(e, 0.0, 1.0);
  t_out = t;
  return true;
}

// Axial law (B&C 2000 sec. 6 outlook; docs/calibration.md sec. 3): returns the energy density psi(lambda) [kPa] and P =
// dpsi/dlambda.
inline double axial_law(const AxisLaw& law, double lambda, double& P) {
  if (law.kind == AxisLaw::Kind::linear) {
    P = law.modulus * (lambda - 1);
    return 0.5 * law.modulus * (lambda - 1) * (lambda - 1);
  }
  // Guccione-type: W = C/2 (exp(b E^2) - 1), E = (lambda^2 - 1)/2, C = d / b; P = lambda C b E exp(b E^2).
  const double E = 0.5 * (lambda * lambda - 1);
  const double C = law.modulus / law.b;
  const double ex = std::exp(law.b * E * E);
  P = lambda * C * law.b * E * ex;
  return 0.5 * C * (ex - 1);
}

constexpr int kPairs[3][2] = {{0, 1}, {0, 2}, {1, 2}};

using detail::element_axes;

}  // namespace

BCRestGeometry bc_rest_geometry(const NodeMatrix& X, const Eigen::Matrix3d& frame) {
  const V3 c = X.rowwise().mean();
  BCRestGeometry g;
  for (int a = 0; a < 3; ++a) {
    const V3 dir = frame.col(a).normalized();
    V3 ends[2];
    for (int side = 0; side < 2; ++side) {
      const V3 d = side == 0 ? dir : V3(-dir);
      double best_t = std::numeric_limits<double>::infinity();
      AxisEndpoint best;
      for (int face = 0; face < 6; ++face) {
        AxisEndpoint ep;
        double t = 0;
        if (intersect_face(X, face, c, d, ep, t) && t < best_t) best_t = t, best = ep;
      }
      CARDIO_CHECK(std::isfinite(best_t), "axis " << a
                                                  << " of a hexahedron does not meet its boundary "
                                                     "(degenerate or inverted element)");
      g.ends[2 * a + side] = best;
      ends[side] = face_point(X, best.face, best.zeta, best.eta);
    }
    g.L.col(a) = ends[0] - ends[1];
  }
  return g;
}

BCElementData bc_element_data(const NodeMatrix& X, const Eigen::Matrix3d& frame) {
  const double size = (X.col(6) - X.col(0)).norm();
  CARDIO_CHECK(detail::hourglass_defect(X) < 1e-9, "element is not a parallelepiped (hourglass defect "
                                                       << detail::hourglass_defect(X)
                                                       << "); the hourglass control supports voxel-like elements");
  CARDIO_CHECK((frame.transpose() * frame - Eigen::Matrix3d::Identity()).norm() < 1e-9 && frame.determinant() > 0,
               "element frame [f s n] is not orthonormal and right-handed");
  const BCRestGeometry g = bc_rest_geometry(X, frame);
  BCElementData d;
  d.W.setZero();
  for (int a = 0; a < 3; ++a)
    for (int side = 0; side < 2; ++side) {
      const AxisEndpoint& ep = g.ends[2 * a + side];
      const auto w = ep.weights();
      for (int k = 0; k < 4; ++k) d.W(a, kHexFaces[ep.face][k]) += side == 0 ? w[k] : -w[k];
    }
  for (int a = 0; a < 3; ++a) {
    const double r = g.L.col(a).norm();
    CARDIO_CHECK(r > 1e-9 * size, "axis " << a << " of an element has zero length");
    d.inv_rest_length[a] = 1 / r;  // stored inverted: the kernel only divides by it
  }
  d.volume = hex_volume(X);
  CARDIO_CHECK(d.volume > 0, "element has non-positive rest volume " << d.volume << " mm^3");
  d.size = std::cbrt(d.volume);
  return d;
}

Eigen::Matrix3d bc_deformation_gradient(const BCElementData& d, const Eigen::Matrix3d& frame, const NodeMatrix& x) {
  const Eigen::Matrix3d A = element_axes(d.W, x);
  const Eigen::Vector3d inv_r(d.inv_rest_length[0], d.inv_rest_length[1], d.inv_rest_length[2]);
  return A * inv_r.asDiagonal() * frame.transpose();
}

double bc_element_forces(const BCElementData& d, const BCModuli& m, const NodeMatrix& x, const NodeMatrix* v,
                         const NodeMatrix& X, NodeMatrix& f) {
  const double V0 = d.volume;
  const Eigen::Matrix3d A = element_axes(d.W, x);  // current axis vectors l_f, l_s, l_n
  Eigen::Matrix3d g = Eigen::Matrix3d::Zero();     // g.col(a): force on the "+" point of axis a
  const bool damped = v != nullptr && m.damping_time > 0;
  double W = 0;
  // Divisions are the expensive operations here: three reciprocals, the rest are stored.
  const V3 len(A.col(0).norm(), A.col(1).norm(), A.col(2).norm());
  const V3 inv_len = len.cwiseInverse();
  const V3 inv_r(d.inv_rest_length[0], d.inv_rest_length[1], d.inv_rest_length[2]);

  // Axial damped springs (B&C 2000, sec. 2.2) with the per-axis law: force = A_a P, A_a = V0/r_a.
  Eigen::Matrix3d Adot;
  if (damped) Adot = element_axes(d.W, *v);
  for (int a = 0; a < 3; ++a) {
    double P = 0;
    W += V0 * axial_law(m.axial[a], len[a] * inv_r[a], P);
    double mag = V0 * inv_r[a] * P;
    // kd = tau k_a with the small-strain axial stiffness k_a = V0 d_a / r_a^2.
    if (damped)
      mag += m.damping_time * V0 * m.axial[a].modulus * inv_r[a] * inv_r[a] * Adot.col(a).dot(A.col(a)) * inv_len[a];
    g.col(a) -= mag * inv_len[a] * A.col(a);
  }

  // Angular springs between axis pairs (B&C 2000, sec. 2.2), as the exact gradient of
  // K/2 cos^2 with K = G_ab V0 (the rest axes are orthogonal; docs/calibration.md says why not
  // the paper's approximate force).
  for (int p = 0; p < 3; ++p) {
    const int a = kPairs[p][0], b = kPairs[p][1];
    const double inv_ab = inv_len[a] * inv_len[b];
    const double cs = A.col(a).dot(A.col(b)) * inv_ab;
    const double K = m.shear[p] * V0;
    W += 0.5 * K * cs * cs;
    const double kc = K * cs;
    g.col(a) -= kc * (inv_ab * A.col(b) - cs * inv_len[a] * inv_len[a] * A.col(a));
    g.col(b) -= kc * (inv_ab * A.col(a) - cs * inv_len[b] * inv_len[b] * A.col(b));
  }

  // Volume term kappa V0/2 (J - 1)^2, J = det F = det A / (r_f r_s r_n); d det A / d l_a = cofactor.
  if (m.bulk_jacobian != 0) {
    const double inv_detL = inv_r[0] * inv_r[1] * inv_r[2];
    const V3 c0 = A.col(1).cross(A.col(2)), c1 = A.col(2).cross(A.col(0)), c2 = A.col(0).cross(A.col(1));
    const double J = A.col(0).dot(c0) * inv_detL;
    detail::add_volume_penalty(V0, m.bulk_jacobian, J, inv_detL, c0, c1, c2, W, g);
  }

  detail::scatter_axis_forces(d.W, g, f);

  const double h = d.size;
  // Hourglass control (hourglass.hpp): k = g h / 6 matches the bending energy of a cube.
  if (m.hourglass > 0) W += detail::hourglass_forces(m.hourglass * h / 6.0, x, f);

  // The paper's radial volume springs (B&C 2000, sec. 4.1): vertex j to barycentre, damped;
  // the reaction on the barycentre goes back to the 8 vertices, 1/8 each.
  if (m.radial > 0) {
    const double kv = 1.5 * m.radial * h;
    const V3 xc = x.rowwise().mean(), Xc = X.rowwise().mean();
    const V3 vc = damped ? V3(v->rowwise().mean()) : V3::Zero();
    V3 reaction = V3::Zero();
    for (int j = 0; j < 8; ++j) {
      const V3 l = x.col(j) - xc;
      const double ln = l.norm(), rest = (X.col(j) - Xc).norm();
      W += 0.5 * kv * (ln - rest) * (ln - rest);
      double mag = kv * (ln - rest);
      if (damped) mag += m.damping_time * kv * (v->col(j) - vc).dot(l) / ln;
      const V3 fj = -mag / ln * l;
      f.col(j) += fj;
      reaction -= fj;
    }
    f.colwise() += reaction / 8.0;
  }
  return W;
}

BourguignonCaniForces::BourguignonCaniForces(const HexMesh& mesh, std::vector<BCModuli> materials)
    : m_hexes(mesh.hexes), m_material(mesh.material), m_moduli(std::move(materials)) {
  m_data.resize(m_hexes.size());
  bool radial = false;
  for (const BCModuli& m : m_moduli) radial = radial || m.radial > 0;
  if (radial) m_rest = mesh.rest;  // only the radial springs read rest positions at run time
  for (std::size_t e = 0; e < m_hexes.size(); ++e)
    CARDIO_CHECK(m_material[e] < m_moduli.size(), "element " << e << " has material " << m_material[e] << " but only "
                                                             << m_moduli.size() << " are defined");
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

void BourguignonCaniForces::do_add_forces(const Eigen::Matrix3Xd& x, const Eigen::Matrix3Xd& v, const ForceInputs&,
                                          Eigen::Matrix3Xd& f) const {
  const bool with_v = v.cols() == x.cols() && max_damping_time() > 0;  // no gathers when undamped
  const bool with_rest = m_rest.cols() > 0;
  // The schedule makes the scatter race-free and its summation order thread-count independent.
  for_each_element(m_schedule, [&](std::int32_t e) {
    const Hex& hx = m_hexes[e];
    const NodeMatrix xe = gather(x, hx);
    NodeMatrix ve, Xe, fe = NodeMatrix::Zero();
    if (with_v) ve = gather(v, hx);
    if (with_rest) Xe = gather(m_rest, hx);
    bc_element_forces(m_data[e], m_moduli[m_material[e]], xe, with_v ? &ve : nullptr, Xe, fe);
    for (int i = 0; i < 8; ++i) f.col(hx[i]) += fe.col(i);
  });
}

double BourguignonCaniForces::do_energy(const Eigen::Matrix3Xd& x, const ForceInputs&) const {
  const bool with_rest = m_rest.cols() > 0;
  return deterministic_sum(static_cast<std::int64_t>(m_hexes.size()), [&](std::int64_t e) {
    const Hex& hx = m_hexes[e];
    NodeMatrix Xe, fe = NodeMatrix::Zero();
    if (with_rest) Xe = gather(m_rest, hx);
    return bc_element_forces(m_data[e], m_moduli[m_material[e]], gather(x, hx), nullptr, Xe, fe);
  });
}

double BourguignonCaniForces::max_damping_time() const {
  double t = 0;
  for (const auto& m : m_moduli) t = std::max(t, m.damping_time);
  return t;
}

std::size_t BourguignonCaniForces::bytes() const {
  return m_hexes.size() * (sizeof(Hex) + sizeof(BCElementData) + sizeof(std::uint16_t)) +
         static_cast<std::size_t>(m_rest.size()) * sizeof(double);
}

}  // namespace cardio::mechanics
