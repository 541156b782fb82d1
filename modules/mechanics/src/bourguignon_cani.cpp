#include "cardio/mechanics/bourguignon_cani.hpp"

#include <Eigen/Dense>
#include <cmath>

#include "cardio/core/error.hpp"
#include "cardio/core/parallel.hpp"
#include "hourglass.hpp"

namespace cardio::mechanics {
namespace {

using V3 = Eigen::Vector3d;
using Nodes = std::array<V3, 8>;

// Point on face `face` of hexahedron X at bilinear coords (zeta, eta) (B&C 2000, sec. 4).
V3 face_point(const Nodes& X, int face, double zeta, double eta) {
  const auto& F = kHexFaces[face];
  return zeta * eta * X[F[0]] + (1 - zeta) * eta * X[F[1]] + (1 - zeta) * (1 - eta) * X[F[2]] +
         zeta * (1 - eta) * X[F[3]];
}

// Intersect the ray c + t d (t > 0) with the bilinear face: Newton on (zeta, eta, t).
bool intersect_face(const Nodes& X, int face, const V3& c, const V3& d, AxisEndpoint& out, double& t_out) {
  const auto& F = kHexFaces[face];
  double z = 0.5, e = 0.5;
  double t = (0.25 * (X[F[0]] + X[F[1]] + X[F[2]] + X[F[3]]) - c).dot(d);
  for (int it = 0; it < 50; ++it) {
    const V3 p = face_point(X, face, z, e);
    const V3 r = p - (c + t * d);
    const V3 dz = e * X[F[0]] - e * X[F[1]] - (1 - e) * X[F[2]] + (1 - e) * X[F[3]];
    const V3 de = z * X[F[0]] + (1 - z) * X[F[1]] - (1 - z) * X[F[2]] - z * X[F[3]];
    Eigen::Matrix3d J;
    J << dz, de, -d;
    if (std::abs(J.determinant()) < 1e-300) return false;
    const V3 step = J.colPivHouseholderQr().solve(r);
    z -= step[0];
    e -= step[1];
    t -= step[2];
    if (step.norm() < 1e-15 * (1 + std::abs(t))) break;
  }
  const double tol = 1e-9;
  if (!(z >= -tol && z <= 1 + tol && e >= -tol && e <= 1 + tol && t > 0)) return false;
  out.face = face;
  out.zeta = std::clamp(z, 0.0, 1.0);
  out.eta = std::clamp(e, 0.0, 1.0);
  t_out = t;
  return true;
}

// x_{P+} - x_{P-} of axis a with the weights of the rest geometry.
inline V3 axis_vector(const BCElementData& d, int a, const Nodes& x) {
  V3 l = V3::Zero();
  for (int side = 0; side < 2; ++side) {
    const int k = 2 * a + side;
    const double z = d.zeta_eta[2 * k], e = d.zeta_eta[2 * k + 1];
    const auto& F = kHexFaces[d.face[k]];
    const V3 p = z * e * x[F[0]] + (1 - z) * e * x[F[1]] + (1 - z) * (1 - e) * x[F[2]] + z * (1 - e) * x[F[3]];
    l += side == 0 ? p : V3(-p);
  }
  return l;
}

// Split the axis forces g_a (force on P+, -g_a on P-) onto the nodes with the rest weights.
inline void scatter_axes(const BCElementData& d, const Eigen::Matrix3d& g, Nodes& f) {
  for (int a = 0; a < 3; ++a)
    for (int side = 0; side < 2; ++side) {
      const int k = 2 * a + side;
      const double z = d.zeta_eta[2 * k], e = d.zeta_eta[2 * k + 1];
      const auto& F = kHexFaces[d.face[k]];
      const V3 ga = side == 0 ? V3(g.col(a)) : V3(-g.col(a));
      f[F[0]] += z * e * ga;
      f[F[1]] += (1 - z) * e * ga;
      f[F[2]] += (1 - z) * (1 - e) * ga;
      f[F[3]] += z * (1 - e) * ga;
    }
}

// Axial law (DESIGN.md): returns the energy density psi(lambda) [kPa] and P = dpsi/dlambda.
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

}  // namespace

BCRestGeometry bc_rest_geometry(const Nodes& X, const Eigen::Matrix3d& frame) {
  V3 c = V3::Zero();
  for (const V3& p : X) c += p / 8.0;
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
      CARDIO_CHECK(std::isfinite(best_t), "axis " << a << " of a hexahedron does not meet its boundary "
                                                  "(degenerate or inverted element)");
      g.ends[2 * a + side] = best;
      ends[side] = face_point(X, best.face, best.zeta, best.eta);
    }
    g.L.col(a) = ends[0] - ends[1];
  }
  return g;
}

