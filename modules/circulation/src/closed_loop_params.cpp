// Parameters of the closed-loop circulation: the Regazzoni et al. 2022 set, validation, activation.
#include <cmath>
#include <numbers>
#include <string>

#include "cardio/circulation/closed_loop.hpp"
#include "cardio/core/error.hpp"

namespace cardio::circulation {

namespace {

// Timings are given as fractions of T_HB in the authors' code; here in ms.
ChamberParams chamber(double period, double e_active, double e_passive, double v0, double onset_fraction,
                      double contraction_fraction, double relaxation_fraction) {
  return {
      e_active, e_passive, v0, onset_fraction * period, contraction_fraction * period, relaxation_fraction * period};
}

// Paper units (mmHg s/mL, mmHg s^2/mL) to the module's (mmHg ms/mL, mmHg ms^2/mL).
VesselParams vessel(double r_s, double c, double l_s2) { return {r_s * 1e3, c, l_s2 * 1e6}; }

std::string key(std::string_view where, std::string_view part, const char* name) {
  return std::string(where) + "." + std::string(part) + "." + name;
}

void require_positive(double v, const std::string& k, const char* unit) {
  if (!(std::isfinite(v) && v > 0)) CARDIO_FAIL(k << " = " << v << " " << unit << ": expected a finite value > 0");
}

void validate_chamber(const ChamberParams& c, double period, std::string_view where, std::string_view part) {
  require_positive(c.active_elastance_mmHg_per_mL, key(where, part, "active_elastance_mmHg_per_mL"), "mmHg/mL");
  require_positive(c.passive_elastance_mmHg_per_mL, key(where, part, "passive_elastance_mmHg_per_mL"), "mmHg/mL");
  if (!(c.rest_volume_mL >= 0 && c.rest_volume_mL < 1000))
    CARDIO_FAIL(key(where, part, "rest_volume_mL")
                << " = " << c.rest_volume_mL << " mL: expected a value in [0, 1000)");
  if (!(c.contraction_onset_ms >= 0 && c.contraction_onset_ms < period))
    CARDIO_FAIL(key(where, part, "contraction_onset_ms")
                << " = " << c.contraction_onset_ms << " ms: expected a value in [0, period_ms = " << period << ")");
  require_positive(c.contraction_ms, key(where, part, "contraction_ms"), "ms");
  require_positive(c.relaxation_ms, key(where, part, "relaxation_ms"), "ms");
  if (!(c.contraction_ms + c.relaxation_ms <= period))
    CARDIO_FAIL(key(where, part, "relaxation_ms")
                << " = " << c.relaxation_ms << " ms: contraction_ms + relaxation_ms = "
                << c.contraction_ms + c.relaxation_ms << " ms, expected <= period_ms = " << period);
}

void validate_vessel(const VesselParams& v, std::string_view where, std::string_view part) {
  require_positive(v.resistance_mmHg_ms_per_mL, key(where, part, "resistance_mmHg_ms_per_mL"), "mmHg ms/mL");
  require_positive(v.compliance_mL_per_mmHg, key(where, part, "compliance_mL_per_mmHg"), "mL/mmHg");
  if (!(std::isfinite(v.inductance_mmHg_ms2_per_mL) && v.inductance_mmHg_ms2_per_mL >= 0))
    CARDIO_FAIL(key(where, part, "inductance_mmHg_ms2_per_mL")
                << " = " << v.inductance_mmHg_ms2_per_mL << " mmHg ms^2/mL: expected a finite value >= 0");
}

}  // namespace

ClosedLoopParams ClosedLoopParams::regazzoni2022(double period_ms) {
  ClosedLoopParams p;
  p.period_ms = period_ms;
  const double T = period_ms;
  p.left_atrium = chamber(T, 0.07, 0.09, 4.0, 0.80, 0.17, 0.17);
  p.right_atrium = chamber(T, 0.06, 0.07, 4.0, 0.80, 0.17, 0.17);
  p.left_ventricle = chamber(T, 2.75, 0.08, 5.0, 0.00, 0.34, 0.17);
  p.right_ventricle = chamber(T, 0.55, 0.05, 10.0, 0.00, 0.34, 0.17);
  p.valves = {0.0075e3, 75006.2e3};
  p.systemic_arteries = vessel(0.8, 1.2, 5e-3);
  p.systemic_veins = vessel(0.26, 60.0, 5e-4);
  p.pulmonary_arteries = vessel(0.1625, 10.0, 5e-4);
  p.pulmonary_veins = vessel(0.1625, 16.0, 5e-4);
  return p;
}

void ClosedLoopParams::validate(std::string_view where) const {
  if (!(period_ms >= 200 && period_ms <= 3000))
    CARDIO_FAIL(where << ".period_ms = " << period_ms << " ms: expected a value in [200, 3000] (20-300 bpm)");
  validate_chamber(left_atrium, period_ms, where, "left_atrium");
  validate_chamber(left_ventricle, period_ms, where, "left_ventricle");
  validate_chamber(right_atrium, period_ms, where, "right_atrium");
  validate_chamber(right_ventricle, period_ms, where, "right_ventricle");
  require_positive(valves.open_resistance_mmHg_ms_per_mL, key(where, "valves", "open_resistance_mmHg_ms_per_mL"),
                   "mmHg ms/mL");
  if (!(std::isfinite(valves.closed_resistance_mmHg_ms_per_mL) &&
        valves.closed_resistance_mmHg_ms_per_mL > valves.open_resistance_mmHg_ms_per_mL))
    CARDIO_FAIL(key(where, "valves", "closed_resistance_mmHg_ms_per_mL")
                << " = " << valves.closed_resistance_mmHg_ms_per_mL
                << " mmHg ms/mL: expected a finite value > open_resistance_mmHg_ms_per_mL = "
                << valves.open_resistance_mmHg_ms_per_mL);
  validate_vessel(systemic_arteries, where, "systemic_arteries");
  validate_vessel(systemic_veins, where, "systemic_veins");
  validate_vessel(pulmonary_arteries, where, "pulmonary_arteries");
  validate_vessel(pulmonary_veins, where, "pulmonary_veins");
}

double chamber_activation(const ChamberParams& c, double t_ms, double period_ms) {
  double tau = std::fmod(t_ms - c.contraction_onset_ms, period_ms);
  if (tau < 0) tau += period_ms;
  if (tau < c.contraction_ms) return 0.5 * (1 - std::cos(std::numbers::pi * tau / c.contraction_ms));
  const double relax = tau - c.contraction_ms;
  if (relax < c.relaxation_ms) return 0.5 * (1 + std::cos(std::numbers::pi * relax / c.relaxation_ms));
  return 0.0;
}

double chamber_elastance(const ChamberParams& c, double t_ms, double period_ms) {
  return c.passive_elastance_mmHg_per_mL + c.active_elastance_mmHg_per_mL * chamber_activation(c, t_ms, period_ms);
}

ClosedLoopState ClosedLoopState::regazzoni2022(const ClosedLoopParams& p) {
  ClosedLoopState s;
  s.volume_mL = {65.0,
                 120.0,
                 65.0,
                 145.0,
                 p.systemic_arteries.compliance_mL_per_mmHg * 80.0,
                 p.systemic_veins.compliance_mL_per_mmHg * 30.0,
                 p.pulmonary_arteries.compliance_mL_per_mmHg * 35.0,
                 p.pulmonary_veins.compliance_mL_per_mmHg * 24.0};
  return s;
}

std::string_view compartment_name(Compartment c) {
  static constexpr std::array<std::string_view, 8> names{"left_atrium",        "left_ventricle",    "right_atrium",
                                                         "right_ventricle",    "systemic_arteries", "systemic_veins",
                                                         "pulmonary_arteries", "pulmonary_veins"};
  return names[static_cast<int>(c)];
}

std::string_view valve_name(Valve v) {
  static constexpr std::array<std::string_view, 4> names{"mitral", "aortic", "tricuspid", "pulmonary"};
  return names[static_cast<int>(v)];
}

}  // namespace cardio::circulation
