#pragma once
/// @file closed_loop.hpp
/// A closed-loop lumped (0-D) circulation: the model of Regazzoni, Salvador, Africa, Fedele, Dedè
/// & Quarteroni 2022, "A cardiac electromechanics model coupled with a lumped-parameter model for
/// closed-loop blood circulation", J Comput Phys 457:111083 (preprint arXiv:2011.15040).
/// Units: pressure mmHg, volume mL, time ms, flow mL/ms (1 mL/ms = 60 L/min).
///
///   chambers (LA, LV, RA, RV)  p = E(t) (V - V0),  E(t) = E_B + E_A e(t)   (time-varying elastance)
///     e(t) = (1 - cos(pi tau / T_C)) / 2          0 <= tau < T_C,          tau = (t - t_C) mod T_HB
///          = (1 + cos(pi (tau - T_C) / T_R)) / 2  0 <= tau - T_C < T_R,    0 otherwise
///   valves (mitral LA->LV, aortic LV->SA, tricuspid RA->RV, pulmonary RV->PA): Q = (p_up - p_down)/R,
///     R = R_min if p_up > p_down else R_max (a non-ideal diode, sharp switching)
///   vessels (systemic / pulmonary arteries and veins), each an RLC compartment with volume V = C p:
///     dV/dt = Q_in - Q_out,  L dQ_out/dt = p - p_downstream - R Q_out
///
/// Default parameters: `regazzoni2022()` (values, units and source in docs/heartbeat.md,
/// "Closed-loop circulation (module)"). The heart beats with T_HB = 800 ms (75 bpm).
///
/// Time integration: backward Euler over the whole loop. With the valve states fixed the step is a
/// linear 12x12 system (8 volumes, 4 inductor flows); the states are found by an active-set
/// iteration (open where p_up > p_down at the solution). No stability limit on dt (tested 0.01-1 ms).
/// The 8 branch flows are computed once per step and every volume is updated by inflow - outflow
/// with them, so the total blood volume is conserved up to round-off, whatever the solver's tolerance.
///
/// The ventricles are either the paper's 0-D elastances (`step`) or driven by the caller
/// (`step_with_pressures`: the pressures of a 3-D model at the end of the step; the model returns the
/// valve flows, dV_LV/dt = Q_mitral - Q_aortic, dV_RV/dt = Q_tricuspid - Q_pulmonary). `trial_step`
/// gives those flows and their derivative with respect to the ventricular pressures without
/// advancing, for an implicit 3-D/0-D coupling in which the 3-D cavity volume is constrained to
/// V^n + dt net(p) with the pressure p as the multiplier (as Regazzoni et al. 2022 do).
#include <Eigen/Core>
#include <array>
#include <string_view>

#include "cardio/core/binary.hpp"

namespace cardio::circulation {

/// A time-varying elastance chamber (atrium or 0-D ventricle).
struct ChamberParams {
  double active_elastance_mmHg_per_mL = 0;   ///< E_A, > 0
  double passive_elastance_mmHg_per_mL = 0;  ///< E_B, > 0
  double rest_volume_mL = 0;                 ///< V0, in [0, 1000)
  double contraction_onset_ms = 0;           ///< t_C, in [0, period)
  double contraction_ms = 0;                 ///< T_C, > 0
  double relaxation_ms = 0;                  ///< T_R, > 0 with T_C + T_R <= period
};

/// Activation e(t) in [0, 1] of a chamber beating with the given period (formula above).
double chamber_activation(const ChamberParams& chamber, double t_ms, double period_ms);
/// E(t) = E_B + E_A e(t) [mmHg/mL].
double chamber_elastance(const ChamberParams& chamber, double t_ms, double period_ms);

/// An RLC vessel compartment.
struct VesselParams {
  double resistance_mmHg_ms_per_mL = 0;   ///< R, > 0
  double compliance_mL_per_mmHg = 0;      ///< C, > 0
  double inductance_mmHg_ms2_per_mL = 0;  ///< L, >= 0 (0: an RC compartment)
};

/// The four valves share one pair of resistances (as in the paper).
struct ValveParams {
  double open_resistance_mmHg_ms_per_mL = 0;    ///< R_min, > 0
  double closed_resistance_mmHg_ms_per_mL = 0;  ///< R_max, > R_min
};

struct ClosedLoopParams {
  double period_ms = 0;  ///< T_HB, heartbeat period, in [200, 3000]
  ChamberParams left_atrium, left_ventricle, right_atrium, right_ventricle;
  ValveParams valves;
  VesselParams systemic_arteries, systemic_veins, pulmonary_arteries, pulmonary_veins;