BCElementData bc_element_data(const Nodes& X, const Eigen::Matrix3d& frame) {
  const BCRestGeometry g = bc_rest_geometry(X, frame);
  BCElementData d;
  for (int k = 0; k < 6; ++k) {
    d.face[k] = static_cast<std::uint8_t>(g.ends[k].face);
    d.zeta_eta[2 * k] = g.ends[k].zeta;
    d.zeta_eta[2 * k + 1] = g.ends[k].eta;
  }
  const double detL = g.L.determinant();
  CARDIO_CHECK(std::abs(detL) > 1e-12 * std::pow(g.L.norm(), 3), "axes of an element are degenerate");
  d.L_inv = g.L.inverse();
  for (int a = 0; a < 3; ++a) d.rest_length[a] = g.L.col(a).norm();
  for (int p = 0; p < 3; ++p) {
    const V3 la = g.L.col(kPairs[p][0]), lb = g.L.col(kPairs[p][1]);
    d.rest_cos[p] = la.dot(lb) / (la.norm() * lb.norm());
  }
  // Exact trilinear volume via the divergence theorem over the 6 faces.
  double six_v = 0;
  for (const auto& F : kHexFaces) {
    const V3 &a = X[F[0]], &b = X[F[1]], &cc = X[F[2]], &dd = X[F[3]];
    six_v += 0.5 * (a.dot(b.cross(cc)) + a.dot(cc.cross(dd)) + a.dot(b.cross(dd)) + b.dot(cc.cross(dd)));
  }
  d.volume = six_v / 6.0;
  CARDIO_CHECK(d.volume > 0, "element has non-positive rest volume " << d.volume << " mm^3");
  return d;
}

Eigen::Matrix3d bc_deformation_gradient(const BCElementData& d, const Nodes& x) {
  Eigen::Matrix3d A;
  for (int a = 0; a < 3; ++a) A.col(a) = axis_vector(d, a, x);
  return A * d.L_inv;
}

double bc_element_forces(const BCElementData& d, const BCModuli& m, const Nodes& x, const Nodes* v,
                         const Nodes& X, Nodes* f) {
  const double V0 = d.volume;
  Eigen::Matrix3d A, Adot, g = Eigen::Matrix3d::Zero();
  for (int a = 0; a < 3; ++a) A.col(a) = axis_vector(d, a, x);
  const bool damped = v != nullptr && m.damping_time > 0;
  if (damped)
    for (int a = 0; a < 3; ++a) Adot.col(a) = axis_vector(d, a, *v);
  double W = 0;
  std::array<double, 3> len;
  for (int a = 0; a < 3; ++a) len[a] = A.col(a).norm();

  // Axial damped springs (B&C 2000, sec. 2.2) with the per-axis law: force = A_a P, A_a = V0/r_a.
  for (int a = 0; a < 3; ++a) {
    const double r = d.rest_length[a];
    double P = 0;
    W += V0 * axial_law(m.axial[a], len[a] / r, P);
    double mag = V0 / r * P;
    if (damped) mag += m.damping_time * (V0 * m.axial[a].modulus / (r * r)) * Adot.col(a).dot(A.col(a)) / len[a];
    g.col(a) -= mag / len[a] * A.col(a);
  }

  // Angular springs between axis pairs (B&C 2000, sec. 2.2), as the exact gradient of
  // K/2 (cos - c)^2 with K = G_ab V0 (docs/calibration.md: why not the paper's approximation).
  for (int p = 0; p < 3; ++p) {
    const int a = kPairs[p][0], b = kPairs[p][1];
    const double cs = A.col(a).dot(A.col(b)) / (len[a] * len[b]);
    const double e = cs - d.rest_cos[p];
    const double K = m.shear[p] * V0;
    W += 0.5 * K * e * e;
    g.col(a) -= K * e * (A.col(b) / (len[a] * len[b]) - cs * A.col(a) / (len[a] * len[a]));
    g.col(b) -= K * e * (A.col(a) / (len[a] * len[b]) - cs * A.col(b) / (len[b] * len[b]));
  }

  // Volume term kappa V0/2 (J - 1)^2 with J = det F = det A / det L; d det A / d l_a = cofactor.
  if (m.bulk_jacobian != 0) {
    const double det_L_inv = d.L_inv.determinant();
    const double J = A.determinant() * det_L_inv;
    W += 0.5 * V0 * m.bulk_jacobian * (J - 1) * (J - 1);
    const double s = V0 * m.bulk_jacobian * (J - 1) * det_L_inv;
    g.col(0) -= s * A.col(1).cross(A.col(2));
    g.col(1) -= s * A.col(2).cross(A.col(0));
    g.col(2) -= s * A.col(0).cross(A.col(1));
  }

  Nodes& out = *f;
  const double h = std::cbrt(V0);
  // Hourglass control (hourglass.hpp): k = g h / 6 matches the bending energy of a cube.
  if (m.hourglass > 0) W += detail::hourglass_forces(m.hourglass * h / 6.0, A, d.L_inv, x, X, out, g);

  scatter_axes(d, g, out);

  // The paper's radial volume springs (B&C 2000, sec. 4.1): vertex j to barycentre, damped;
  // the reaction on the barycentre goes back to the 8 vertices, 1/8 each.
  if (m.radial > 0) {
    const double kv = 1.5 * m.radial * h;
    V3 xc = V3::Zero(), Xc = V3::Zero();
    for (int i = 0; i < 8; ++i) xc += x[i] / 8.0, Xc += X[i] / 8.0;
    V3 vc = V3::Zero();
    if (damped)
      for (int i = 0; i < 8; ++i) vc += (*v)[i] / 8.0;
    V3 reaction = V3::Zero();
    for (int j = 0; j < 8; ++j) {
      const V3 l = x[j] - xc;
      const double ln = l.norm(), rest = (X[j] - Xc).norm();
      W += 0.5 * kv * (ln - rest) * (ln - rest);
      double mag = kv * (ln - rest);
      if (damped) mag += m.damping_time * kv * ((*v)[j] - vc).dot(l) / ln;
      const V3 fj = -mag / ln * l;
      out[j] += fj;
      reaction -= fj;
    }
    for (int j = 0; j < 8; ++j) out[j] += reaction / 8.0;
  }
  return W;
}

