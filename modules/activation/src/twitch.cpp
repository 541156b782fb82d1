#include "cardio/activation/twitch.hpp"

#include <algorithm>
#include <array>
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

namespace {

/// sin^2(pi u / 2) for u in [0, 1], sin by its Taylor series to x^21 in Horner form: on
/// [0, pi/2] the first term left out, (pi/2)^23 / 23!, is below 2e-18, so the value is libm's to
/// a few ulp (Twitch.CosineShapeIsLibmsToAFewUlp). Branch- and call-free, so that a loop of it
/// vectorises: libm's sin and cos of every contracting element at every step were 3 % of a beat.
double sin_squared_quarter_turn(double u) {
  constexpr double kHalfPi = std::numbers::pi / 2;
  constexpr int kTerms = 11;  // x, x^3, ..., x^21
  constexpr std::array<double, kTerms> c = [] {
    std::array<double, kTerms> k{};
    double factorial = 1;  // (2i + 1)!
    for (int i = 0; i < kTerms; ++i) {
      if (i > 0) factorial *= double(2 * i) * double(2 * i + 1);
      k[std::size_t(i)] = (i % 2 == 0 ? 1.0 : -1.0) / factorial;
    }
    return k;
  }();
  const double x = kHalfPi * u, z = x * x;
  double p = c[kTerms - 1];
  for (int i = kTerms - 2; i >= 0; --i) p = p * z + c[std::size_t(i)];
  const double r = x * p;
  return r * r;
}

}  // namespace

double Twitch::quarter_turn(double s) const {
  const double tp = m_params.time_to_peak_ms, td = m_params.duration_ms;
  if (!(s > 0 && s < td)) return 0.0;
  // The rise sin^2(pi s / (2 tp)), the decay cos^2(pi (s - tp) / (2 (td - tp))) = sin^2 of the
  // complement: the decay's argument is taken from the end (td - s), so that it keeps its relative
  // precision where the tension returns to zero.
  return s <= tp ? s / tp : (td - s) / (td - tp);
}

double Twitch::shape(double s) const {
  if (m_params.shape == TwitchParams::Shape::tanh2) return std::min(1.0, raw_tanh2(s) / m_tanh2_peak);
  return sin_squared_quarter_turn(quarter_turn(s));
}

double Twitch::phase(double t, double t_act) const {
  const double s = t - t_act - m_params.delay_ms;
  if (m_params.period_ms > 0 && s >= m_params.period_ms) return std::fmod(s, m_params.period_ms);  // = s below T
  return s;
}

double Twitch::activation(double t, double t_act) const {
  const double s = phase(t, t_act);
  return s < 0 ? 0.0 : shape(s);
}

void Twitch::activation(const Eigen::VectorXd& t_act, double t, Eigen::VectorXd& a) const {
  a.resize(t_act.size());
  parallel_for(t_act.size(), [&](std::int64_t e) { a[e] = activation(t, t_act[e]); });
}

void Twitch::active_tension(const Eigen::VectorXd& t_act, double t, Eigen::VectorXd& ta) const {
  ta.resize(t_act.size());
  const double peak = m_params.peak_tension_kPa;
  if (m_params.shape != TwitchParams::Shape::cosine) {
    parallel_for(t_act.size(), [&](std::int64_t e) { ta[e] = peak * activation(t, t_act[e]); });
    return;
  }
  // Blocks of a fixed size, whatever the threads: each element takes the same path through the
  // vectorised loop (body or remainder), so the values are the same at any thread count.
  constexpr std::int64_t kBlock = 512;
  const std::int64_t n = t_act.size();
  parallel_for_blocks((n + kBlock - 1) / kBlock, [&](std::int64_t b) {
    const std::int64_t begin = b * kBlock, count = std::min(kBlock, n - begin);
    alignas(64) double u[kBlock];
    bool contracting = false;
    for (std::int64_t i = 0; i < count; ++i) {  // scalar: the periodic wrap's fmod
      const double s = phase(t, t_act[begin + i]);
      u[i] = s < 0 ? 0.0 : quarter_turn(s);
      contracting = contracting || u[i] > 0;
    }
    double* out = ta.data() + begin;
    if (!contracting) {  // a block at rest, most of the period: sin^2(0) = 0 for each
      std::fill(out, out + count, 0.0);
      return;
    }
    for (std::int64_t i = 0; i < count; ++i) out[i] = peak * sin_squared_quarter_turn(u[i]);  // vectorised
  });
}

}  // namespace cardio::activation
