#pragma once
// Helpers shared by the mechanics tests: finite-difference stiffness, random rigid motions,
// and blocks with calibrated materials.
#include <Eigen/Dense>
#include <Eigen/Geometry>
#include <memory>
#include <random>

#include "cardio/core/error.hpp"

#include "cardio/mechanics/baudet_cube.hpp"
#include "cardio/mechanics/block.hpp"
#include "cardio/mechanics/bourguignon_cani.hpp"
#include "cardio/mechanics/system.hpp"

namespace cardio::mechanics::testing {

/// Internal forces of a model (at inputs `in`) as a flat vector at flat positions.
inline Eigen::VectorXd flat_forces(const InternalForces& model, const Eigen::Matrix3Xd& x, const ForceInputs& in = {}) {
  Eigen::Matrix3Xd f = Eigen::Matrix3Xd::Zero(3, x.cols());
  model.add_forces(x, Eigen::Matrix3Xd(), in, f);
  return Eigen::Map<const Eigen::VectorXd>(f.data(), f.size());
}

/// Linearised stiffness K = -df/dx by central differences (step h_fd) at inputs `in`.
inline Eigen::MatrixXd fd_stiffness(const InternalForces& model, const Eigen::Matrix3Xd& x, double h_fd = 1e-6,
                                    const ForceInputs& in = {}) {
  const Eigen::Index n = x.size();
  Eigen::MatrixXd K(n, n);
  for (Eigen::Index j = 0; j < n; ++j) {
    Eigen::Matrix3Xd xp = x, xm = x;
    xp.data()[j] += h_fd;
    xm.data()[j] -= h_fd;
    K.col(j) = -(flat_forces(model, xp, in) - flat_forces(model, xm, in)) / (2 * h_fd);
  }
  return K;
}

/// A random rotation from a seeded generator.
inline Eigen::Matrix3d random_rotation(std::mt19937_64& rng) {
  std::normal_distribution<double> g(0, 1);
  Eigen::Quaterniond q(g(rng), g(rng), g(rng), g(rng));
  return q.normalized().toRotationMatrix();
}

/// Calibrated isotropic Bourguignon-Cani moduli.
inline BCModuli bc_iso(double E, double nu, BCCalibration opt = {}) {
  return calibrate_bourguignon_cani(ElasticConstants::isotropic(E, nu), opt);
}

/// Fibre field with a fixed oblique frame (no voxel axis aligned).
inline FibreField oblique_fibres() {
  FibreField f;
  f.direction = Eigen::Vector3d(1.0, 0.6, 0.3).normalized();
  f.sheet = Eigen::Vector3d(-0.2, 1.0, 0.4);
  return f;
}

}  // namespace cardio::mechanics::testing
