#pragma once
/// @file beat.hpp
/// The four phases of a cardiac cycle for one cavity, as a small state machine that is free of the
/// mechanics: before each step it says what to apply to the cavity (a pressure load, a volume
/// target for the exact volume projection, or the Windkessel coupling); after the step it is told
/// the new cavity volume and pressure, switches phase, and keeps per-beat statistics.
///
/// Phase logic (valves as ideal diodes; pressures in mmHg, volumes in mL, times in ms):
///   filling                  pressure load, ramped linearly over filling_ramp_ms from the
///                            opening pressure (initial_pressure for the first beat, then
///                            atrial_pressure) to end_diastolic_pressure, then held;
///                            -> isovolumic contraction at the contraction onset
///                               t_k = first_onset_ms + k period_ms (mitral valve closes);
///                            EDV = the volume at that moment.
///   isovolumic contraction   volume projection to EDV, pressure = the projection's multiplier;
///                            -> ejection when p_cav > P (the Windkessel's arterial pressure:
///                               aortic valve opens).
///   ejection                 cavity coupled to the Windkessel: p_cav = P + Z_c Q, Q = -dV/dt;
///                            the Windkessel advances with the step's Q;
///                            -> isovolumic relaxation when the outflow has been positive and
///                               becomes Q <= 0 (flow reversal: aortic valve closes).
///                            ESV = the smallest volume seen during ejection.
///   isovolumic relaxation    volume projection to the volume at valve closure;
///                            -> filling when p_cav < atrial_pressure (mitral valve opens).
/// Outside ejection the Windkessel drains with Q = 0. A contraction onset that arrives while the
/// cavity is not filling (the previous beat has not finished) throws BeatOverrun. A beat runs from
/// one onset to the next, the last one to the end of the simulation (end_ms: no onset there);
/// its statistics are final then: SV = EDV - ESV, EF = SV / EDV,
/// stroke work = -sum p dV (trapezoid) over the loop. The cycle has converged when the last two
/// completed beats' EDV differ by less than convergence_tolerance relative.
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "cardio/circulation/windkessel.hpp"
#include "cardio/core/binary.hpp"
#include "cardio/core/error.hpp"

namespace cardio::circulation {

enum class Phase { filling, isovolumic_contraction, ejection, isovolumic_relaxation };

/// "filling", "isovolumic_contraction", "ejection", "isovolumic_relaxation".
std::string_view phase_name(Phase p);

struct BeatParams {
  double end_diastolic_pressure_mmHg = 8.0;  ///< EDP, in (0, 40)
  double atrial_pressure_mmHg = 5.0;         ///< mitral opening threshold, in (0, EDP]
  double initial_pressure_mmHg = 0.0;        ///< start of the first filling ramp, in [0, EDP]
  double filling_ramp_ms = 100.0;            ///< > 0
  double first_onset_ms = 200.0;             ///< first contraction onset, > start time
  double period_ms = 800.0;                  ///< cycle length, > 0
  double convergence_tolerance = 0.01;       ///< relative EDV change between beats, in (0, 1)
  /// End of the simulation: the last beat ends here, and an onset at (or after) it never comes.
  double end_ms = std::numeric_limits<double>::infinity();

  /// Throws cardio::Error naming `where`.key, the value and the expected range.
  void validate(std::string_view where = "beat") const;
};

/// What to apply to the cavity during the next step.
struct CavityCommand {
  enum class Mode {
    pressure,     ///< apply pressure_mmHg as a load (filling); no volume projection
    volume,       ///< project the volume to volume_mL (isovolumic); pressure = the multiplier
    windkessel,   ///< ejection: either apply pressure_mmHg (= P + Z_c Q_previous) as a load
                  ///< (explicit coupling) or call project_volume_windkessel from volume_mL (implicit)
    closed_loop,  ///< the closed loop's implicit coupling (closed_loop_coupling.hpp); set by CavityCoupling
  };
  Mode mode = Mode::pressure;
  Phase phase = Phase::filling;
  double pressure_mmHg = 0;  ///< load for pressure / windkessel modes
  double volume_mL = 0;      ///< target (volume mode) or volume at the start of the step (windkessel)
};

/// Statistics of one beat (onset to next onset).
struct BeatStats {
  int index = 0;                  ///< 1, 2, ...
  double onset_ms = 0;            ///< contraction onset (end of diastole)
  double ejection_start_ms = -1;  ///< aortic valve opening (-1: never opened)
  double ejection_end_ms = -1;    ///< aortic valve closure
  double edv_mL = 0;
  double edp_mmHg = 0;  ///< the pressure at the onset (end-diastolic pressure)
  double esv_mL = 0;
  double sv_mL = 0;  ///< EDV - ESV
  double ef = 0;     ///< SV / EDV
  double peak_pressure_mmHg = 0;
  double stroke_work_mmHg_mL = 0;  ///< -sum p dV over the loop (1 mmHg mL = 0.133322 mJ)
};

/// A contraction onset came while the cavity was not filling: the beat in progress did not finish
/// within the period. what() states the facts (cavity, beat, time, phase, pressures) and names no
/// config key: the caller knows which keys set the period and the loads.
class BeatOverrun : public Error {
 public:
  using Error::Error;
};

class BeatCycle {
 public:
  /// Starts in filling at t0_ms with the cavity volume volume0_mL. Validates both parameter sets
  /// (errors name "<name>.beat.<key>" / "<name>.windkessel.<key>").
  BeatCycle(std::string name, const BeatParams& beat, const WindkesselParams& windkessel, double t0_ms,
            double volume0_mL);

