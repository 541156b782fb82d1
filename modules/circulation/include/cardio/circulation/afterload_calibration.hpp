#pragma once
/// @file afterload_calibration.hpp
/// The systemic arteries' resistance R and compliance C found beat by beat so that the aortic
/// pressure swings between a target systolic and diastolic pressure (a patient's blood pressure).
/// The loop's published parameters (Regazzoni et al. 2022) fit their own heart's stroke volume; a
/// larger heart ejects more into the same arteries, and its pressures come out high (the
/// biventricular mean shape: 86 mL into 1.2 mL/mmHg gave 154/90 mmHg), so a patient's arterial
/// Windkessel is fitted to the patient's measured pressures.
///
/// The fit: the systemic arteries are the loop's R-L-C compartment (Westerhof et al. 2009, Med Biol
/// Eng Comput 47:131; the systemic arteries of Regazzoni et al. 2022)
///   C dp/dt = Q_aortic - Q,   L dQ/dt = p - p_VEN - R Q,
/// driven by the aortic valve flow the heart ejected in the last beat (in 1 ms bins) with p_VEN held at
/// its mean. Its periodic solution has the mean p_VEN + R mean(Q_aortic) whatever C, and a pulse
/// pressure that falls with C: R and C are found (nested bisections) so that its largest and smallest
/// pressures are the targets. The arteries fill over R C (about 2 s, several beats), so a beat's own
/// pressures lag a change; the fit under the measured inflow does not. What changes from beat to beat
/// is the heart's output (the fill, the tension calibration): the fit follows it, at each LV onset
/// from the second on. Each factor on R or C is at most 2 a beat. The vessel keeps its blood volume when C changes (p =
/// V / C).
#include <vector>

#include "cardio/circulation/closed_loop.hpp"
#include "cardio/core/binary.hpp"

namespace cardio::circulation {

struct AfterloadTarget {
  double systolic_mmHg = 120;  ///< aortic systolic pressure, in (diastolic, 300)
  double diastolic_mmHg = 80;  ///< aortic diastolic pressure, > 0
  double tolerance_mmHg = 3;   ///< reached when both are within this, > 0
};

/// The systemic arterial pressure of one measured beat, and the R and C it ran with.
struct AfterloadBeat {
  int beat = 0;
  double systolic_mmHg = 0, diastolic_mmHg = 0, mean_mmHg = 0;
  double venous_mean_mmHg = 0;      ///< the systemic veins' mean pressure
  double aortic_flow_mL_per_s = 0;  ///< mean aortic valve flow (the cardiac output)
  double resistance_mmHg_ms_per_mL = 0, compliance_mL_per_mmHg = 0;
};

/// The periodic pressure of the R-L-C arteries under a periodic inflow (bins of bin_ms [mL/ms]) into
/// veins held at venous_mmHg, by backward Euler on the bins: its largest and smallest value [mmHg].
struct PulseRange {
  double max_mmHg = 0, min_mmHg = 0;
};
PulseRange periodic_arterial_pressure(const std::vector<double>& inflow_mL_per_ms, double bin_ms,
                                      const VesselParams& arteries, double venous_mmHg);

class AfterloadCalibration {
 public:
  /// systemic_arteries: the loop's starting R and C (its L is kept).
  AfterloadCalibration(const AfterloadTarget& target, const VesselParams& systemic_arteries);

  /// After every step of dt [ms]: the systemic arterial and venous pressures at its end [mmHg] and the
  /// aortic valve flow over it [mL/ms].
  void observe(double dt_ms, double arterial_mmHg, double venous_mmHg, double aortic_flow_mL_per_ms);
  /// At the LV's contraction onset of beat `beat` (1, 2, ...): the beat before it is measured (from
  /// the second onset on) and the systemic arteries' R and C for the next beat are returned.
  VesselParams next(int beat);
  /// The last measured beat's systolic and diastolic pressures are within the tolerance.
  bool reached() const;
  const VesselParams& systemic_arteries() const { return m_arteries; }
  /// The beat being observed: the last given to next() (0 before the first).
  int beat() const { return m_beat; }
  const std::vector<AfterloadBeat>& history() const { return m_history; }
  const AfterloadTarget& target() const { return m_target; }

  void save(BinaryWriter& out) const;
  void restore(BinaryReader& in);

 private:
  /// At most this factor on R or C per beat.
  static constexpr double kMaxFactor = 2;
  /// R and C for the target under this inflow (bins of bin_ms [mL/ms]) and venous pressure.
  VesselParams fit(const std::vector<double>& inflow_mL_per_ms, double bin_ms, double venous_mmHg) const;

  AfterloadTarget m_target;
  VesselParams m_arteries;
  std::vector<AfterloadBeat> m_history;
  // The beat being observed (since the last onset).
  int m_beat = 0;  ///< 0: before the first onset
  double m_duration = 0, m_arterial_integral = 0, m_venous_integral = 0, m_max = 0, m_min = 0;
  std::vector<double> m_inflow;  ///< aortic valve volume per 1 ms bin [mL]
};

}  // namespace cardio::circulation
