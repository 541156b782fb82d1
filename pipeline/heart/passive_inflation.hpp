#pragma once
/// @file passive_inflation.hpp
/// The passive heart inflated by cavity pressures, solved by Newton's method: the model of
/// heart_model.hpp (the config's material and boundary, no active tension) with a follower
/// pressure on each named cavity's endocardium (surface tag endocardium_<name>) and on the lid
/// that closes it over its rim (mechanics::LidPressureLoad): the load the beat's cavity pressure
/// puts on the heart, so that the unloaded heart filled in the beat meets the image. Shared by the
/// unloading (unloading.hpp) and the passive calibration (passive_calibration.hpp).
#include <Eigen/Core>
#include <functional>
#include <memory>
#include <ostream>
#include <vector>

#include "cardio/mechanics/newton.hpp"
#include "cardio/meshing/voxel_mesh.hpp"
#include "config/heart_config.hpp"
#include "heart/heart_model.hpp"

namespace cardio::pipeline {

struct InflationOutcome {
  bool converged = false;
  Eigen::Matrix3Xd x;         ///< positions at the last converged load fraction [mm]
  int newton_iterations = 0;  ///< summed over the attempts
  long relaxation_steps = 0;  ///< dynamic-relaxation steps where Newton stalled (unloading.inflation_fallback)
  double worst_J = 1;         ///< smallest det F at a Gauss point (<= 0: an element inverted)
};

class PassiveInflation {
 public:
  /// The model on `mesh` (its rest positions are the stress-free reference) with the pressures
  /// `pressures` at load fraction 1. Newton's tolerances are the config's (simulation.*).
  /// Errors (a cavity without an endocardium tag) name `where`. With unloading.newton_log, every
  /// Newton iteration is logged to `log`.
  PassiveInflation(const HeartSimulation& sim, const meshing::VoxelMesh& mesh,
                   const std::vector<CavityPressure>& pressures, const std::string& where, std::ostream* log);
  ~PassiveInflation();

  /// Equilibrium at the full pressures. From `guess` first if given: the whole load in one
  /// increment (cheap when the guess is close), or, when guess_fraction > 0 and the guess is the
  /// equilibrium at that load fraction, the load raised from there (cut on failure). Then from
  /// rest: the first increment 1/unloading.load_steps of the load, each converged one doubling the
  /// next (a soft heart's toe takes small steps, its stiffened wall large ones), a failed one halved.
  /// Where Newton's increments stall (a soft wall whose pressure-loaded tangent turns indefinite on
  /// the way), dynamic relaxation carries the load from the last converged fraction to the end and
  /// Newton refines its state (unloading.inflation_fallback).
  InflationOutcome inflate(const Eigen::Matrix3Xd* guess, double guess_fraction = 0);

  /// Equilibria at the ascending load fractions `fractions` in (0, 1], each from the last, from
  /// rest (the first increment at most 1/unloading.load_steps of the load, as inflate());
  /// `at_each(fraction, x)` sees every one. Stops at the first that does not converge.
  InflationOutcome inflate_through(const std::vector<double>& fractions,
                                   const std::function<void(double, const Eigen::Matrix3Xd&)>& at_each);

 private:
  bool solve(Eigen::Matrix3Xd& x, double s_from, double s_to, int max_cuts, double first_increment,
             InflationOutcome& out);
  mechanics::NewtonStats newton(Eigen::Matrix3Xd& x, double s_from, double s_to, int max_cuts, double first_increment,
                                InflationOutcome& out);
  bool relax(Eigen::Matrix3Xd& x, double s_from, double s_to, InflationOutcome& out);
  bool physical(const Eigen::Matrix3Xd& x, InflationOutcome& out) const;

  const meshing::VoxelMesh& m_mesh;
  mechanics::NewtonOptions m_options;
  HeartModel m_model;
  std::unique_ptr<mechanics::NewtonSolver> m_newton;
  std::ostream* m_newton_log = nullptr;
  std::ostream* m_log = nullptr;
  bool m_relaxation_fallback = true;
  int m_load_steps = 1;  ///< unloading.load_steps: the first increment from rest is 1/this of the load
};

/// A copy of `mesh` whose rest positions are X: element volumes and lumped masses (at the same
/// tissue density) follow; labels, fibres (per element), tags and cavities stay.
meshing::VoxelMesh with_rest_positions(const meshing::VoxelMesh& mesh, const Eigen::Matrix3Xd& X);

}  // namespace cardio::pipeline
