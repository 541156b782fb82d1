#pragma once
/// @file strain.hpp
/// Per-element kinematics at the element centre: deformation gradient F, Green-Lagrange strain E,
/// the element's volume ratio J, normal strains along the material (fibre, sheet, normal) and cardiac (radial,
/// circumferential, longitudinal) directions, and principal strains. docs/analysis.md has the
/// formulas, frames and sign conventions (negative normal strain = shortening).
///
/// Per-element fields are Eigen matrices with one column per element (element order of the mesh).
/// Whole-mesh functions loop with cardio::parallel_for, each element writing only its own column:
/// the results are bit-identical for any thread count.
#include <Eigen/Core>

#include "cardio/analysis/axis.hpp"
#include "cardio/mechanics/mesh.hpp"

namespace cardio::analysis {

/// Deformation gradient at the centre of a trilinear hexahedron (VTK node order):
///   F = sum_i x_i (x) dN_i/dX = (sum_i x_i (x) dN_i/dxi) J0^-1,  J0 = sum_i X_i (x) dN_i/dxi,
/// with dN_i/dxi = (xi_i, eta_i, zeta_i)/8 at the centre, (xi_i, eta_i, zeta_i) in {-1, 1}^3 the node's
/// natural coordinates (isoparametric map; e.g. Bathe, Finite Element Procedures, sec. 5.3).
/// Exact (F = A) for every affine map x = A X + b of any non-degenerate hexahedron X.
/// Throws cardio::Error if |det J0| <= 1e-12 |J0|^3 (degenerate rest element).
Eigen::Matrix3d centre_deformation_gradient(const mechanics::NodeMatrix& X, const mechanics::NodeMatrix& x);

/// Green-Lagrange strain E = (F^T F - I) / 2 (Holzapfel, Nonlinear Solid Mechanics, eq. 2.67).
Eigen::Matrix3d green_lagrange(const Eigen::Matrix3d& F);

/// Unit directions per element (3 x n_elements each), in the configuration the strain is measured
/// from (rest, or a reference such as end-diastole).
struct ElementDirections {
  Eigen::Matrix3Xd fibre, sheet, normal;
  Eigen::Matrix3Xd radial, circumferential, longitudinal;
};

/// Directions at rest: f0, s0 and n0 = f0 x s0 from the mesh; about the axis, with c = centre of the
/// element at rest (mean of its 8 nodes) and p = axis.point:
///   l = axis direction (apex -> base),  r = ((c - p) - ((c - p).l) l) normalised (outward),
///   c_dir = l x r (counterclockwise seen from the base, i.e. a right-handed (r, c, l) frame).
/// An element centre on the axis (|r| <= 1e-9 of the element size) gets r = the coordinate axis most
/// orthogonal to l, orthogonalised (deterministic, documented fallback).
ElementDirections rest_directions(const mechanics::HexMesh& mesh, const CardiacAxis& axis);

/// Directions of `at_rest` carried to the configuration x_ref: d_ref = F_ref d / |F_ref d| (the
/// material line element that had direction d at rest). The pushed-forward triads are unit but in
/// general not orthogonal (they are sheared with the material).
ElementDirections push_forward(const mechanics::HexMesh& mesh, const Eigen::Matrix3Xd& x_ref,
                               const ElementDirections& at_rest);

/// Per-element strain fields (one column / entry per element).
struct ElementStrains {
  Eigen::Matrix<double, 9, Eigen::Dynamic> F;  ///< F(i, j) at row 3 i + j (row-major, as ParaView names XX, XY, ...)
  Eigen::Matrix<double, 9, Eigen::Dynamic> E;  ///< Green-Lagrange E, same layout (symmetric)
  /// Volume ratio of the element: its exact trilinear volume over the rest (or reference) volume,
  /// i.e. the mean dilatation the near-incompressibility acts on. Equals det F for an affine
  /// motion; differs from the centre det F when the element deforms non-affinely.
  Eigen::VectorXd J;
  Eigen::VectorXd E_ff, E_ss, E_nn;  ///< d.E.d along fibre, sheet, normal
  Eigen::VectorXd E_rr, E_cc, E_ll;  ///< d.E.d along radial, circumferential, longitudinal
};

/// Principal strains of every element: the eigenvalues of s.E, ascending (E_1 <= E_2 <= E_3), one
/// column per element. On request: a beat samples strains every few milliseconds and uses none.
Eigen::Matrix3Xd principal_strains(const ElementStrains& s);

/// Strains relative to the rest configuration at node positions x (3 x n_nodes) [mm]; `dirs` are rest
/// directions (rest_directions). Throws cardio::Error on size mismatch or a degenerate rest element.
ElementStrains strains(const mechanics::HexMesh& mesh, const Eigen::Matrix3Xd& x, const ElementDirections& dirs);

/// Strains relative to a reference configuration x_ref (e.g. end-diastole):
///   F_rel = F(x) F(x_ref)^-1,  E_rel = (F_rel^T F_rel - I) / 2,  J_rel = v(x) / v(x_ref),
/// a Lagrangian strain on the reference configuration. `dirs_ref` are unit directions in that
/// configuration, normally push_forward(mesh, x_ref, rest_directions(mesh, axis)) (material fibres
/// and the material lines that were radial/circumferential/longitudinal at rest).
/// Throws cardio::Error if F(x_ref) is singular in an element.
ElementStrains strains_relative(const mechanics::HexMesh& mesh, const Eigen::Matrix3Xd& x_ref,
                                const Eigen::Matrix3Xd& x, const ElementDirections& dirs_ref);

/// A strain reference kept for a series of states: per element the centre gradient's inverse at
/// rest J0^-1, at x_ref F(x_ref)^-1 and the reference volume, computed once (a beat samples the
/// strains every few milliseconds against one reference). strains(x) gives what strains() or
/// strains_relative() give, to the bit. `mesh` must outlive it.
class ReferenceConfiguration {
 public:
  /// The rest configuration; `dirs` from rest_directions. Throws on a degenerate rest element.
  ReferenceConfiguration(const mechanics::HexMesh& mesh, const ElementDirections& dirs);
  /// x_ref (e.g. end-diastole); `dirs_ref` in that configuration (push_forward). Throws if F(x_ref)
  /// is singular in an element.
  ReferenceConfiguration(const mechanics::HexMesh& mesh, const Eigen::Matrix3Xd& x_ref,
                         const ElementDirections& dirs_ref);
  ElementStrains strains(const Eigen::Matrix3Xd& x) const;

 private:
  const mechanics::HexMesh* m_mesh;
  ElementDirections m_dirs;
  Eigen::Matrix<double, 9, Eigen::Dynamic> m_rest_inverse;  ///< J0^-1, column-major per element
  Eigen::Matrix<double, 9, Eigen::Dynamic> m_ref_inverse;   ///< F(x_ref)^-1 (empty: the rest is the reference)
  Eigen::VectorXd m_volume;                                 ///< reference volumes, each from its first node [mm^3]
};

/// Fibre stretch of every element relative to the rest state, lambda = |F f0| with F at the element
/// centre and f0 the element's rest fibre direction (mesh.fibre).
Eigen::VectorXd fibre_stretch(const mechanics::HexMesh& mesh, const Eigen::Matrix3Xd& x);

/// Element centres (mean of the 8 nodes = the trilinear map at the centre) [mm], 3 x n_elements.
Eigen::Matrix3Xd element_centres(const mechanics::HexMesh& mesh, const Eigen::Matrix3Xd& x);

}  // namespace cardio::analysis
