#pragma once
/// @file mass_scaling.hpp
/// Selective mass scaling for the explicit step: extra mass on the few elements (thin, distorted
/// boundary elements of a fitted mesh) whose own highest frequency limits the stable step, within
/// a budget of added mass. The step then follows the bulk of the mesh, not its thinnest element.
///
/// The element bound: the highest natural frequency of the assembled mesh is at most the largest
/// over its elements of sqrt(lambda_max(K_e) / m_node,e) (the element eigenvalue inequality, Irons
/// 1970, AIAA J. 8:1357; Hughes 1987, The Finite Element Method, thm. 9.2.1 and §9.3), with K_e
/// the element's tangent and m_node,e = m_e / 8 its lumped mass per node. Scaling element e's mass
/// by max(1, omega_e^2 / omega^2) caps every element bound, so the global frequency, at omega. This
/// is the conventional (diagonal) selective scaling of explicit codes (e.g. LS-DYNA's DT2MS; Olovsson
/// et al. 2005, Int. J. Numer. Meth. Eng. 63:1436, discuss its effect on the dynamics).
#include <Eigen/Core>
#include <cstdint>

#include "cardio/mechanics/internal_forces.hpp"
#include "cardio/mechanics/mesh.hpp"

namespace cardio::mechanics {

struct SelectiveMassScaling {
  Eigen::VectorXd nodal_mass;         ///< [mg], the input masses plus the added mass
  double bound_frequency_before = 0;  ///< largest element bound [1/ms] without the added mass
  double bound_frequency_after = 0;   ///< the cap omega [1/ms] the added mass reaches
  double added_mass_fraction = 0;     ///< added / total input mass
  std::int64_t scaled_elements = 0;   ///< elements that received mass
  double largest_element_factor = 1;  ///< largest mass multiplier of one element
};

/// Element frequency bounds omega_e [1/ms] at positions x: sqrt(lambda_max(K_e) / (m_e / 8)).
/// `element_mass` [mg] per element. Needs forces.has_stiffness().
Eigen::VectorXd element_frequency_bounds(const HexMesh& mesh, const InternalForces& forces,
                                         const Eigen::VectorXd& element_mass, const Eigen::Matrix3Xd& x);

/// The lowest cap omega whose added mass sum_e m_e max(0, omega_e^2 / omega^2 - 1) is at most
/// `budget` (a fraction of sum_e m_e), and the nodal masses with it: nodal_mass + the added
/// element masses, lumped equally on the element's nodes. budget = 0 adds nothing.
SelectiveMassScaling selective_mass_scaling(const HexMesh& mesh, const Eigen::VectorXd& nodal_mass,
                                            const Eigen::VectorXd& element_mass, const Eigen::VectorXd& bounds,
                                            double budget);

}  // namespace cardio::mechanics
