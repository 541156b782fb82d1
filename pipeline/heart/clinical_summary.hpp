#pragma once
/// @file clinical_summary.hpp
/// What a beat's summary.json says in the clinic's terms (docs/analysis.md, "Clinical measures"):
/// per cavity haemodynamics of the last complete beat, the LV's global strains and twist, and the
/// comparison of each with its normal adult range (clinical_ranges.hpp).
#include <nlohmann/json.hpp>

#include "cardio/circulation/cavity_coupling.hpp"
#include "heart/beat_observers.hpp"

namespace cardio::pipeline {

/// Reads the summary's cavities, heart.wall_thickening, analysis.peak_strain.lv_endocardial (GLS,
/// GCS), analysis.peak_strain.global (GRS) and analysis.twist, and adds:
/// - cavities[c].haemodynamics: peak_pressure_mmHg, dPdt_max/min_mmHg_per_s, stroke_work_mmHg_mL,
///   heart_rate_bpm, cardiac_output_L_per_min, arterial_systolic/diastolic_pressure_mmHg, window_ms
///   (cavities without a complete beat get none);
/// - heart: GLS_percent, GCS_percent, GRS_percent, wall_thickening_percent, twist_deg,
///   torsion_deg_per_cm (those that were measured), and strain_definition: what GLS, GCS and GRS are;
/// - clinical_comparison: [{quantity, value, unit, normal_range [lo, hi], source, inside}] for each
///   range of kClinicalRanges with a value (RV entries only with a cavity named "rv").
/// `lv` indexes the LV in `cavities`; `period_ms` is the heartbeat period.
void add_clinical_measures(nlohmann::json& summary, const circulation::CavityCoupling& cavities, std::size_t lv,
                           double period_ms, const TimeSeriesRecorder& series);

}  // namespace cardio::pipeline
