#include "config/unloading_config.hpp"

#include <algorithm>

#include "cardio/core/error.hpp"

namespace cardio::pipeline {

using config::Node;
using config::Range;
using units::Dimension;

double UnloadingParams::pressure_of(const std::string& cavity) const {
  for (const auto& p : end_diastolic_pressures)
    if (p.cavity == cavity) return p.pressure;
  CARDIO_FAIL(where << ": unloading.end_diastolic_pressures has no pressure for cavity '" << cavity << "'");
}

UnloadingParams parse_unloading(const Node& root) {
  UnloadingParams u;
  if (!root.has("unloading")) return u;
  const Node n = root.child("unloading");
  u.where = n.where();
  u.enabled = n.boolean("enabled", true);
  for (const std::string& cavity : n.keys("end_diastolic_pressures")) {
    // 30 mmHg: far above any end-diastolic pressure (normal 5-12 mmHg).
    const double p = n.child("end_diastolic_pressures")
                         .quantity(cavity, Dimension::pressure, std::nullopt, Range::closed(0, 30 * units::kMmHgInKPa));
    u.end_diastolic_pressures.push_back({cavity, p});
  }
  if (u.enabled && u.end_diastolic_pressures.empty())
    n.fail("end_diastolic_pressures", "expected a map of cavity name to pressure, e.g. {lv: 8 mmHg, rv: 4 mmHg}");
  u.tolerance_voxels = n.number("tolerance_voxels", 0.1, Range::open(0, 10));
  u.max_iterations = int(n.integer("max_iterations", 20, 1, 1000));
  u.relaxation = n.number("relaxation", 1.0, Range::closed(0.05, 1.5));
  u.aitken = n.choice("acceleration", {"aitken", "none"}, "aitken") == "aitken";
  u.load_steps = int(n.integer("load_steps", 2, 1, 1000));
  u.pressure_steps = int(n.integer("pressure_steps", 1, 1, 100));
  u.newton_log = n.boolean("newton_log", false);
  u.relaxation_fallback =
      n.choice("inflation_fallback", {"dynamic_relaxation", "none"}, "dynamic_relaxation") == "dynamic_relaxation";
  return u;
}

PassiveCalibrationParams parse_passive_calibration(const Node& root, const UnloadingParams& unloading) {
  PassiveCalibrationParams c;
  if (!root.has("passive_calibration")) return c;
  const Node n = root.child("passive_calibration");
  c.where = n.where();
  c.enabled = n.boolean("enabled", true);
  n.choice("target", {"klotz"}, "klotz");
  c.cavity = n.text("cavity", "lv");
  c.points = int(n.integer("points", 6, 2, 50));
  if (n.has("max_rounds"))
    n.fail("max_rounds",
           "renamed max_evaluations: the calibration is one root search, each evaluation an unloading and a "
           "passive curve at the same C (docs/heartbeat.md)");
  c.max_evaluations = int(n.integer("max_evaluations", 12, 2, 100));
  c.tolerance = n.number("tolerance", 0.01, Range::open(0, 1));
  if (!c.enabled) return c;
  if (!unloading.enabled)
    n.fail("",
           "the calibration inflates the unloaded heart: enable the `unloading` section (with the "
           "end-diastolic pressures) as well");
  const auto& p = unloading.end_diastolic_pressures;
  const auto it = std::find_if(p.begin(), p.end(), [&](const CavityPressure& q) { return q.cavity == c.cavity; });
  if (it == p.end()) n.fail("cavity", "expected a cavity named in unloading.end_diastolic_pressures");
  // Klotz's normalised curve has its pivot at An = 27.78 mmHg: the fit through (EDV, EDP) is
  // undefined there and meant for end-diastolic pressures well below it.
  if (!(it->pressure > 0 && it->pressure <= 22 * units::kMmHgInKPa))
    n.fail("cavity", "the Klotz curve needs an end-diastolic pressure in (0, 22] mmHg for this cavity");
  return c;
}

}  // namespace cardio::pipeline