  /// The parameters of the first author's reference implementation of this model
  /// (github.com/FrancescoRegazzoni/cardioemulator, example/circulation_closed_loop.py @4f1c757,
  /// citing arXiv:2011.15040; timings there are fractions of T_HB), at T_HB = 800 ms:
  ///   chamber  E_A, E_B [mmHg/mL]  V0 [mL]  t_C, T_C, T_R [T_HB]
  ///   LA       0.07, 0.09          4        0.80, 0.17, 0.17
  ///   RA       0.06, 0.07          4        0.80, 0.17, 0.17
  ///   LV       2.75, 0.08          5        0,    0.34, 0.17
  ///   RV       0.55, 0.05          10       0,    0.34, 0.17
  ///   vessel   R [mmHg s/mL]  C [mL/mmHg]  L [mmHg s^2/mL]
  ///   SYS AR   0.8            1.2          5e-3
  ///   SYS VEN  0.26           60           5e-4
  ///   PUL AR   0.1625         10           5e-4
  ///   PUL VEN  0.1625         16           5e-4
  ///   valves   R_min 0.0075, R_max 75006.2 mmHg s/mL
  /// (stored in ms units: R x 1e3, L x 1e6, timings x period_ms). Discussion in docs/heartbeat.md.
  static ClosedLoopParams regazzoni2022(double period_ms = 800.0);
  /// Throws cardio::Error naming `where`.part.key, the value and the expected range.
  void validate(std::string_view where = "closed_loop") const;
};

/// Compartments in loop order; the index into ClosedLoopState::volume_mL.
enum class Compartment {
  left_atrium,
  left_ventricle,
  right_atrium,
  right_ventricle,
  systemic_arteries,
  systemic_veins,
  pulmonary_arteries,
  pulmonary_veins
};
enum class Valve { mitral, aortic, tricuspid, pulmonary };
/// "left_atrium", ..., "pulmonary_veins"; "mitral", ..., "pulmonary".
std::string_view compartment_name(Compartment c);
std::string_view valve_name(Valve v);

struct ClosedLoopState {
  double t_ms = 0;
  std::array<double, 8> volume_mL{};  ///< by Compartment
  /// Inductor flows out of the systemic arteries, systemic veins, pulmonary arteries and pulmonary
  /// veins [mL/ms].
  std::array<double, 4> vessel_outflow_mL_per_ms{};

  /// The paper's initial state (V_LA 65, V_LV 120, V_RA 65, V_RV 145 mL; p_AR_SYS 80, p_VEN_SYS 30,
  /// p_AR_PUL 35, p_VEN_PUL 24 mmHg, vessel volumes C p; flows 0; t = 0): 3025 mL with the defaults.
  static ClosedLoopState regazzoni2022(const ClosedLoopParams& params);
};

/// The ventricular valve flows of one step (constant over the step) [mL/ms] (index 0 LV, 1 RV).
struct VentricleFlows {
  Eigen::Vector2d inflow = Eigen::Vector2d::Zero();   ///< Q_mitral, Q_tricuspid
  Eigen::Vector2d outflow = Eigen::Vector2d::Zero();  ///< Q_aortic, Q_pulmonary
  /// d net_i / d p_j [mL/(ms mmHg)] with the ventricular pressures p at the end of the step held
  /// (only from trial_step / step_with_pressures; zero after step()).
  Eigen::Matrix2d d_net_d_pressure = Eigen::Matrix2d::Zero();
  /// dV/dt of LV and RV over the step: inflow - outflow.
  Eigen::Vector2d net() const { return inflow - outflow; }
};

class ClosedLoop {
 public:
  /// Validates the parameters (as validate("closed_loop")) and the state (finite, volumes >= 0).
  ClosedLoop(const ClosedLoopParams& params, const ClosedLoopState& initial);

  /// Advance by dt [ms] with the 0-D ventricles.
  VentricleFlows step(double dt);
  /// Advance by dt with the ventricular pressures (LV, RV) [mmHg] at t + dt given by the caller; the
  /// ventricle volumes become V + dt net (they should match the caller's cavities).
  VentricleFlows step_with_pressures(double dt, const Eigen::Vector2d& ventricle_pressures_mmHg);
  /// What step_with_pressures would give, without advancing (for a Newton on the pressures).
  VentricleFlows trial_step(double dt, const Eigen::Vector2d& ventricle_pressures_mmHg) const;

  const ClosedLoopParams& params() const { return m_params; }
  const ClosedLoopState& state() const { return m_state; }
  double time_ms() const { return m_state.t_ms; }
  double volume_mL(Compartment c) const { return m_state.volume_mL[static_cast<int>(c)]; }
  /// Pressure at the current time (ventricles driven by the caller: the last given pressure).
  double pressure_mmHg(Compartment c) const { return m_pressure[static_cast<int>(c)]; }
  /// Whether a valve was open in the last step (at construction: p_up > p_down).
  bool valve_open(Valve v) const { return m_valve_open[static_cast<int>(v)]; }
  /// Flow through a valve over the last step [mL/ms].
  double valve_flow_mL_per_ms(Valve v) const { return m_valve_flow[static_cast<int>(v)]; }
  /// Sum of all compartment volumes, ventricles and atria included [mL].
  double total_volume_mL() const;
  /// Add blood to the four vessels (negative: remove it) in proportion to their compliances, so that
  /// their pressures all rise by volume / sum C; the chambers and flows are unchanged. Throws
  /// cardio::Error if a vessel would be left with a negative volume.
  void add_to_vessels(double volume_mL);
  /// Replace the systemic arteries' R and C (L kept; afterload_calibration.hpp), between steps. Their
  /// blood volume is kept, so their pressure becomes V / C. Throws cardio::Error unless both are > 0.
  void set_systemic_arteries(double resistance_mmHg_ms_per_mL, double compliance_mL_per_mmHg);
  /// The four vessels' compliances summed [mL/mmHg].
  double vessel_compliance_mL_per_mmHg() const;

  /// The dynamic state (time, volumes, flows, pressures, valve states, the systemic arteries' R and C
  /// of set_systemic_arteries), for checkpoints: restoring
  /// it into a model built with the same parameters continues bit for bit.
  void save(BinaryWriter& out) const;
  void restore(BinaryReader& in);

 private:
  struct Solution;
  Solution solve(double dt, const Eigen::Vector2d* ventricle_pressures) const;
  VentricleFlows commit(const Solution& s, double dt);

  ClosedLoopParams m_params;
  ClosedLoopState m_state;
  std::array<double, 8> m_pressure{};
  std::array<double, 4> m_valve_flow{};
  std::array<bool, 4> m_valve_open{};
};

}  // namespace cardio::circulation
