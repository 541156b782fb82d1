#pragma once
/// @file baudet_cube.hpp
/// Baudet et al. (2007) cubic mass-spring element: 12 edge springs, 4 inner diagonals
/// (configuration M2) with the closed-form stiffnesses of eqs. 7-8, plus the orthogonal
/// corrective forces of eq. 9 that set Poisson's ratio. Isotropic; fibres are ignored.
#include <Eigen/Core>
#include <array>
#include <vector>

#include "cardio/mechanics/internal_forces.hpp"
#include "cardio/mechanics/material.hpp"
#include "cardio/mechanics/mesh.hpp"

namespace cardio::mechanics {

/// One cube: adds nodal forces to f and returns the energy of its springs [mN mm] (the
/// corrective forces are not conservative and carry no energy). Rest lengths come from X.
double baudet_element_forces(const BaudetConstants& c, const NodeMatrix& x, const NodeMatrix* v, const NodeMatrix& X,
                             NodeMatrix& f, bool corrective = true);

class BaudetCubeForces final : public InternalForces {
 public:
  /// constants[k] for material index k. `corrective` switches eq. 9 on (default) or off.
  BaudetCubeForces(const HexMesh& mesh, std::vector<BaudetConstants> constants, bool corrective = true);

  bool conservative() const override { return !m_corrective; }
  double max_damping_time() const override;
  std::string_view name() const override { return "baudet_cube"; }

 private:
  /// Passive: the inputs' active part is ignored.
  void do_add_forces(const Eigen::Matrix3Xd& x, const Eigen::Matrix3Xd& v, const ForceInputs& in,
                     Eigen::Matrix3Xd& f) const override;
  double do_energy(const Eigen::Matrix3Xd& x, const ForceInputs& in) const override;

  std::vector<Hex> m_hexes;
  Eigen::Matrix3Xd m_rest;
  std::vector<std::uint16_t> m_material;
  std::vector<BaudetConstants> m_constants;
  ElementSchedule m_schedule;
  bool m_corrective;
};

}  // namespace cardio::mechanics
