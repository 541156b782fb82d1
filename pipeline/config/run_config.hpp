#pragma once
/// @file run_config.hpp
/// The schema of a block-experiment run: one struct per config section, each parsed in one
/// place (run_config.cpp) with its keys, defaults, ranges and units. docs/config.md lists them.
#include <array>
#include <filesystem>
#include <string>

#include "cardio/config/config.hpp"
#include "cardio/mechanics/block.hpp"
#include "cardio/mechanics/integrators.hpp"
#include "cardio/mechanics/material.hpp"
#include "config/time_step.hpp"

namespace cardio::pipeline {

enum class MaterialModel { isotropic, transversely_isotropic };
enum class BlockElement { bourguignon_cani, baudet_cube };
enum class SolverMode { quasi_static, dynamic };

struct MaterialParams {
  MaterialModel model = MaterialModel::isotropic;
  mechanics::ElasticConstants constants;
  double density = 1.06;  ///< [mg/mm^3]
  mechanics::AxisLaw::Kind law = mechanics::AxisLaw::Kind::linear;
  std::array<double, 3> exponent{0, 0, 0};  ///< b_f, b_s, b_n of the exponential law
};

struct ElementParams {
  BlockElement type = BlockElement::bourguignon_cani;
  double radial_share = 0.0;
  double hourglass_factor = 1.0;  ///< default 1 (B&C), 0.05 (Baudet)
  bool volume_terms = true;
  bool corrective_forces = true;  ///< Baudet's eq. 9 forces
  double damping_time = 0.0;      ///< [ms]
};

enum class ExperimentKind { elongation, shear, inflation, cantilever };

struct ExperimentParams {
  ExperimentKind kind = ExperimentKind::elongation;
  int axis = 0;           ///< elongation: pulled axis; shear: displacement direction
  int shear_normal = 2;   ///< shear: axis along which the displacement grows
  bool traction = false;  ///< elongation: traction (true) or displacement (false) control
  double strain = 0.01;   ///< elongation (displacement control) / shear: applied strain
  double stress = 0.0;    ///< elongation (traction control) [kPa]
  double pressure = 0.0;  ///< inflation: pressure on every face [kPa] (> 0 compresses)
  Eigen::Vector3d gravity{0, 0, -units::kStandardGravity};  ///< cantilever [mm/ms^2]
};

struct SolverParams {
  SolverMode mode = SolverMode::quasi_static;
  mechanics::Scheme scheme = mechanics::Scheme::verlet;
  TimeStepParams time_step;  ///< dt, dt_safety, force_dt (time_step.hpp)
  int load_steps = 1;
  double residual_tol = 1e-8;
  long max_iterations = 2000000;
  double t_end = 0.0;      ///< dynamic: simulated time [ms]
  double ramp_time = 0.0;  ///< dynamic: load ramp duration [ms]
};

struct RunConfig {
  std::string name;
  mechanics::BlockSpec block;
  mechanics::FibreField fibres;
  MaterialParams material;
  ElementParams element;
  ExperimentParams experiment;
  SolverParams solver;
  bool write_vtu = true;
};

/// Parse and validate a whole run config (every key checked; unknown keys rejected).
RunConfig parse_run_config(config::Document& doc);

/// Load a file, apply --set overrides, parse; returns the config and the resolved YAML text.
RunConfig load_run_config(const std::filesystem::path& file, const std::vector<std::string>& overrides,
                          std::string* resolved_yaml = nullptr);

}  // namespace cardio::pipeline
