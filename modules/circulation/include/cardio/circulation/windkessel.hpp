#pragma once
/// @file windkessel.hpp
/// Lumped arterial afterload: the 2-element (R_p, C) and 3-element (Z_c, R_p, C) Windkessel
/// (Westerhof, Lankhaar & Westerhof 2009, "The arterial Windkessel", Med Biol Eng Comput
/// 47:131-141, eqs. for the WK2 and WK3). Circulation units: pressure mmHg, volume mL, time ms,
/// flow mL/ms, resistance mmHg*ms/mL, compliance mL/mmHg.
///
///   C dP/dt = Q - (P - P_v) / R_p        (P: pressure over the compliance, "arterial" pressure)
///   p_cav   = P + Z_c Q                  (cavity / aortic-root pressure while the valve is open)
///
/// Q is the cavity outflow, Q = -dV/dt. With Q constant over a step the ODE is integrated
/// exactly: P(t + dt) = P_inf + (P(t) - P_inf) e^{-dt/tau}, P_inf = P_v + R_p Q, tau = R_p C;
/// with Q linear in the step (Q0 -> Q1) the particular solution P_v + R_p Q(s) - R_p tau Q' makes
/// it exact as well. No stability limit on dt.
#include <string>
#include <string_view>
#include <utility>

namespace cardio::circulation {

/// Parameters (defaults: an adult human systemic circulation, order of the values in Westerhof
/// et al. 2009: R_p ~ 1 mmHg s/mL, C ~ 1-2 mL/mmHg, Z_c ~ 0.03-0.1 mmHg s/mL).
struct WindkesselParams {
  int elements = 3;                        ///< 2 or 3
  double peripheral_resistance = 1000.0;   ///< R_p [mmHg ms/mL], > 0
  double compliance = 1.5;                 ///< C [mL/mmHg], > 0
  double characteristic_impedance = 50.0;  ///< Z_c [mmHg ms/mL], >= 0; must be 0 for 2 elements
  double venous_pressure = 0.0;            ///< P_v, distal pressure [mmHg], in [0, 100)
  double initial_pressure = 80.0;          ///< P(0) [mmHg], in [0, 300)

  /// Throws cardio::Error naming `where`.key, the value and the expected range.
  void validate(std::string_view where = "windkessel") const;
};

class Windkessel {
 public:
  /// Validates the parameters (as validate("windkessel")).
  explicit Windkessel(const WindkesselParams& params);

  const WindkesselParams& params() const { return m_params; }
  /// Pressure over the compliance P [mmHg]: the arterial pressure the aortic valve opens against.
  double pressure() const { return m_pressure; }
  void set_pressure(double p_mmHg) { m_pressure = p_mmHg; }
  /// tau = R_p C [ms].
  double time_constant() const { return m_params.peripheral_resistance * m_params.compliance; }
  /// Z_c (0 for the 2-element model) [mmHg ms/mL].
  double impedance() const { return m_params.elements == 3 ? m_params.characteristic_impedance : 0.0; }
  /// Cavity pressure for an outflow Q [mL/ms] with the valve open: P + Z_c Q [mmHg].
  double cavity_pressure(double outflow) const { return m_pressure + impedance() * outflow; }

  /// Advance by dt [ms] with a constant outflow Q [mL/ms] (exact). Q = 0 with the valve closed.
  void advance(double dt, double outflow);
  /// Advance by dt with an outflow linear from Q0 to Q1 over the step (exact).
  void advance_linear(double dt, double outflow_begin, double outflow_end);
  /// End-of-step cavity pressure as an affine function of a constant outflow Q over the next
  /// step dt, from the exact update: p_cav(t + dt) = first + second * Q [mmHg, mmHg ms/mL].
  /// second = R_p (1 - e^{-dt/tau}) + Z_c > 0. Used by the implicit (monolithic) coupling.
  std::pair<double, double> end_of_step_pressure(double dt) const;

 private:
  WindkesselParams m_params;
  double m_pressure = 0;
};

}  // namespace cardio::circulation
