#pragma once
/// @file heart_config.hpp
/// The simulation sections of a heart config (after geometry/fibres/tissue of mesh_config.hpp):
/// `material` (Guccione myocardium), `active`, `boundary`, `loads`, `simulation`, `probes`.
/// Parsed in one place (heart_config.cpp); docs/config.md lists the keys.
#include <Eigen/Core>
#include <optional>
#include <string>
#include <vector>

#include "mesh_config.hpp"

namespace cardio::pipeline {

/// Boundary quads chosen by surface tag (e.g. "base", "endocardium_lv") or by a plane
/// (the boundary quads whose four nodes lie on it, within 1e-6 of the voxel size).
struct SurfaceSelector {
  std::string tag;                       ///< empty: use the plane
  Eigen::Vector3d point{0, 0, 0};        ///< [mm]
  Eigen::Vector3d normal{0, 0, 1};
  std::string where;                     ///< config location, for errors
  std::string describe() const;
};

struct GuccioneParams {
  double C = 2.0;                        ///< [kPa]
  double b_f = 8, b_t = 2, b_fs = 4;
  double bulk = 0;                       ///< [kPa] near-incompressibility penalty kappa; 0 = law default
  double hourglass_factor = 1.0;         ///< hourglass modulus / smallest small-strain Young's modulus
};

struct PressureSpec {
  SurfaceSelector surface;
  double pressure = 0;                   ///< [kPa], > 0 pushes into the tissue (inflates a cavity)
};

struct Probe {
  std::string name;
  Eigen::Vector3d point{0, 0, 0};        ///< reference position [mm]
  std::optional<double> reference_z;     ///< published final z [mm], for the error in summary.json
};

struct HeartSimulation {
  GuccioneParams material;
  double active_tension = 0;             ///< Ta [kPa] (quasi-static: reached at the last load step)
  std::vector<SurfaceSelector> fixed;    ///< nodes on these surfaces fixed
  std::vector<SurfaceSelector> sliding;  ///< nodes on these planes keep their normal coordinate
  std::vector<PressureSpec> pressures;
  std::string mode = "quasi_static";
  int load_steps = 10;
  double residual_tol = 1e-6;
  long max_iterations = 2000000;
  std::vector<Probe> probes;
};

struct HeartConfig {
  MeshConfig mesh;
  std::optional<HeartSimulation> simulation;  ///< absent: mesh only
};

/// Parse a heart config: geometry/fibres/tissue and, if present, the simulation sections.
HeartConfig parse_heart_config(config::Document& doc);

}  // namespace cardio::pipeline
