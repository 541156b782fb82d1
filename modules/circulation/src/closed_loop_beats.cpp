// Beat statistics of the closed-loop circulation and the run to a periodic state.
#include "cardio/circulation/closed_loop_beats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "cardio/core/error.hpp"

namespace cardio::circulation {

namespace {

struct Range {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  void add(double v) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
};

struct BeatRanges {
  Range lv_volume, rv_volume, lv_pressure, rv_pressure, aortic, pulmonary;
  void sample(const ClosedLoop& m) {
    lv_volume.add(m.volume_mL(Compartment::left_ventricle));
    rv_volume.add(m.volume_mL(Compartment::right_ventricle));
    lv_pressure.add(m.pressure_mmHg(Compartment::left_ventricle));
    rv_pressure.add(m.pressure_mmHg(Compartment::right_ventricle));
    aortic.add(m.pressure_mmHg(Compartment::systemic_arteries));
    pulmonary.add(m.pressure_mmHg(Compartment::pulmonary_arteries));
  }
};

double relative_change(double previous, double last) { return std::abs(last - previous) / previous; }

}  // namespace

ClosedLoopBeat run_beat(ClosedLoop& model, double dt_ms, int index) {
  CARDIO_CHECK(std::isfinite(dt_ms) && dt_ms > 0, "closed-loop beat step dt = " << dt_ms << " ms: expected > 0");
  const double period = model.params().period_ms;
  const double start = model.time_ms(), end = start + period;
  BeatRanges r;
  r.sample(model);
  const auto n_steps = static_cast<long>(std::ceil(period / dt_ms - 1e-9));
  for (long n = 1; n <= n_steps; ++n) {
    model.step(n == n_steps ? end - model.time_ms() : dt_ms);
    r.sample(model);
  }
  ClosedLoopBeat b;
  b.index = index;
  b.start_ms = start;
  b.lv_edv_mL = r.lv_volume.hi;
  b.lv_esv_mL = r.lv_volume.lo;
  b.lv_ef = (b.lv_edv_mL - b.lv_esv_mL) / b.lv_edv_mL;
  b.rv_edv_mL = r.rv_volume.hi;
  b.rv_esv_mL = r.rv_volume.lo;
  b.rv_ef = (b.rv_edv_mL - b.rv_esv_mL) / b.rv_edv_mL;
  b.lv_peak_pressure_mmHg = r.lv_pressure.hi;
  b.rv_peak_pressure_mmHg = r.rv_pressure.hi;
  b.aortic_systolic_mmHg = r.aortic.hi;
  b.aortic_diastolic_mmHg = r.aortic.lo;
  b.pulmonary_systolic_mmHg = r.pulmonary.hi;
  b.pulmonary_diastolic_mmHg = r.pulmonary.lo;
  b.cardiac_output_L_per_min = (b.lv_edv_mL - b.lv_esv_mL) / period * 60.0;  // mL/ms = L/s
  return b;
}

PeriodicRun run_until_periodic(ClosedLoop& model, double dt_ms, double tolerance, int max_beats) {
  CARDIO_CHECK(tolerance > 0 && tolerance < 1,
               "closed-loop periodicity tolerance = " << tolerance << ": expected a value in (0, 1)");
  CARDIO_CHECK(max_beats >= 2, "closed-loop max_beats = " << max_beats << ": expected >= 2");
  PeriodicRun run;
  run.edv_change = std::numeric_limits<double>::quiet_NaN();
  for (int k = 1; k <= max_beats; ++k) {
    run.beats.push_back(run_beat(model, dt_ms, k));
    if (k < 2) continue;
    const ClosedLoopBeat& prev = run.beats[run.beats.size() - 2];
    const ClosedLoopBeat& last = run.beats.back();
    run.edv_change =
        std::max(relative_change(prev.lv_edv_mL, last.lv_edv_mL), relative_change(prev.rv_edv_mL, last.rv_edv_mL));
    if (run.edv_change < tolerance) {
      run.converged = true;
      break;
    }
  }
  return run;
}

}  // namespace cardio::circulation