BourguignonCaniForces::BourguignonCaniForces(const HexMesh& mesh, std::vector<BCModuli> materials)
    : m_hexes(mesh.hexes), m_rest(mesh.rest), m_material(mesh.material), m_moduli(std::move(materials)) {
  m_data.resize(m_hexes.size());
  for (std::size_t e = 0; e < m_hexes.size(); ++e)
    CARDIO_CHECK(m_material[e] < m_moduli.size(), "element " << e << " has material " << m_material[e]
                                                             << " but only " << m_moduli.size() << " are defined");
  std::vector<std::string> errors(m_hexes.size());
  parallel_for(static_cast<std::int64_t>(m_hexes.size()), [&](std::int64_t e) {
    Nodes X;
    for (int i = 0; i < 8; ++i) X[i] = m_rest.col(m_hexes[e][i]);
    Eigen::Matrix3d frame;
    frame << mesh.fibre.col(e), mesh.sheet.col(e), mesh.normal(e);
    try {
      m_data[e] = bc_element_data(X, frame);
    } catch (const std::exception& ex) {
      errors[e] = ex.what();
    }
  });
  for (std::size_t e = 0; e < errors.size(); ++e)
    if (!errors[e].empty()) CARDIO_FAIL("element " << e << ": " << errors[e]);
  m_colours = colour_elements(mesh);
}

void BourguignonCaniForces::add_forces(const Eigen::Matrix3Xd& x, const Eigen::Matrix3Xd& v, Eigen::Matrix3Xd& f) const {
  const bool with_v = v.cols() == x.cols();
  // Colour by colour: elements of one colour share no node, so the scatter is race-free and
  // each node receives its contributions in the same order for any thread count.
  for (const auto& colour : m_colours) {
    parallel_for(static_cast<std::int64_t>(colour.size()), [&](std::int64_t k) {
      const std::int32_t e = colour[k];
      const Hex& hx = m_hexes[e];
      Nodes xe, ve, Xe, fe;
      for (int i = 0; i < 8; ++i) {
        xe[i] = x.col(hx[i]);
        Xe[i] = m_rest.col(hx[i]);
        fe[i].setZero();
        if (with_v) ve[i] = v.col(hx[i]);
      }
      bc_element_forces(m_data[e], m_moduli[m_material[e]], xe, with_v ? &ve : nullptr, Xe, &fe);
      for (int i = 0; i < 8; ++i) f.col(hx[i]) += fe[i];
    });
  }
}

double BourguignonCaniForces::energy(const Eigen::Matrix3Xd& x) const {
  return deterministic_sum(static_cast<std::int64_t>(m_hexes.size()), [&](std::int64_t e) {
    const Hex& hx = m_hexes[e];
    Nodes xe, Xe, fe;
    for (int i = 0; i < 8; ++i) xe[i] = x.col(hx[i]), Xe[i] = m_rest.col(hx[i]), fe[i].setZero();
    return bc_element_forces(m_data[e], m_moduli[m_material[e]], xe, nullptr, Xe, &fe);
  });
}

double BourguignonCaniForces::max_damping_time() const {
  double t = 0;
  for (const auto& m : m_moduli) t = std::max(t, m.damping_time);
  return t;
}

std::size_t BourguignonCaniForces::bytes() const {
  std::size_t colours = 0;
  for (const auto& c : m_colours) colours += c.size() * sizeof(std::int32_t);
  return m_hexes.size() * (sizeof(Hex) + sizeof(BCElementData) + sizeof(std::uint16_t)) + colours +
         static_cast<std::size_t>(m_rest.size()) * sizeof(double);
}

}  // namespace cardio::mechanics
