#include "cardio/mechanics/baudet_cube.hpp"

#include <cmath>

#include "cardio/core/error.hpp"
#include "cardio/core/parallel.hpp"
#include "hourglass.hpp"

namespace cardio::mechanics {
namespace {

using V3 = Eigen::Vector3d;

// 12 edges then the 4 inner diagonals (configuration M2) of a VTK hexahedron.
constexpr int kEdges[12][2] = {{0, 1}, {3, 2}, {4, 5}, {7, 6}, {0, 3}, {1, 2},
                               {4, 7}, {5, 6}, {0, 4}, {1, 5}, {2, 6}, {3, 7}};
constexpr int kDiagonals[4][2] = {{0, 6}, {1, 7}, {2, 4}, {3, 5}};

// Damped linear spring between nodes i and j; returns its energy.
inline double spring(double k, double tau, int i, int j, const NodeMatrix& x, const NodeMatrix* v, const NodeMatrix& X,
                     NodeMatrix& f) {
  const V3 l = x.col(i) - x.col(j);
  const double len = l.norm(), rest = (X.col(i) - X.col(j)).norm();
  double mag = k * (len - rest);
  if (v && tau > 0) mag += tau * k * (v->col(i) - v->col(j)).dot(l) / len;
  const V3 fi = -mag / len * l;
  f.col(i) += fi;
  f.col(j) -= fi;
  return 0.5 * k * (len - rest) * (len - rest);
}

}  // namespace

double baudet_element_forces(const BaudetConstants& c, const NodeMatrix& x, const NodeMatrix* v, const NodeMatrix& X,
                             NodeMatrix& f, bool corrective) {
  NodeMatrix fs = NodeMatrix::Zero();
  double W = 0;
  for (const auto& e : kEdges) W += spring(c.k_edge, c.damping_time, e[0], e[1], x, v, X, fs);
  for (const auto& e : kDiagonals) W += spring(c.k_diag, c.damping_time, e[0], e[1], x, v, X, fs);

  if (corrective && c.gamma != 0) {
    // Orthogonal corrective forces (Baudet et al. 2007, eq. 9). Per axis i the springs carry the
    // normal force S_i across the cube (e_i joins the centroids of the two i-faces, so the
    // corrective pair has no torque). The corrected total T = (S + gamma/(1 - 2 gamma) sum(S) 1)
    // / (1 + gamma) makes the cube isotropic with the requested nu; T_i - S_i is applied as an
    // inward pull on the two i-faces (docs/calibration.md derives this and its link with eq. 9).
    V3 e[3];
    double S[3];
    for (int a = 0; a < 3; ++a) {
      const auto& lo = kHexFaces[2 * a];
      const auto& hi = kHexFaces[2 * a + 1];
      V3 clo = V3::Zero(), chi = V3::Zero();
      for (int k = 0; k < 4; ++k) clo += x.col(lo[k]) / 4.0, chi += x.col(hi[k]) / 4.0;
      e[a] = (chi - clo).normalized();
      double s = 0;
      for (int k = 0; k < 4; ++k) s += -fs.col(hi[k]).dot(e[a]) + fs.col(lo[k]).dot(e[a]);
      S[a] = 0.5 * s;
    }
    const double sum = S[0] + S[1] + S[2];
    const double g = c.gamma;
    for (int a = 0; a < 3; ++a) {
      const double T = (S[a] + g / (1 - 2 * g) * sum) / (1 + g);
      const V3 pull = (T - S[a]) / 4.0 * e[a];
      const auto& lo = kHexFaces[2 * a];
      const auto& hi = kHexFaces[2 * a + 1];
      for (int k = 0; k < 4; ++k) fs.col(hi[k]) -= pull, fs.col(lo[k]) += pull;
    }
  }
  // Hourglass control (hourglass.hpp): the M2 spring set leaves zero-energy modes on free blocks.
  if (c.hourglass > 0) W += detail::hourglass_forces(c.hourglass, x, fs);
  f += fs;
  return W;
}

BaudetCubeForces::BaudetCubeForces(const HexMesh& mesh, std::vector<BaudetConstants> constants, bool corrective)
    : m_hexes(mesh.hexes),
      m_rest(mesh.rest),
      m_material(mesh.material),
      m_constants(std::move(constants)),
      m_corrective(corrective) {
  for (std::size_t e = 0; e < m_hexes.size(); ++e) {
    CARDIO_CHECK(m_material[e] < m_constants.size(),
                 "element " << e << " has material " << m_material[e] << " without Baudet constants");
    // Eqs. 7-8 hold for cubes only (Baudet et al. 2007, sec. 4): equal edges, right angles.
    const NodeMatrix X = gather(m_rest, m_hexes[e]);
    const double h = (X.col(1) - X.col(0)).norm();
    bool cube = detail::hourglass_defect(X) < 1e-9;
    for (const auto& edge : kEdges) cube = cube && std::abs((X.col(edge[0]) - X.col(edge[1])).norm() - h) < 1e-9 * h;
    for (const auto& diag : kDiagonals)
      cube = cube && std::abs((X.col(diag[0]) - X.col(diag[1])).norm() - std::sqrt(3.0) * h) < 1e-9 * h;
    CARDIO_CHECK(cube, "element " << e << " is not a cube; Baudet's spring constants hold for cubes only");
  }
  m_schedule = schedule_elements(mesh);
}

void BaudetCubeForces::do_add_forces(const Eigen::Matrix3Xd& x, const Eigen::Matrix3Xd& v, const ForceInputs&,
                                     Eigen::Matrix3Xd& f) const {
  const bool with_v = v.cols() == x.cols() && max_damping_time() > 0;  // no gathers when undamped
  for_each_element(m_schedule, [&](std::int32_t e) {
    const Hex& hx = m_hexes[e];
    NodeMatrix ve, fe = NodeMatrix::Zero();
    if (with_v) ve = gather(v, hx);
    baudet_element_forces(m_constants[m_material[e]], gather(x, hx), with_v ? &ve : nullptr, gather(m_rest, hx), fe,
                          m_corrective);
    for (int i = 0; i < 8; ++i) f.col(hx[i]) += fe.col(i);
  });
}

double BaudetCubeForces::do_energy(const Eigen::Matrix3Xd& x, const ForceInputs&) const {
  return deterministic_sum(static_cast<std::int64_t>(m_hexes.size()), [&](std::int64_t e) {
    const Hex& hx = m_hexes[e];
    NodeMatrix fe = NodeMatrix::Zero();
    return baudet_element_forces(m_constants[m_material[e]], gather(x, hx), nullptr, gather(m_rest, hx), fe, false);
  });
}

double BaudetCubeForces::max_damping_time() const {
  double t = 0;
  for (const auto& c : m_constants) t = std::max(t, c.damping_time);
  return t;
}

}  // namespace cardio::mechanics
