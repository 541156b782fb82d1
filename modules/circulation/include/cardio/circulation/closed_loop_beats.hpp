#pragma once
/// @file closed_loop_beats.hpp
/// Beat statistics of the closed-loop circulation and the run to a periodic state: beat after beat
/// (one heartbeat period each) until the end-diastolic volumes of both ventricles change by less than
/// a tolerance from one beat to the next (issue 16: < 1 %).
#include <vector>

#include "cardio/circulation/closed_loop.hpp"

namespace cardio::circulation {

/// One beat, sampled at the end of every step. EDV / ESV are the largest / smallest volume of the
/// beat, the arterial pressures the largest / smallest over the beat.
struct ClosedLoopBeat {
  int index = 0;  ///< 1, 2, ...
  double start_ms = 0;
  double lv_edv_mL = 0, lv_esv_mL = 0, lv_ef = 0;  ///< EF = (EDV - ESV) / EDV
  double rv_edv_mL = 0, rv_esv_mL = 0, rv_ef = 0;
  double lv_peak_pressure_mmHg = 0, rv_peak_pressure_mmHg = 0;
  double aortic_systolic_mmHg = 0, aortic_diastolic_mmHg = 0;  ///< systemic arterial pressure
  double pulmonary_systolic_mmHg = 0, pulmonary_diastolic_mmHg = 0;
  double cardiac_output_L_per_min = 0;  ///< LV stroke volume / period
};

/// Run one beat (period_ms from the current time) of the 0-D model with steps of dt [ms] (the last
/// one shortened to end on the period).
ClosedLoopBeat run_beat(ClosedLoop& model, double dt_ms, int index);

struct PeriodicRun {
  std::vector<ClosedLoopBeat> beats;  ///< all beats run
  bool converged = false;             ///< the last two beats' LV and RV EDV differ by < tolerance
  /// max over LV, RV of |EDV_last - EDV_previous| / EDV_previous (NaN with fewer than two beats).
  double edv_change = 0;
};

/// Beat after beat until converged or max_beats; the number of beats is beats.size().
/// tolerance in (0, 1), max_beats >= 2.
PeriodicRun run_until_periodic(ClosedLoop& model, double dt_ms, double tolerance = 0.01, int max_beats = 100);

}  // namespace cardio::circulation
