#include "cardio/mechanics/mass_scaling.hpp"

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "cardio/core/error.hpp"
#include "cardio/core/parallel.hpp"

namespace cardio::mechanics {

Eigen::VectorXd element_frequency_bounds(const HexMesh& mesh, const InternalForces& forces,
                                         const Eigen::VectorXd& element_mass, const Eigen::Matrix3Xd& x) {
  CARDIO_CHECK(forces.has_stiffness(), "selective mass scaling needs the element tangent, which the "
                                           << forces.name() << " element does not have (use the sampled-axes element)");
  CARDIO_CHECK(element_mass.size() == mesh.n_elements(),
               "element masses: " << element_mass.size() << " values for " << mesh.n_elements() << " elements");
  Eigen::VectorXd omega(mesh.n_elements());
  parallel_for(mesh.n_elements(), [&](std::int64_t e) {
    ElementStiffness K;
    forces.element_stiffness(std::int32_t(e), x, K);
    const ElementStiffness Ks = 0.5 * (K + K.transpose());
    const double lambda =
        Eigen::SelfAdjointEigenSolver<ElementStiffness>(Ks, Eigen::EigenvaluesOnly).eigenvalues().maxCoeff();
    omega[e] = std::sqrt(std::max(lambda, 0.0) / (element_mass[e] / 8));
  });
  for (Eigen::Index e = 0; e < omega.size(); ++e)
    CARDIO_CHECK(std::isfinite(omega[e]), "element " << e << ": no finite frequency bound (inverted or massless)");
  return omega;
}

namespace {

double added_mass(const Eigen::VectorXd& m, const Eigen::VectorXd& omega, double cap) {
  double added = 0;  // serial: a fixed summation order
  for (Eigen::Index e = 0; e < m.size(); ++e) added += m[e] * std::max(0.0, omega[e] * omega[e] / (cap * cap) - 1);
  return added;
}

}  // namespace

SelectiveMassScaling selective_mass_scaling(const HexMesh& mesh, const Eigen::VectorXd& nodal_mass,
                                            const Eigen::VectorXd& element_mass, const Eigen::VectorXd& omega,
                                            double budget) {
  CARDIO_CHECK(budget >= 0 && budget < 1, "added-mass budget " << budget << " (must be in [0, 1))");
  CARDIO_CHECK(omega.size() == mesh.n_elements() && element_mass.size() == mesh.n_elements(),
               "selective mass scaling: one frequency bound and one mass per element expected");
  SelectiveMassScaling out;
  out.nodal_mass = nodal_mass;
  if (mesh.n_elements() == 0) return out;
  const double total = element_mass.sum();
  double hi = omega.maxCoeff(), lo = hi;
  out.bound_frequency_before = out.bound_frequency_after = hi;
  if (budget == 0) return out;
  // Bisection (in log omega) for the lowest cap within the budget: the added mass falls as the cap rises.
  lo = omega.minCoeff();
  if (added_mass(element_mass, omega, lo) > budget * total) {
    for (int it = 0; it < 80; ++it) {
      const double mid = std::sqrt(lo * hi);
      (added_mass(element_mass, omega, mid) > budget * total ? lo : hi) = mid;
    }
  } else {
    hi = lo;
  }
  out.bound_frequency_after = hi;
  for (Eigen::Index e = 0; e < omega.size(); ++e) {
    const double factor = std::max(1.0, omega[e] * omega[e] / (hi * hi));
    if (factor == 1.0) continue;
    ++out.scaled_elements;
    out.largest_element_factor = std::max(out.largest_element_factor, factor);
    for (std::int32_t n : mesh.hexes[std::size_t(e)]) out.nodal_mass[n] += (factor - 1) * element_mass[e] / 8;
  }
  out.added_mass_fraction = added_mass(element_mass, omega, hi) / total;
  return out;
}

}  // namespace cardio::mechanics
