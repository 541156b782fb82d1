#include "cardio/analysis/strain.hpp"

#include <Eigen/Eigenvalues>
#include <Eigen/LU>
#include <algorithm>
#include <cmath>
#include <vector>

#include "cardio/core/error.hpp"
#include "cardio/core/parallel.hpp"

namespace cardio::analysis {
namespace {

using mechanics::HexMesh;
using mechanics::NodeMatrix;

/// dN_i/d(xi, eta, zeta) at the centre: the VTK nodes' natural coordinates / 8 (8 x 3).
Eigen::Matrix<double, 8, 3> centre_shape_derivatives() {
  Eigen::Matrix<double, 8, 3> d;
  d << -1, -1, -1, 1, -1, -1, 1, 1, -1, -1, 1, -1, -1, -1, 1, 1, -1, 1, 1, 1, 1, -1, 1, 1;
  return d / 8.0;
}

/// sum_i offsets_i (x) dN_i/dxi at the centre, from the node offsets x_i - x_0 (dN sums to zero), so
/// that far from the origin the products carry the round-off of one subtraction, not of eight
/// large terms.
Eigen::Matrix3d centre_jacobian_of_offsets(const NodeMatrix& offsets) {
  static const Eigen::Matrix<double, 8, 3> dN = centre_shape_derivatives();
  return offsets * dN;
}

Eigen::Matrix3d centre_jacobian(const NodeMatrix& x) { return centre_jacobian_of_offsets(x.colwise() - x.col(0)); }

/// Non-degenerate: |det A| > 1e-12 times the product of the column lengths (Hadamard's bound).
bool well_conditioned(const Eigen::Matrix3d& a) {
  const double bound = a.col(0).norm() * a.col(1).norm() * a.col(2).norm();
  const double det = a.determinant();
  return std::isfinite(det) && std::abs(det) > 1e-12 * bound;
}

/// F at the centre; false (F untouched) if the rest element is degenerate.
bool try_centre_gradient(const NodeMatrix& X, const NodeMatrix& x, Eigen::Matrix3d& F) {
  const Eigen::Matrix3d J0 = centre_jacobian(X);
  if (!well_conditioned(J0)) return false;
  F = centre_jacobian(x) * J0.inverse();
  return true;
}

void check_positions(const HexMesh& mesh, const Eigen::Matrix3Xd& x, const char* what) {
  CARDIO_CHECK(x.cols() == mesh.n_nodes(),
               what << ": " << x.cols() << " node positions for a mesh of " << mesh.n_nodes() << " nodes");
}

void check_directions(const HexMesh& mesh, const ElementDirections& d) {
  const Eigen::Index n = mesh.n_elements();
  for (const Eigen::Matrix3Xd* m : {&d.fibre, &d.sheet, &d.normal, &d.radial, &d.circumferential, &d.longitudinal})
    CARDIO_CHECK(m->cols() == n, "strain directions: " << m->cols() << " columns for " << n << " elements");
}

/// Throws naming the first element flagged in `bad` (checked after the parallel loop: no throw inside it).
void throw_if_bad(const std::vector<std::uint8_t>& bad, const char* what) {
  const auto it = std::find(bad.begin(), bad.end(), std::uint8_t{1});
  if (it != bad.end())
    CARDIO_FAIL(what << " in element " << (it - bad.begin()) << " (" << std::count(bad.begin(), bad.end(), 1)
                     << " elements in all)");
}

ElementStrains allocate(Eigen::Index n) {
  ElementStrains s;
  s.F.resize(9, n);
  s.E.resize(9, n);
  s.J.resize(n);
  s.E_ff.resize(n);
  s.E_ss.resize(n);
  s.E_nn.resize(n);
  s.E_rr.resize(n);
  s.E_cc.resize(n);
  s.E_ll.resize(n);
  return s;
}

/// Everything derived from F for element e (pure per-element write).
void fill(Eigen::Index e, const Eigen::Matrix3d& F, const ElementDirections& d, ElementStrains& s) {
  const Eigen::Matrix3d E = green_lagrange(F);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      s.F(3 * i + j, e) = F(i, j);
      s.E(3 * i + j, e) = E(i, j);
    }
  s.J(e) = F.determinant();
  auto normal_strain = [&](const Eigen::Matrix3Xd& dir) { return dir.col(e).dot(E * dir.col(e)); };
  s.E_ff(e) = normal_strain(d.fibre);
  s.E_ss(e) = normal_strain(d.sheet);
  s.E_nn(e) = normal_strain(d.normal);
  s.E_rr(e) = normal_strain(d.radial);
  s.E_cc(e) = normal_strain(d.circumferential);
  s.E_ll(e) = normal_strain(d.longitudinal);
}

}  // namespace

