#include "cardio/activation/twitch.hpp"

#include <cmath>
#include <numbers>

#include "cardio/core/error.hpp"
#include "cardio/core/parallel.hpp"

namespace cardio::activation {

void TwitchParams::validate(std::string_view where) const {
  const auto fail_unless = [&](bool ok, const char* key, double value, const char* unit, const std::string& range) {
    if (!ok) CARDIO_FAIL(where << "." << key << " = " << value << unit << ": expected " << range);
  };
  fail_unless(std::isfinite(peak_tension_kPa) && peak_tension_kPa >= 0 && peak_tension_kPa <= 1000, "peak_tension",
              peak_tension_kPa, " kPa", "a value in [0, 1000]");
  fail_unless(std::isfinite(delay_ms) && delay_ms >= 0, "delay", delay_ms, " ms", "a finite value >= 0");
  fail_unless(std::isfinite(duration_ms) && duration_ms > 0, "duration", duration_ms, " ms", "a finite value > 0");
  if (shape == Shape::cosine)
    fail_unless(time_to_peak_ms > 0 && time_to_peak_ms < duration_ms, "time_to_peak", time_to_peak_ms, " ms",
                "a value in (0, duration = " + std::to_string(duration_ms) + ")");
  else {
    fail_unless(std::isfinite(tau_contraction_ms) && tau_contraction_ms > 0, "tau_contraction", tau_contraction_ms,
                " ms", "a finite value > 0");
    fail_unless(std::isfinite(tau_relaxation_ms) && tau_relaxation_ms > 0, "tau_relaxation", tau_relaxation_ms, " ms",
                "a finite value > 0");
  }
  fail_unless(std::isfinite(period_ms) && (period_ms == 0 || period_ms >= duration_ms + delay_ms), "period", period_ms,
              " ms", "0 (one twitch) or a value >= delay + duration = " + std::to_string(delay_ms + duration_ms));
}

Twitch::Twitch(const TwitchParams& params) : m_params(params) {
  m_params.validate();
  if (m_params.shape == TwitchParams::Shape::cosine) {
    m_time_to_peak = m_params.time_to_peak_ms;
    return;
  }
  // Golden-section search for the maximum of the unimodal tanh^2 product on (0, duration).
  const double g = (std::sqrt(5.0) - 1) / 2;
  double a = 0, b = m_params.duration_ms;
  double c = b - g * (b - a), d = a + g * (b - a);
  for (int it = 0; it < 200 && b - a > 1e-12 * m_params.duration_ms; ++it) {
    if (raw_tanh2(c) > raw_tanh2(d)) {
      b = d;
    } else {
      a = c;
    }
    c = b - g * (b - a);
    d = a + g * (b - a);
  }
  m_time_to_peak = 0.5 * (a + b);
  m_tanh2_peak = raw_tanh2(m_time_to_peak);
}

double Twitch::raw_tanh2(double s) const {
  if (!(s > 0 && s < m_params.duration_ms)) return 0.0;
  const double up = std::tanh(s / m_params.tau_contraction_ms);
  const double down = std::tanh((m_params.duration_ms - s) / m_params.tau_relaxation_ms);
  return up * up * down * down;
}

double Twitch::shape(double s) const {
  if (m_params.shape == TwitchParams::Shape::tanh2) return std::min(1.0, raw_tanh2(s) / m_tanh2_peak);
  const double tp = m_params.time_to_peak_ms, td = m_params.duration_ms;
  if (!(s > 0 && s < td)) return 0.0;
  constexpr double pi = std::numbers::pi;
  if (s <= tp) {
    const double r = std::sin(0.5 * pi * s / tp);
    return r * r;
  }
  const double r = std::cos(0.5 * pi * (s - tp) / (td - tp));
  return r * r;
}

double Twitch::activation(double t, double t_act) const {
  double s = t - t_act - m_params.delay_ms;
  if (s < 0) return 0.0;
  if (m_params.period_ms > 0 && s >= m_params.period_ms)
    s = std::fmod(s, m_params.period_ms);  // fmod(s, T) = s below T
  return shape(s);
}

void Twitch::activation(const Eigen::VectorXd& t_act, double t, Eigen::VectorXd& a) const {
  a.resize(t_act.size());
  parallel_for(t_act.size(), [&](std::int64_t e) { a[e] = activation(t, t_act[e]); });
}

void Twitch::active_tension(const Eigen::VectorXd& t_act, double t, Eigen::VectorXd& ta) const {
  ta.resize(t_act.size());
  const double peak = m_params.peak_tension_kPa;
  parallel_for(t_act.size(), [&](std::int64_t e) { ta[e] = peak * activation(t, t_act[e]); });
}

}  // namespace cardio::activation
