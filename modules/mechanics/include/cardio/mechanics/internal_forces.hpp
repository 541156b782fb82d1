#pragma once
/// @file internal_forces.hpp
/// The element force models share one interface, so the system, the integrators and the
/// experiments do not depend on the element type. A model is immutable after construction: what
/// changes over time (the load factor, the active tension) is passed to every evaluation.
#include <Eigen/Core>
#include <cstdint>
#include <functional>
#include <span>
#include <string_view>

namespace cardio::mechanics {

/// Tangent stiffness of one hexahedron: K = -df/dx, 24 x 24, row and column 3 j + i = coordinate i
/// of the element's node j (VTK order).
using ElementStiffness = Eigen::Matrix<double, 24, 24>;

/// The arithmetic of a force evaluation. Models whose element data are stored in single precision
/// (GuccioneForces with Precision::single) run their explicit loop in single precision when asked;
/// every other model and call computes in double.
enum class Precision { double_precision, single_precision };

/// The time-dependent inputs of one force evaluation. The spans are read during the call only
/// (the caller owns the values). Passive element models ignore the active part.
struct ForceInputs {
  double load_factor = 1;                  ///< scales the loads and prescribed displacements (system.hpp)
  std::span<const double> active_tension;  ///< Ta [kPa] per element; empty: zero everywhere
  std::span<const double> activation;      ///< a in [0, 1] per element; empty: zero everywhere
  /// single_precision: the forces may be computed in single precision (relative error ~1e-6; the
  /// explicit beat). Finite differences of forces (the stable-step estimate) and Newton keep double.
  Precision precision = Precision::double_precision;
};

/// The inputs at load fraction s in [0, 1] of a quasi-static solve (loads, active tension, ... as
/// they ramp together). The spans of the returned inputs must stay valid until the next call.
using LoadPath = std::function<ForceInputs(double s)>;

/// The default path: the loads scaled by s, no active tension.
inline ForceInputs proportional_load(double s) { return ForceInputs{s, {}, {}}; }

/// Which tangent element_stiffness gives. Far from equilibrium the exact tangent of a soft,
/// nearly incompressible element turns indefinite through the geometric part of its volumetric
/// term, p d(cof A) with p = kappa (Jbar - 1) (and the F-bar term beside it): leaving that part out
/// keeps kappa's own stiffness (kappa cof x cof) and the law's, and Newton's fallback
/// (newton.hpp) solves with it where the exact one does not factorise (docs/heartbeat.md, "Why the
/// soft inflations stall").
enum class Tangent { exact, without_volumetric_geometry };

/// Internal forces of a mesh. The public calls are non-virtual (the passive ones supply default
/// inputs); element models implement the do_ functions.
class InternalForces {
 public:
  virtual ~InternalForces() = default;
  /// f += internal (elastic + damping) forces [mN] at positions x [mm], velocities v [mm/ms].
  void add_forces(const Eigen::Matrix3Xd& x, const Eigen::Matrix3Xd& v, const ForceInputs& in,
                  Eigen::Matrix3Xd& f) const {
    do_add_forces(x, v, in, f);
  }
  /// The same without active tension.
  void add_forces(const Eigen::Matrix3Xd& x, const Eigen::Matrix3Xd& v, Eigen::Matrix3Xd& f) const {
    do_add_forces(x, v, ForceInputs{}, f);
  }
  /// Stored elastic energy [mN mm = uJ] of the conservative part of the model (with the active
  /// potential of the inputs, if the model has one).
  double energy(const Eigen::Matrix3Xd& x, const ForceInputs& in = {}) const { return do_energy(x, in); }
  /// Whether add_forces (without damping) is exactly -grad energy at fixed inputs.
  virtual bool conservative() const = 0;
  /// Largest damping time tau [ms] of any spring (for the stable-step estimate).
  virtual double max_damping_time() const = 0;
  virtual std::string_view name() const = 0;
  /// For Newton's method: whether element_stiffness is available.
  virtual bool has_stiffness() const { return false; }
  /// K = -df/dx of the elastic forces (no damping) of element e at the node positions x (3 x n);
  /// `part` (Tangent) says whether all of it.
  void element_stiffness(std::int32_t e, const Eigen::Matrix3Xd& x, const ForceInputs& in, ElementStiffness& K,
                         Tangent part = Tangent::exact) const {
    do_element_stiffness(e, x, in, part, K);
  }
  /// The same without active tension.
  void element_stiffness(std::int32_t e, const Eigen::Matrix3Xd& x, ElementStiffness& K) const {
    do_element_stiffness(e, x, ForceInputs{}, Tangent::exact, K);
  }

 private:
  virtual void do_add_forces(const Eigen::Matrix3Xd& x, const Eigen::Matrix3Xd& v, const ForceInputs& in,
                             Eigen::Matrix3Xd& f) const = 0;
  virtual double do_energy(const Eigen::Matrix3Xd& x, const ForceInputs& in) const = 0;
  virtual void do_element_stiffness(std::int32_t e, const Eigen::Matrix3Xd& x, const ForceInputs& in, Tangent part,
                                    ElementStiffness& K) const {
    (void)e, (void)x, (void)in, (void)part;
    K.setConstant(0.0 / 0.0);
  }
};

}  // namespace cardio::mechanics