Eigen::Matrix3Xd principal_strains(const ElementStrains& s) {
  Eigen::Matrix3Xd principal(3, s.E.cols());
  parallel_for(s.E.cols(), [&](std::int64_t e) {
    const Eigen::Matrix3d E = Eigen::Map<const Eigen::Matrix3d>(s.E.col(e).data()).transpose();
    const Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> eig(E, Eigen::EigenvaluesOnly);
    principal.col(e) = eig.eigenvalues();  // ascending (Eigen's contract)
  });
  return principal;
}

Eigen::Matrix3d centre_deformation_gradient(const NodeMatrix& X, const NodeMatrix& x) {
  Eigen::Matrix3d F;
  if (!try_centre_gradient(X, x, F)) CARDIO_FAIL("deformation gradient: degenerate rest hexahedron (det J0 ~ 0)");
  return F;
}

Eigen::Matrix3d green_lagrange(const Eigen::Matrix3d& F) {
  return 0.5 * (F.transpose() * F - Eigen::Matrix3d::Identity());
}

Eigen::VectorXd fibre_stretch(const HexMesh& mesh, const Eigen::Matrix3Xd& x) {
  Eigen::VectorXd lambda(mesh.n_elements());
  parallel_for(mesh.n_elements(), [&](std::int64_t e) {
    const mechanics::Hex& h = mesh.hexes[std::size_t(e)];
    const Eigen::Matrix3d F = centre_deformation_gradient(mechanics::gather(mesh.rest, h), mechanics::gather(x, h));
    lambda[e] = (F * mesh.fibre.col(e)).norm();
  });
  return lambda;
}

Eigen::Matrix3Xd element_centres(const HexMesh& mesh, const Eigen::Matrix3Xd& x) {
  check_positions(mesh, x, "element centres");
  Eigen::Matrix3Xd c(3, mesh.n_elements());
  parallel_for(mesh.n_elements(), [&](std::int64_t e) {
    c.col(e) = mechanics::gather(x, mesh.hexes[std::size_t(e)]).rowwise().sum() / 8.0;
  });
  return c;
}

ElementDirections rest_directions(const HexMesh& mesh, const CardiacAxis& axis) {
  const Eigen::Vector3d l = unit_axis_direction(axis);
  const Eigen::Index n = mesh.n_elements();
  CARDIO_CHECK(mesh.fibre.cols() == n && mesh.sheet.cols() == n,
               "rest directions: the mesh has " << mesh.fibre.cols() << " fibres and " << mesh.sheet.cols()
                                                << " sheets for " << n << " elements");
  // Fallback radial for centres on the axis: the coordinate axis most orthogonal to l.
  Eigen::Index k = 0;
  l.cwiseAbs().minCoeff(&k);
  const Eigen::Vector3d e_k = Eigen::Vector3d::Unit(k);
  const Eigen::Vector3d r_fallback = (e_k - e_k.dot(l) * l).normalized();

  ElementDirections d;
  d.fibre = mesh.fibre;
  d.sheet = mesh.sheet;
  d.normal.resize(3, n);
  d.radial.resize(3, n);
  d.circumferential.resize(3, n);
  d.longitudinal = l.replicate(1, n);
  parallel_for(n, [&](std::int64_t e) {
    const NodeMatrix X = mechanics::gather(mesh.rest, mesh.hexes[std::size_t(e)]);
    const Eigen::Vector3d offset = X.rowwise().sum() / 8.0 - axis.point;
    const Eigen::Vector3d r = offset - offset.dot(l) * l;
    const double size = (X.col(6) - X.col(0)).norm();
    const Eigen::Vector3d r_unit = r.norm() > 1e-9 * size ? Eigen::Vector3d(r.normalized()) : r_fallback;
    d.normal.col(e) = mesh.normal(e);
    d.radial.col(e) = r_unit;
    d.circumferential.col(e) = l.cross(r_unit);
  });
  return d;
}

ElementDirections push_forward(const HexMesh& mesh, const Eigen::Matrix3Xd& x_ref, const ElementDirections& at_rest) {
  check_positions(mesh, x_ref, "push_forward");
  check_directions(mesh, at_rest);
  const Eigen::Index n = mesh.n_elements();
  ElementDirections d = at_rest;
  std::vector<std::uint8_t> bad(std::size_t(n), 0);
  parallel_for(n, [&](std::int64_t e) {
    const mechanics::Hex& h = mesh.hexes[std::size_t(e)];
    Eigen::Matrix3d F;
    if (!try_centre_gradient(mechanics::gather(mesh.rest, h), mechanics::gather(x_ref, h), F) || !well_conditioned(F)) {
      bad[std::size_t(e)] = 1;
      return;
    }
    for (Eigen::Matrix3Xd* m : {&d.fibre, &d.sheet, &d.normal, &d.radial, &d.circumferential, &d.longitudinal})
      m->col(e) = (F * m->col(e)).normalized();
  });
  throw_if_bad(bad, "push_forward: degenerate rest element or singular F(x_ref)");
  return d;
}

