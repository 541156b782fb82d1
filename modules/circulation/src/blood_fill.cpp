#include "cardio/circulation/blood_fill.hpp"

#include <algorithm>
#include <cmath>

#include "cardio/core/error.hpp"

namespace cardio::circulation {

BloodFill::BloodFill(const FillTarget& target, double vessel_compliance_mL_per_mmHg)
    : m_target(target), m_compliance(vessel_compliance_mL_per_mmHg) {
  CARDIO_CHECK(target.lv_end_diastolic_pressure_mmHg > 0 && target.tolerance_mmHg > 0,
               "blood fill: target EDP " << target.lv_end_diastolic_pressure_mmHg << " mmHg, tolerance "
                                         << target.tolerance_mmHg << " mmHg: expected both > 0");
  CARDIO_CHECK(vessel_compliance_mL_per_mmHg > 0, "blood fill: vessel compliance " << vessel_compliance_mL_per_mmHg);
}

double BloodFill::next(int beat, double edp_mmHg) {
  CARDIO_CHECK(std::isfinite(edp_mmHg),
               "blood fill: the LV's end-diastolic pressure of beat " << beat << " is " << edp_mmHg);
  if (beat < 2) return 0;
  m_history.emplace_back(beat, edp_mmHg);
  m_added_before.push_back(m_added);
  // The blood per mmHg of EDP: at least the vessels' compliance; more where the last two beats show
  // it (the systemic veins hold most of the blood that raises the venous return with the output).
  double compliance = m_compliance;
  if (m_history.size() >= 2) {
    const std::size_t n = m_history.size();
    const double d_edp = m_history[n - 1].second - m_history[n - 2].second;
    const double d_added = m_added_before[n - 1] - m_added_before[n - 2];
    // A change under half the tolerance is within the beat-to-beat noise of the EDP: its secant
    // would be anything (on the 1.67 mm biventricle, 0.05 mmHg for 22 mL asked for the 10x cap).
    if (d_edp * d_added > 0 && std::abs(d_edp) >= 0.5 * m_target.tolerance_mmHg)
      compliance = std::clamp(0.5 * d_added / d_edp, m_compliance, kMaxGain * m_compliance);
  }
  // Corrected within the tolerance too: a dead band would leave the EDP wherever the loop's own
  // drift takes it inside the band, often at its edge.
  const double dp = std::clamp(m_target.lv_end_diastolic_pressure_mmHg - edp_mmHg, -kMaxPressureStep, kMaxPressureStep);
  m_added += dp * compliance;
  return dp * compliance;
}

bool BloodFill::reached() const {
  return !m_history.empty() &&
         std::abs(m_history.back().second - m_target.lv_end_diastolic_pressure_mmHg) <= m_target.tolerance_mmHg;
}

void BloodFill::save(BinaryWriter& out) const {
  out.f64(m_added);
  out.u64(m_history.size());
  for (std::size_t k = 0; k < m_history.size(); ++k) {
    out.i64(m_history[k].first);
    out.f64(m_history[k].second);
    out.f64(m_added_before[k]);
  }
}

void BloodFill::restore(BinaryReader& in) {
  m_added = in.f64();
  const std::uint64_t n = in.u64();
  CARDIO_CHECK(n < 100000, "checkpoint: the blood fill claims " << n << " beats");
  m_history.clear();
  m_added_before.clear();
  for (std::uint64_t k = 0; k < n; ++k) {
    const int beat = static_cast<int>(in.i64());
    m_history.emplace_back(beat, in.f64());
    m_added_before.push_back(in.f64());
  }
}

}  // namespace cardio::circulation
