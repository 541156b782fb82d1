#pragma once
/// @file bourguignon_cani.hpp
/// The anisotropic hexahedron of Bourguignon & Cani (2000), section 4: forces act along three
/// axes of interest (f, s, n) through the rest barycentre, between the points where each axis
/// meets the element boundary. Each point P is stored by its face and bilinear coordinates
///   x_P = zeta eta x_A + (1-zeta) eta x_B + (1-zeta)(1-eta) x_C + zeta (1-eta) x_D
/// computed once at rest; a force on P is split onto A..D with the same weights.
/// Terms (docs/calibration.md): axial damped springs (sec. 2.2), angular springs (sec. 2.2,
/// used as the exact gradient of K/2 (cos - c)^2), a J = det F volume term, the paper's
/// damped radial volume springs (sec. 4.1) and a rotation-invariant hourglass control.
#include <Eigen/Core>
#include <array>
#include <cstdint>
#include <vector>

#include "cardio/mechanics/internal_forces.hpp"
#include "cardio/mechanics/material.hpp"
#include "cardio/mechanics/mesh.hpp"

namespace cardio::mechanics {

/// Where an axis meets the element boundary: a face (kHexFaces index) and bilinear coords
/// with respect to that face's nodes A, B, C, D = kHexFaces[face][0..3].
struct AxisEndpoint {
  int face = 0;
  double zeta = 0.5, eta = 0.5;
  /// Bilinear weights of A, B, C, D (Bourguignon & Cani 2000, sec. 4).
  std::array<double, 4> weights() const {
    return {zeta * eta, (1 - zeta) * eta, (1 - zeta) * (1 - eta), zeta * (1 - eta)};
  }
};

/// Rest geometry of one element: the two endpoints of each axis, axis a running from
/// ends[2a+1] (the - side) to ends[2a] (the + side).
struct BCRestGeometry {
  std::array<AxisEndpoint, 6> ends;
  Eigen::Matrix3d L;  ///< rest axis vectors l_a = x_{P+} - x_{P-} as columns [mm]
};

/// Intersect the axes (columns of `frame`, through the barycentre of X) with the faces of the
/// hexahedron X (8 rest nodes, VTK order). Throws if an axis misses the boundary (bad element).
BCRestGeometry bc_rest_geometry(const NodeMatrix& X, const Eigen::Matrix3d& frame);

/// Per-element constants the kernel needs, derived from the rest geometry.
struct BCElementData {
  /// Axis weights: l_a = sum_j W(a, j) x_j, the bilinear weights of the "+" point minus those
  /// of the "-" point (a force g_a on the axis puts W(a, j) g_a on node j).
  Eigen::Matrix<double, 3, 8> W;
  std::array<double, 3> inv_rest_length{};  ///< 1/r_a, r_a = |L_a| [mm]; the rest axes are along f, s, n
  double volume = 0;                        ///< rest volume V0 [mm^3]
  double size = 0;                          ///< h = V0^(1/3) [mm] (hourglass and radial springs)
};

/// Element constants for rest nodes X and frame [f s n]. Throws for a degenerate element, or
/// one that is not a parallelepiped (the hourglass control assumes voxel-like elements).
BCElementData bc_element_data(const NodeMatrix& X, const Eigen::Matrix3d& frame);

/// One element: adds its nodal forces [mN] to f and returns its elastic energy [mN mm].
/// x, v: current nodes (v may be null: no damping); X: rest nodes (only read when the radial
/// volume springs are on). Pure function: no allocation, no global state.
double bc_element_forces(const BCElementData& e, const BCModuli& m, const NodeMatrix& x, const NodeMatrix* v,
                         const NodeMatrix& X, NodeMatrix& f);

/// Deformation gradient of the element from its axes: F = [l_f l_s l_n] diag(1/r) [f s n]^T.
/// Exact for any affine deformation, since the intersection points are bilinear in the nodes.
Eigen::Matrix3d bc_deformation_gradient(const BCElementData& e, const Eigen::Matrix3d& frame, const NodeMatrix& x);

/// The whole mesh of Bourguignon-Cani elements.
class BourguignonCaniForces final : public InternalForces {
 public:
  /// materials[k] are the moduli of material index k of the mesh. The mesh is copied in part
  /// (connectivity, rest positions); it need not outlive this object.
  BourguignonCaniForces(const HexMesh& mesh, std::vector<BCModuli> materials);

  bool conservative() const override { return true; }
  double max_damping_time() const override;
  std::string_view name() const override { return "bourguignon_cani"; }

  const std::vector<BCElementData>& elements() const { return m_data; }
  /// Bytes held per element by this object (for the benchmark's memory table).
  std::size_t bytes() const;

 private:
  /// Passive: the inputs' active part is ignored.
  void do_add_forces(const Eigen::Matrix3Xd& x, const Eigen::Matrix3Xd& v, const ForceInputs& in,
                     Eigen::Matrix3Xd& f) const override;
  double do_energy(const Eigen::Matrix3Xd& x, const ForceInputs& in) const override;

  std::vector<Hex> m_hexes;
  Eigen::Matrix3Xd m_rest;
  std::vector<BCElementData> m_data;
  std::vector<std::uint16_t> m_material;
  std::vector<BCModuli> m_moduli;
  ElementSchedule m_schedule;
};

}  // namespace cardio::mechanics