namespace {

/// J0^-1 of every element at rest (column-major 3 x 3 per column); throws on a degenerate element.
Eigen::Matrix<double, 9, Eigen::Dynamic> rest_inverses(const HexMesh& mesh) {
  const Eigen::Index n = mesh.n_elements();
  Eigen::Matrix<double, 9, Eigen::Dynamic> inv(9, n);
  std::vector<std::uint8_t> bad(std::size_t(n), 0);
  parallel_for(n, [&](std::int64_t e) {
    const Eigen::Matrix3d J0 = centre_jacobian(mechanics::gather(mesh.rest, mesh.hexes[std::size_t(e)]));
    if (!well_conditioned(J0)) {
      bad[std::size_t(e)] = 1;
      return;
    }
    Eigen::Map<Eigen::Matrix3d>(inv.col(e).data()) = J0.inverse();
  });
  throw_if_bad(bad, "strains: degenerate rest hexahedron");
  return inv;
}

/// Every element's volume at x, taken relative to its first node so that far-from-origin
/// coordinates do not cost digits.
Eigen::VectorXd centred_volumes(const HexMesh& mesh, const Eigen::Matrix3Xd& x) {
  Eigen::VectorXd v(mesh.n_elements());
  parallel_for(mesh.n_elements(), [&](std::int64_t e) {
    const NodeMatrix xe = mechanics::gather(x, mesh.hexes[std::size_t(e)]);
    v[e] = mechanics::hex_volume(xe.colwise() - xe.col(0));
  });
  return v;
}

}  // namespace

ReferenceConfiguration::ReferenceConfiguration(const HexMesh& mesh, const ElementDirections& dirs)
    : m_mesh(&mesh), m_dirs(dirs), m_rest_inverse(rest_inverses(mesh)), m_volume(centred_volumes(mesh, mesh.rest)) {
  check_directions(mesh, dirs);
}

ReferenceConfiguration::ReferenceConfiguration(const HexMesh& mesh, const Eigen::Matrix3Xd& x_ref,
                                               const ElementDirections& dirs_ref)
    : m_mesh(&mesh), m_dirs(dirs_ref) {
  check_positions(mesh, x_ref, "strains_relative (reference)");
  check_directions(mesh, dirs_ref);
  m_rest_inverse = rest_inverses(mesh);
  m_volume = centred_volumes(mesh, x_ref);
  const Eigen::Index n = mesh.n_elements();
  m_ref_inverse.resize(9, n);
  std::vector<std::uint8_t> bad(std::size_t(n), 0);
  parallel_for(n, [&](std::int64_t e) {
    const Eigen::Matrix3d F_ref = centre_jacobian(mechanics::gather(x_ref, mesh.hexes[std::size_t(e)])) *
                                  Eigen::Map<const Eigen::Matrix3d>(m_rest_inverse.col(e).data());
    if (!well_conditioned(F_ref)) {
      bad[std::size_t(e)] = 1;
      return;
    }
    Eigen::Map<Eigen::Matrix3d>(m_ref_inverse.col(e).data()) = F_ref.inverse();
  });
  throw_if_bad(bad, "strains_relative: singular F(x_ref)");
}

ElementStrains ReferenceConfiguration::strains(const Eigen::Matrix3Xd& x) const {
  check_positions(*m_mesh, x, "strains");
  const Eigen::Index n = m_mesh->n_elements();
  ElementStrains s = allocate(n);
  const bool relative = m_ref_inverse.cols() == n;
  parallel_for(n, [&](std::int64_t e) {
    const NodeMatrix xe = mechanics::gather(x, m_mesh->hexes[std::size_t(e)]);
    const NodeMatrix xc = xe.colwise() - xe.col(0);
    const Eigen::Matrix3d F =
        centre_jacobian_of_offsets(xc) * Eigen::Map<const Eigen::Matrix3d>(m_rest_inverse.col(e).data());
    fill(e, relative ? Eigen::Matrix3d(F * Eigen::Map<const Eigen::Matrix3d>(m_ref_inverse.col(e).data())) : F, m_dirs,
         s);
    s.J(e) = mechanics::hex_volume(xc) / m_volume[e];
  });
  return s;
}

ElementStrains strains(const HexMesh& mesh, const Eigen::Matrix3Xd& x, const ElementDirections& dirs) {
  check_positions(mesh, x, "strains");
  return ReferenceConfiguration(mesh, dirs).strains(x);
}

ElementStrains strains_relative(const HexMesh& mesh, const Eigen::Matrix3Xd& x_ref, const Eigen::Matrix3Xd& x,
                                const ElementDirections& dirs_ref) {
  check_positions(mesh, x, "strains_relative");
  return ReferenceConfiguration(mesh, x_ref, dirs_ref).strains(x);
}

}  // namespace cardio::analysis
