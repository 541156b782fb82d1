#pragma once
/// @file blood_fill.hpp
/// The closed loop's blood volume found beat by beat so that the LV fills to a target end-diastolic
/// pressure (EDP). An image shows the heart at its EDP (the pressure it is unloaded from); the loop's
/// blood volume decides the EDP it fills to, and an uncalibrated volume fills the LV to another
/// pressure and so to another EDV than the image's. At each contraction onset from the second on,
/// blood is added to the loop's vessels (or taken from them) as (EDP_target - EDP) C_fill, at most
/// 10 mmHg's worth a beat, spread so that every vessel's pressure rises alike (V = C p). C_fill, the
/// blood per mmHg of EDP, is the vessels' summed compliance, or half the secant of the last two
/// onsets (blood added against EDP) where that is larger (at most 10x): the systemic veins hold most
/// of the blood that raises the venous return with the output, so the secant is several times the
/// compliance (about 4x for the model's own ventricles), but a beat after blood is added the EDP
/// shows only part of its final rise (about 80 %), and the full secant overshoots; and a secant over
/// an EDP change under half the tolerance is noise, not used. The first onset
/// ends a partial diastole from rest, not a beat's filling, and is not measured. Tested on the 0-D
/// loop (blood_fill_test.cpp): +4 / -3 mmHg reached in 7 / 8 beats.
#include <utility>
#include <vector>

#include "cardio/core/binary.hpp"

namespace cardio::circulation {

struct FillTarget {
  double lv_end_diastolic_pressure_mmHg = 8;  ///< in (0, 40)
  double tolerance_mmHg = 0.5;                ///< reached within this, > 0
};

class BloodFill {
 public:
  /// vessel_compliance: the loop's vessels' compliances summed [mL/mmHg] (ClosedLoop).
  BloodFill(const FillTarget& target, double vessel_compliance_mL_per_mmHg);

  /// Beat `beat` (1, 2, ...) began with the LV at `edp_mmHg`: the blood to add now [mL] (0 at the
  /// first onset; within the tolerance too, the small correction that keeps the EDP on target).
  double next(int beat, double edp_mmHg);
  /// The last measured EDP is within the tolerance of the target.
  bool reached() const;
  /// Blood added so far [mL].
  double added_mL() const { return m_added; }
  /// Blood added at the last measured onset [mL].
  double last_added_mL() const { return m_added_before.empty() ? 0.0 : m_added - m_added_before.back(); }
  /// (beat, EDP [mmHg]) of every onset measured so far.
  const std::vector<std::pair<int, double>>& history() const { return m_history; }
  const FillTarget& target() const { return m_target; }

  void save(BinaryWriter& out) const;
  void restore(BinaryReader& in);

 private:
  /// At most this uniform vessel pressure change per beat [mmHg]: the EDP of a beat that began far
  /// from the periodic state can be far off.
  static constexpr double kMaxPressureStep = 10;
  /// At most this many times the vessels' compliance per mmHg of EDP.
  static constexpr double kMaxGain = 10;
  FillTarget m_target;
  double m_compliance;
  double m_added = 0;
  std::vector<std::pair<int, double>> m_history;
  std::vector<double> m_added_before;  ///< blood added before each measured onset [mL]
};

}  // namespace cardio::circulation
