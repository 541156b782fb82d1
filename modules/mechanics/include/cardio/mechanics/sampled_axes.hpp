#pragma once
/// @file sampled_axes.hpp
/// The sampled-axes element: the Bourguignon-Cani axes taken at the 2x2x2 Gauss points of the
/// hexahedron instead of at its centre only, each sample with its own fibre frame, and the
/// Guccione law with active tension applied at every sample (docs/calibration.md, "Sampled axes").
///
/// The axis vectors of a sample are the derivatives of the element's trilinear map along the
/// sample's frame: with F_g = sum_j x_j (x) dN_j/dX (xi_g) and the rest frame R_g = [f s n]_g,
///   [l_f l_s l_n](g) = F_g R_g = (dx/dxi)(xi_g) map_g,   map_g = (dX/dxi)^-1(xi_g) R_g   (fixed at rest).
/// The centre sample (xi = 0) of a parallelepiped is the classical Bourguignon-Cani axis triple
/// (unit rest lengths). The element is an F-bar element (de Souza Neto et al. 1996, Int. J. Solids
/// Struct. 33:3277, eq. 7): the law at sample g sees Fbar_g = (Jbar / J_g)^(1/3) F_g. The energy is
///   sum_g w_g [ C/2 (exp(Q(Ebar_g)) - 1) + Ta Ebar_ff(g) ]  +  V0 kappa/2 (Jbar - 1)^2,
///   Ebar_g = (s_g A_g^T A_g - I) / 2,  s_g = (Jbar / J_g)^(2/3),  J_g = det A_g,
///   A_g = [l_f l_s l_n](g),  w_g = det(dX/dxi)(xi_g),
///   Jbar = v / V0,  v = sum_g w_g J_g  (the exact current volume of the trilinear element),
/// Q as in hyperelastic.hpp (Guccione et al. 1991; Land et al. 2015). The volume penalty acts on
/// the element's mean dilatation (Simo, Taylor & Pister 1985), one term per element, so the eight
/// samples do not lock the near-incompressible tissue; F-bar makes the energy diverge as one sample
/// collapses, which the penalty on Jbar alone does not. An inverted sample (J_g <= 0) has no
/// energy: the kernel returns NaN. Full 2x2x2 sampling leaves no zero-energy mode but the six rigid
/// ones: no hourglass control is needed. (docs/calibration.md, "Sampled axes".)
/// Nodal forces are the exact gradient of this energy. Units: mm, ms, kPa, mN.
#include <Eigen/Core>
#include <array>

#include "cardio/mechanics/hyperelastic.hpp"
#include "cardio/mechanics/internal_forces.hpp"
#include "cardio/mechanics/mesh.hpp"

namespace cardio::mechanics {

/// Number of samples per element (2x2x2 Gauss points, in VTK node order: sample g is nearest node g).
inline constexpr int kSamples = 8;

/// Reference coordinates xi_g in [-1, 1]^3 of sample g (+-1/sqrt(3), VTK node order).
Eigen::Vector3d sample_xi(int g);

/// Rest positions [mm] of the 8 samples of the element with rest nodes X (3 x 8, columns = samples).
Eigen::Matrix<double, 3, kSamples> sample_points(const NodeMatrix& X);

/// Rest data of one element (fixed at rest).
struct SampledElementData {
  std::array<Eigen::Matrix3d, kSamples> map;  ///< [l_f l_s l_n](g) = (dx/dxi)(xi_g) map[g]
  std::array<double, kSamples> weight{};      ///< w_g = det(dX/dxi) at xi_g [mm^3] (Gauss weight 1)
  double volume = 0;                          ///< V0 = sum_g w_g [mm^3]
};

/// Element data for rest nodes X (VTK order) and the orthonormal right-handed frame [f s n] of
/// each sample. Throws cardio::Error when the element is inverted or degenerate at a sample
/// (det(dX/dxi) <= 0): any hexahedron with positive corner Jacobians is accepted, not only cubes.
SampledElementData sampled_element_data(const NodeMatrix& X, const std::array<Eigen::Matrix3d, kSamples>& frames);

/// One element: adds its nodal forces [mN] to f and returns its potential energy [mN mm]
/// (passive + mean-dilatation volume + active potential sum_g w_g Ta (Ebar_ff + n_s Ebar_ss + n_n Ebar_nn)), or NaN
/// (energy and every force) when a sample is inverted. Ta [kPa] is the active fibre tension (S_ff += Ta, Land et al.
/// 2015 eq. 3), `activation` in [0, 1] drives the law's beta/gamma option (hyperelastic.hpp, ActiveFibre) at every
/// sample. v may be null (no damping); damping adds tau C_small : dE/dt per sample. Pure: no allocation, no global
/// state.
double sampled_element_forces(const SampledElementData& e, const GuccioneLaw& law, double Ta, double activation,
                              const NodeMatrix& x, const NodeMatrix* v, NodeMatrix& f);

/// Tangent stiffness of one element: K = -df/dx (24 x 24; row and column 3 j + i = coordinate i of
/// node j) of the elastic forces of sampled_element_forces (no damping) at x, by forward-mode
/// automatic differentiation of the same kernel (Eigen AutoDiff): exact to rounding, symmetric
/// (the forces are an energy gradient). NaN when a sample is inverted.
void sampled_element_stiffness(const SampledElementData& e, const GuccioneLaw& law, double Ta, double activation,
                               const NodeMatrix& x, ElementStiffness& K);

/// Smallest det F over the samples and the mean dilatation Jbar = v / V0 of an element at x
/// (for the inverted-element check: an element is inverted when either is <= 0).
struct ElementDilatation {
  double min_sample_J = 1;
  double mean_J = 1;
};
ElementDilatation sampled_element_dilatation(const SampledElementData& e, const NodeMatrix& x);

}  // namespace cardio::mechanics
