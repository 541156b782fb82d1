#include "cardio/circulation/afterload_calibration.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "cardio/core/error.hpp"

namespace cardio::circulation {
namespace {

/// The root of f on [lo, hi], rising (`increasing`) or falling, by bisection in log space; where f has
/// no root inside, the end of the interval nearest to one.
template <class F>
double log_bisect(F f, double lo, double hi, bool increasing) {
  for (int k = 0; k < 50; ++k) {
    const double mid = std::sqrt(lo * hi);
    ((f(mid) < 0) == increasing ? lo : hi) = mid;
  }
  return std::sqrt(lo * hi);
}

}  // namespace

PulseRange periodic_arterial_pressure(const std::vector<double>& inflow, double bin_ms, const VesselParams& a,
                                      double venous_mmHg) {
  const double h = bin_ms, C = a.compliance_mL_per_mmHg, L = a.inductance_mmHg_ms2_per_mL;
  const double g = 1.0 / (L / h + a.resistance_mmHg_ms_per_mL);  // Q = g (L Q_old / h + p - p_VEN)
  // One period from (p, Q); the bins' pressures go to `range` if given.
  const auto period = [&](Eigen::Vector2d x, PulseRange* range) {
    if (range) range->max_mmHg = range->min_mmHg = x(0);
    for (const double q_in : inflow) {
      const double p = (C * x(0) / h + q_in - g * (L * x(1) / h - venous_mmHg)) / (C / h + g);
      x = {p, g * (L * x(1) / h + p - venous_mmHg)};
      if (range) range->max_mmHg = std::max(range->max_mmHg, p), range->min_mmHg = std::min(range->min_mmHg, p);
    }
    return x;
  };
  // The period map is affine, x -> Phi x + c: its fixed point is the periodic state.
  const Eigen::Vector2d c = period(Eigen::Vector2d::Zero(), nullptr);
  Eigen::Matrix2d phi;
  phi.col(0) = period(Eigen::Vector2d(1, 0), nullptr) - c;
  phi.col(1) = period(Eigen::Vector2d(0, 1), nullptr) - c;
  const Eigen::Vector2d x0 = (Eigen::Matrix2d::Identity() - phi).partialPivLu().solve(c);
  PulseRange range;
  period(x0, &range);
  return range;
}

AfterloadCalibration::AfterloadCalibration(const AfterloadTarget& target, const VesselParams& systemic_arteries)
    : m_target(target), m_arteries(systemic_arteries) {
  CARDIO_CHECK(target.diastolic_mmHg > 0 && target.systolic_mmHg > target.diastolic_mmHg &&
                   target.systolic_mmHg < 300 && target.tolerance_mmHg > 0,
               "afterload: target " << target.systolic_mmHg << "/" << target.diastolic_mmHg << " mmHg, tolerance "
                                    << target.tolerance_mmHg
                                    << " mmHg: expected 0 < diastolic < systolic < 300 and a tolerance > 0");
  CARDIO_CHECK(systemic_arteries.resistance_mmHg_ms_per_mL > 0 && systemic_arteries.compliance_mL_per_mmHg > 0,
               "afterload: the systemic arteries' R and C must be > 0");
}

void AfterloadCalibration::observe(double dt_ms, double arterial_mmHg, double venous_mmHg, double aortic_flow) {
  if (m_beat == 0) return;
  CARDIO_CHECK(std::isfinite(arterial_mmHg) && std::isfinite(venous_mmHg) && std::isfinite(aortic_flow),
               "afterload: systemic pressures " << arterial_mmHg << ", " << venous_mmHg << " mmHg, aortic flow "
                                                << aortic_flow << " mL/ms in beat " << m_beat);
  if (m_duration == 0) m_max = m_min = arterial_mmHg;
  m_max = std::max(m_max, arterial_mmHg);
  m_min = std::min(m_min, arterial_mmHg);
  const auto bin = static_cast<std::size_t>(m_duration);  // 1 ms bins from the onset
  if (m_inflow.size() <= bin) m_inflow.resize(bin + 1, 0.0);
  m_inflow[bin] += aortic_flow * dt_ms;
  m_duration += dt_ms;
  m_arterial_integral += dt_ms * arterial_mmHg;
  m_venous_integral += dt_ms * venous_mmHg;
}

VesselParams AfterloadCalibration::fit(const std::vector<double>& inflow, double bin_ms, double venous_mmHg) const {
  const double mean_inflow = std::accumulate(inflow.begin(), inflow.end(), 0.0) / double(inflow.size());
  if (!(mean_inflow > 0)) return m_arteries;  // no ejection: nothing to fit to
  VesselParams a = m_arteries;
  const double pulse = m_target.systolic_mmHg - m_target.diastolic_mmHg;
  // For a given R, the C whose periodic pulse pressure is the target's (it falls with C).
  const auto fit_c = [&](double r) {
    a.resistance_mmHg_ms_per_mL = r;
    a.compliance_mL_per_mmHg = log_bisect(
        [&](double c) {
          a.compliance_mL_per_mmHg = c;
          const PulseRange p = periodic_arterial_pressure(inflow, bin_ms, a, venous_mmHg);
          return p.max_mmHg - p.min_mmHg - pulse;
        },
        1e-3, 1e3, false);
    return a.compliance_mL_per_mmHg;
  };
  // R such that, with that C, the diastolic pressure is the target's (it rises with R: the mean is
  // p_VEN + R mean(Q_aortic)). R in [0.01, 100] mmHg s/mL.
  const double r = log_bisect(
      [&](double r) {
        fit_c(r);
        return periodic_arterial_pressure(inflow, bin_ms, a, venous_mmHg).min_mmHg - m_target.diastolic_mmHg;
      },
      10.0, 1e5, true);
  fit_c(r);
  return a;
}

VesselParams AfterloadCalibration::next(int beat) {
  const bool measure = m_beat >= 1 && m_duration > 0;
  if (measure) {
    const AfterloadBeat b{m_beat,
                          m_max,
                          m_min,
                          m_arterial_integral / m_duration,
                          m_venous_integral / m_duration,
                          1e3 * std::accumulate(m_inflow.begin(), m_inflow.end(), 0.0) / m_duration,
                          m_arteries.resistance_mmHg_ms_per_mL,
                          m_arteries.compliance_mL_per_mmHg};
    m_history.push_back(b);
    // The bins as flows over the beat's own length (a last bin under half a bin joins the one before).
    if (m_inflow.size() > 1 && m_duration - double(m_inflow.size() - 1) < 0.5) {
      m_inflow[m_inflow.size() - 2] += m_inflow.back();
      m_inflow.pop_back();
    }
    const double bin_ms = m_duration / double(m_inflow.size());
    std::vector<double> flow(m_inflow.size());
    std::transform(m_inflow.begin(), m_inflow.end(), flow.begin(), [&](double v) { return v / bin_ms; });
    const VesselParams fitted = fit(flow, bin_ms, b.venous_mean_mmHg);
    const auto bounded = [](double to, double from) { return std::clamp(to, from / kMaxFactor, from * kMaxFactor); };
    m_arteries.resistance_mmHg_ms_per_mL =
        bounded(fitted.resistance_mmHg_ms_per_mL, m_arteries.resistance_mmHg_ms_per_mL);
    m_arteries.compliance_mL_per_mmHg = bounded(fitted.compliance_mL_per_mmHg, m_arteries.compliance_mL_per_mmHg);
  }
  m_beat = beat;
  m_duration = m_arterial_integral = m_venous_integral = 0;
  m_inflow.clear();
  return m_arteries;
}

bool AfterloadCalibration::reached() const {
  if (m_history.empty()) return false;
  const AfterloadBeat& b = m_history.back();
  return std::abs(b.systolic_mmHg - m_target.systolic_mmHg) <= m_target.tolerance_mmHg &&
         std::abs(b.diastolic_mmHg - m_target.diastolic_mmHg) <= m_target.tolerance_mmHg;
}

void AfterloadCalibration::save(BinaryWriter& out) const {
  out.str("afterload");
  out.f64(m_arteries.resistance_mmHg_ms_per_mL);
  out.f64(m_arteries.compliance_mL_per_mmHg);
  out.i64(m_beat);
  for (double v : {m_duration, m_arterial_integral, m_venous_integral, m_max, m_min}) out.f64(v);
  out.f64s(m_inflow.data(), m_inflow.size());
  out.u64(m_history.size());
  for (const AfterloadBeat& b : m_history) {
    out.i64(b.beat);
    for (double v : {b.systolic_mmHg, b.diastolic_mmHg, b.mean_mmHg, b.venous_mean_mmHg, b.aortic_flow_mL_per_s,
                     b.resistance_mmHg_ms_per_mL, b.compliance_mL_per_mmHg})
      out.f64(v);
  }
}

void AfterloadCalibration::restore(BinaryReader& in) {
  const std::string tag = in.str();
  CARDIO_CHECK(tag == "afterload", "checkpoint holds '" << tag << "' where the afterload calibration was expected");
  m_arteries.resistance_mmHg_ms_per_mL = in.f64();
  m_arteries.compliance_mL_per_mmHg = in.f64();
  m_beat = static_cast<int>(in.i64());
  for (double* v : {&m_duration, &m_arterial_integral, &m_venous_integral, &m_max, &m_min}) *v = in.f64();
  const std::size_t bins = in.peek_count();
  CARDIO_CHECK(bins < 10000000, "checkpoint: the afterload calibration claims " << bins << " inflow bins");
  m_inflow.resize(bins);
  in.f64s(m_inflow.data(), m_inflow.size());
  const std::uint64_t n = in.u64();
  CARDIO_CHECK(n < 100000, "checkpoint: the afterload calibration claims " << n << " beats");
  m_history.assign(n, {});
  for (AfterloadBeat& b : m_history) {
    b.beat = static_cast<int>(in.i64());
    for (double* v : {&b.systolic_mmHg, &b.diastolic_mmHg, &b.mean_mmHg, &b.venous_mean_mmHg, &b.aortic_flow_mL_per_s,
                      &b.resistance_mmHg_ms_per_mL, &b.compliance_mL_per_mmHg})
      *v = in.f64();
  }
}

}  // namespace cardio::circulation
