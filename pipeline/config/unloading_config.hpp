#pragma once
/// @file unloading_config.hpp
/// The `unloading` and `passive_calibration` sections of a heart config (docs/config.md): the
/// stress-free reference recovered from a loaded (end-diastolic) geometry by the backward-
/// displacement fixed point, and the Guccione C fitted to the Klotz et al. 2006 EDPVR.
/// Parsed here, apart from heart_config.cpp; the stages are heart/unloading.hpp and
/// heart/passive_calibration.hpp.
#include <string>
#include <vector>

#include "cardio/config/config.hpp"

namespace cardio::pipeline {

/// The pressure a cavity holds in the image (end-diastole), applied on its endocardium.
struct CavityPressure {
  std::string cavity;
  double pressure = 0;  ///< [kPa]
};

struct UnloadingParams {
  bool enabled = false;
  std::vector<CavityPressure> end_diastolic_pressures;
  double tolerance_voxels = 0.1;    ///< stop when the RMS surface mismatch <= this x the voxel size
  int max_iterations = 20;          ///< fixed-point iterations (inflations)
  double relaxation = 1.0;          ///< first relaxation factor of the update X += w (x_image - x(X))
  bool aitken = true;               ///< adapt w by Aitken's delta-squared (Irons and Tuck 1969)
  int pressure_steps = 1;           ///< unload at 1/this, 2/this, ..., all of the pressures in turn
  int load_steps = 2;               ///< an inflation from rest starts at 1/this of the load, then doubles
  bool newton_log = false;          ///< log every Newton iteration of the inflations (run.log)
  bool relaxation_fallback = true;  ///< where Newton stalls, dynamic relaxation carries the load on
  std::string where;                ///< config location, for errors
  double pressure_of(const std::string& cavity) const;
};

struct PassiveCalibrationParams {
  bool enabled = false;
  std::string cavity = "lv";                ///< the cavity whose inflation follows the Klotz curve
  int points = 6;                           ///< pressures EDP/points, 2 EDP/points, ..., EDP
  int max_evaluations = 12;                 ///< unloadings (each with its passive curve) of the search
  double tolerance = 0.01;                  ///< stop when C is known to this fraction
  double min_scale = 0.05, max_scale = 20;  ///< the bracket of C / material.C searched
  std::string where;
};

/// `unloading` of the config root (disabled and nothing read when the section is absent).
UnloadingParams parse_unloading(const config::Node& root);

/// `passive_calibration` of the config root; needs an enabled `unloading` that gives the
/// cavity's end-diastolic pressure.
PassiveCalibrationParams parse_passive_calibration(const config::Node& root, const UnloadingParams& unloading);

}  // namespace cardio::pipeline
