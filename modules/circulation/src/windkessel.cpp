#include "cardio/circulation/windkessel.hpp"

#include <cmath>

#include "cardio/core/error.hpp"

namespace cardio::circulation {

void WindkesselParams::validate(std::string_view where) const {
  const auto key = [&](const char* name) { return std::string(where) + "." + name; };
  if (elements != 2 && elements != 3)
    CARDIO_FAIL(key("elements") << " = " << elements << ": expected 2 (R_p, C) or 3 (Z_c, R_p, C)");
  if (!(std::isfinite(peripheral_resistance) && peripheral_resistance > 0))
    CARDIO_FAIL(key("peripheral_resistance")
                << " = " << peripheral_resistance << " mmHg ms/mL: expected a finite value > 0");
  if (!(std::isfinite(compliance) && compliance > 0))
    CARDIO_FAIL(key("compliance") << " = " << compliance << " mL/mmHg: expected a finite value > 0");
  if (!(std::isfinite(characteristic_impedance) && characteristic_impedance >= 0))
    CARDIO_FAIL(key("characteristic_impedance")
                << " = " << characteristic_impedance << " mmHg ms/mL: expected a finite value >= 0");
  if (elements == 2 && characteristic_impedance != 0)
    CARDIO_FAIL(key("characteristic_impedance") << " = " << characteristic_impedance
                                                << " mmHg ms/mL: expected 0 with elements = 2 (the 2-element "
                                                   "model has no characteristic impedance; use elements = 3)");
  if (!(venous_pressure >= 0 && venous_pressure < 100))
    CARDIO_FAIL(key("venous_pressure") << " = " << venous_pressure << " mmHg: expected a value in [0, 100)");
  if (!(initial_pressure >= 0 && initial_pressure < 300))
    CARDIO_FAIL(key("initial_pressure") << " = " << initial_pressure << " mmHg: expected a value in [0, 300)");
}

Windkessel::Windkessel(const WindkesselParams& params) : m_params(params), m_pressure(params.initial_pressure) {
  m_params.validate("windkessel");
}

void Windkessel::advance(double dt, double outflow) { advance_linear(dt, outflow, outflow); }

void Windkessel::advance_linear(double dt, double q0, double q1) {
  CARDIO_CHECK(dt >= 0 && std::isfinite(dt), "Windkessel step dt = " << dt << " ms: expected a finite value >= 0");
  CARDIO_CHECK(std::isfinite(q0) && std::isfinite(q1),
               "Windkessel outflow must be finite (got " << q0 << ", " << q1 << " mL/ms)");
  const double r = m_params.peripheral_resistance, tau = time_constant();
  const double slope = dt > 0 ? (q1 - q0) / dt : 0.0;
  // Particular solution of C P' = Q(s) - (P - P_v)/R for Q linear: P_v + R Q(s) - R tau Q'.
  const double p_begin = m_params.venous_pressure + r * q0 - r * tau * slope;
  const double p_end = m_params.venous_pressure + r * q1 - r * tau * slope;
  m_pressure = p_end + (m_pressure - p_begin) * std::exp(-dt / tau);
}

std::pair<double, double> Windkessel::end_of_step_pressure(double dt) const {
  const double e = std::exp(-dt / time_constant());
  const double one_minus_e = -std::expm1(-dt / time_constant());  // accurate for dt << tau
  const double a = m_params.venous_pressure * one_minus_e + m_pressure * e;
  const double b = m_params.peripheral_resistance * one_minus_e + impedance();
  return {a, b};
}

}  // namespace cardio::circulation
