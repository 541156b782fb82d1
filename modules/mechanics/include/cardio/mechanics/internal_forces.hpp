#pragma once
/// @file internal_forces.hpp
/// The element force models share one interface, so the system, the integrators and the
/// experiments do not depend on the element type.
#include <Eigen/Core>
#include <cstdint>
#include <string_view>

namespace cardio::mechanics {

/// Tangent stiffness of one hexahedron: K = -df/dx, 24 x 24, row and column 3 j + i = coordinate i
/// of the element's node j (VTK order).
using ElementStiffness = Eigen::Matrix<double, 24, 24>;

class InternalForces {
 public:
  virtual ~InternalForces() = default;
  /// f += internal (elastic + damping) forces [mN] at positions x [mm], velocities v [mm/ms].
  virtual void add_forces(const Eigen::Matrix3Xd& x, const Eigen::Matrix3Xd& v,
                          Eigen::Matrix3Xd& f) const = 0;
  /// Stored elastic energy [mN mm = uJ] of the conservative part of the model.
  virtual double energy(const Eigen::Matrix3Xd& x) const = 0;
  /// Whether add_forces (without damping) is exactly -grad energy.
  virtual bool conservative() const = 0;
  /// Largest damping time tau [ms] of any spring (for the stable-step estimate).
  virtual double max_damping_time() const = 0;
  virtual std::string_view name() const = 0;
  /// For Newton's method: whether element_stiffness is available.
  virtual bool has_stiffness() const { return false; }
  /// K = -df/dx of the elastic forces (no damping) of element e at the node positions x (3 x n).
  virtual void element_stiffness(std::int32_t e, const Eigen::Matrix3Xd& x, ElementStiffness& K) const {
    (void)e, (void)x;
    K.setConstant(0.0 / 0.0);
  }
};

}  // namespace cardio::mechanics
