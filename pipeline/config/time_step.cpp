#include "config/time_step.hpp"

#include "cardio/core/error.hpp"

namespace cardio::pipeline {

using config::Range;
using units::Dimension;

double TimeStepParams::choose(double dt_stable) const {
  if (!dt) return safety * dt_stable;
  // A step above the estimate blows up within a few steps (or, in dynamic relaxation, diverges).
  if (*dt > dt_stable && !force)
    CARDIO_FAIL(where << ": " << *dt << " ms is above the stability estimate " << dt_stable
                      << " ms of this model at rest; use a smaller dt (or leave it auto: the estimate x " << section
                      << ".dt_safety), or set " << section << ".force_dt: true to run anyway");
  return *dt;
}

TimeStepParams parse_time_step(const config::Node& n) {
  TimeStepParams t;
  t.section = n.path();
  t.where = n.where_of("dt") + ": " + n.key_path("dt");
  t.dt = n.quantity_or_auto("dt", Dimension::time, Range::positive());
  t.safety = n.number("dt_safety", 0.5, Range{0.0, 1.0, true, false});
  t.force = n.boolean("force_dt", false);
  return t;
}

}  // namespace cardio::pipeline
