#pragma once
/// @file passive_calibration.hpp
/// The passive stiffness (Guccione C) fitted so that the passive inflation of a cavity follows the
/// end-diastolic pressure-volume relation of Klotz et al. 2006 (Am J Physiol Heart Circ Physiol
/// 291:H403) through its (EDV, EDP): with V0 the unloaded volume, An = 27.78 mmHg, Bn = 2.76,
///     V30 = V0 + (EDV - V0) / (EDP / An)^(1/Bn),   P(V) = A (V - V0)^B
/// through (EDV, EDP) and (V30, 30 mmHg). Normalised, (V - V0) / (EDV - V0) = (P / EDP)^(1/B)
/// depends on EDP only: at a fixed unloaded geometry, C is the root (secant / regula falsi on
/// log C) of the mean difference between the model's normalised curve and that one at
/// passive_calibration.points pressures. Unloading depends on C, so unloading and fitting
/// alternate until C changes by less than passive_calibration.tolerance (docs/heartbeat.md,
/// "Unloaded reference and passive calibration").
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <vector>

#include "cardio/meshing/voxel_mesh.hpp"
#include "config/heart_config.hpp"
#include "heart/unloading.hpp"

namespace cardio::pipeline {

/// Klotz et al. 2006 normalisation constants.
inline constexpr double kKlotzAn_mmHg = 27.78, kKlotzBn = 2.76;

/// P = A (V - V0)^B [mmHg, mL].
struct KlotzCurve {
  double V0_mL = 0, A_mmHg = 0, B = 0;
  double pressure_mmHg(double V_mL) const;
  double volume_mL(double P_mmHg) const;
};

/// The Klotz curve through (V0, 0), (EDV, EDP) and (V30, 30 mmHg). Throws cardio::Error unless
/// EDV > V0 and 0 < EDP < An.
KlotzCurve klotz_curve(double V0_mL, double EDV_mL, double EDP_mmHg);

/// A cavity's passive inflation curve: volumes [mL] at pressures [mmHg] (the first point is the
/// unloaded volume at 0 mmHg).
struct PressureVolumeCurve {
  std::vector<double> pressure_mmHg, volume_mL;
  int newton_iterations = 0;  ///< what the inflation took (failed increments included)
};

/// The passive inflation curve of `cavity` of `mesh` (rest = unloaded) with Guccione C = C_kPa,
/// every cavity of sim.unloading at the same fraction of its end-diastolic pressure, at the
/// fractions 0, 1/points, ..., 1. Ex vivo, as Klotz et al. 2006 measured explanted hearts: without
/// sim.pericardium (the base's support stays). Empty when the inflation does not converge.
/// `log`: Newton's iterations, with unloading.newton_log.
PressureVolumeCurve passive_curve(const HeartSimulation& sim, const meshing::VoxelMesh& mesh, const std::string& cavity,
                                  int points, double C_kPa, std::ostream* log = nullptr);

/// The target of a fit: the normalised volume (V - V0) / (V_EDP - V0) at P / EDP in [0, 1].
using NormalisedCurve = std::function<double(double pressure_fraction)>;

struct StiffnessFit {
  double C_kPa = 0;
  PressureVolumeCurve curve;  ///< the model's at C_kPa
  int evaluations = 0;        ///< inflation curves computed
  double mismatch = 0;        ///< mean normalised difference model - target at C_kPa
};

/// The mismatch of the model's normalised curve at log C (nullopt: that C did not inflate).
using MismatchAt = std::function<std::optional<double>(double log_C)>;

/// Two samples of the mismatch with opposite signs, or where the search stopped.
struct RootBracket {
  double log_a = 0, g_a = 0;            ///< the last sample on the start's side of the root
  std::optional<double> log_b, g_b;     ///< the first sample past it (none: not bracketed)
  bool softer_did_not_inflate = false;  ///< a sample failed to inflate on the way
};

/// Walks from (log_start, g_start) by `step` (log 2 or -log 2: C doubled or halved) towards the
/// root, within [log_lo, log_hi]. The first probe aims 20 % past the root along a typical slope
/// (|g| 0.05 per unit of log C), between a sixteenth of the step and the step, so that a start near
/// the root is not followed by a sample a factor 2 away. From the second sample on, the step aims 20 % past the
/// secant's root (between a quarter of the step and two steps); a C that does not inflate halves the step, up to 4
/// times. Very soft hearts fail to inflate just past the root, so halving C blindly stops there.
RootBracket bracket_root(const MismatchAt& mismatch, double log_start, double g_start, double step, double log_lo,
                         double log_hi);

/// C (between sim.passive_calibration.min_scale and max_scale times sim.material.law.C) whose
/// normalised passive curve of `cavity` on the fixed reference `mesh` follows `target`. Throws
/// cardio::Error when no C in that range brackets the target.
StiffnessFit fit_stiffness(const HeartSimulation& sim, const meshing::VoxelMesh& mesh, const std::string& cavity,
                           const NormalisedCurve& target, std::ostream* log);

struct CalibrationResult {
  double C_kPa = 0;
  UnloadingResult unloaded;          ///< the reference unloaded with C_kPa
  nlohmann::json report;             ///< passive_calibration.json
  PressureVolumeCurve model, klotz;  ///< at the end: the model's curve and Klotz's at the same pressures
};

/// Alternate unloading (unloading.hpp) and fit_stiffness to the Klotz curve of the cavity's EDP,
/// from sim.material.law.C, until C changes by less than passive_calibration.tolerance; then
/// unload once more with the final C. EDV is the cavity's volume in `image`.
CalibrationResult calibrate_passive_stiffness(const HeartSimulation& sim, const meshing::VoxelMesh& image,
                                              std::ostream* log);

/// klotz_fit.csv (pressure_mmHg, volume_klotz_mL, volume_model_mL) and passive_calibration.json.
void write_calibration_outputs(const std::filesystem::path& outdir, const CalibrationResult& result);

}  // namespace cardio::pipeline