  /// What to apply during the step that starts at t (t >= the last update's time).
  CavityCommand command(double t) const;
  /// After the step: its end time, the cavity volume [mL] and pressure [mmHg] at the end (the
  /// applied load in pressure/windkessel modes, the projection's pressure in volume mode).
  /// Advances the Windkessel, switches phase, records statistics.
  void update(double t_new, double volume_mL, double pressure_mmHg);

  const std::string& name() const { return m_name; }
  Phase phase() const { return m_phase; }
  const Windkessel& windkessel() const { return m_wk; }
  /// Outflow of the last step, Q = -dV/dt [mL/ms].
  double outflow() const { return m_outflow; }
  double time() const { return m_t; }
  double volume_mL() const { return m_volume; }
  double pressure_mmHg() const { return m_pressure; }
  /// Current beat index (0 before the first onset).
  int beat_index() const { return m_current.index; }
  /// Completed beats.
  const std::vector<BeatStats>& beats() const { return m_beats; }
  /// Closed-loop circulation (closed_loop_coupling.hpp): the loop's valves, not this machine, decide
  /// the phase. After each step: its end time, the cavity volume and pressure, and whether the inflow
  /// (mitral / tricuspid) and outflow (aortic / pulmonary) valves were open. Inflow open: filling;
  /// outflow open: ejection; both closed: isovolumic contraction before the beat's ejection,
  /// relaxation after it (filling before the first onset). Beats start at the onsets, as in update()
  /// (EDV = the volume then); ESV is the beat's smallest volume. The Windkessel is not used.
  void observe(double t_new, double volume_mL, double pressure_mmHg, bool inflow_open, bool outflow_open);
  /// At the end of the simulation: the beat in progress joins beats() if its ejection has ended
  /// (EDV, ESV, SV and EF are final; relaxation or filling may go on). Returns false if it is
  /// still contracting or ejecting (its statistics are not final; it stays out of beats()). A beat
  /// whose onset is the last step's time (a run stopped at a periodic state) is dropped: it has
  /// not begun. Afterwards beat_index() is 0.
  bool finish();
  /// The beat in progress (statistics so far).
  const BeatStats& current() const { return m_current; }
  /// Relative EDV change between the last two completed beats (NaN with fewer than two).
  double edv_change() const;
  /// edv_change() < convergence_tolerance.
  bool converged() const;
  /// Time of the next contraction onset [ms].
  double next_onset_ms() const { return m_next_onset; }

  /// The dynamic state (phase, times, volumes, Windkessel pressure, beat statistics), for
  /// checkpoints: restoring it into a cycle built with the same parameters continues bit for bit.
  void save(BinaryWriter& out) const;
  void restore(BinaryReader& in);

 private:
  void enter(Phase p, double t);
  void start_beat(double t);
  /// Checks of update()/observe(); returns the step length.
  double checked_step(double t_new, double volume_mL, double pressure_mmHg) const;
  double filling_pressure(double t) const;

  std::string m_name;
  BeatParams m_params;
  Windkessel m_wk;
  Phase m_phase = Phase::filling;
  double m_t = 0, m_volume = 0, m_pressure = 0, m_outflow = 0;
  double m_target = 0;  ///< volume target of the isovolumic phases [mL]
  double m_fill_start_t = 0, m_fill_start_p = 0;
  double m_next_onset = 0;
  bool m_had_outflow = false;
  BeatStats m_current;
  std::vector<BeatStats> m_beats;
};

}  // namespace cardio::circulation
