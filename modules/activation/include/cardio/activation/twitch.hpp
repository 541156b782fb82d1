#pragma once
/// @file twitch.hpp
/// The twitch a(t) in [0, 1] of an element activated at t_act, and its active tension
/// Ta = Ta_max a [kPa] (the fibre-axis active tension of DESIGN.md; Ta in kPa as in the Land et al.
/// 2015 benchmark, Proc R Soc A 471:20150641, whose problem 3 uses Ta = 60 kPa).
///
/// With s = t - t_act - delay (s modulo period if period > 0), two shapes:
///  - cosine (default), a C^1 raised-cosine rise and decay with exact time to peak t_p and
///    duration t_d:
///      a = sin^2(pi s / (2 t_p))                      0 <= s <= t_p
///      a = cos^2(pi (s - t_p) / (2 (t_d - t_p)))      t_p < s < t_d
///      a = 0                                          otherwise;
///    a simple phenomenological shape (no paper fits it): a(t_p) = 1, a' = 0 at 0, t_p and t_d.
///  - tanh2, the phenomenological tension transient of Niederer et al. 2011 (Cardiovasc Res
///    89:336-343), as used e.g. by Augustin et al. 2016 (J Comput Phys 305:622-646):
///      a = tanh^2(s / tau_c) tanh^2((t_d - s) / tau_r) / a_peak   for 0 < s < t_d, else 0,
///    normalised here by its maximum a_peak (found once, golden section: the product of two
///    log-concave factors is unimodal), so that a = 1 at its time to peak.
#include <Eigen/Core>
#include <string_view>

namespace cardio::activation {

struct TwitchParams {
  enum class Shape { cosine, tanh2 };
  Shape shape = Shape::cosine;
  double peak_tension_kPa = 60.0;    ///< Ta_max, in [0, 1000]
  double delay_ms = 0.0;             ///< electromechanical delay, >= 0
  double time_to_peak_ms = 120.0;    ///< cosine: t_p, in (0, duration)
  double duration_ms = 350.0;        ///< t_d, > 0: a = 0 from here on
  double tau_contraction_ms = 40.0;  ///< tanh2: tau_c > 0
  double tau_relaxation_ms = 60.0;   ///< tanh2: tau_r > 0
  double period_ms = 0.0;            ///< 0: one twitch; > 0: repeated, >= duration + delay

  /// Throws cardio::Error naming `where`.key, the value and the expected range.
  void validate(std::string_view where = "activation.twitch") const;
};

class Twitch {
 public:
  /// Validates (as validate("activation.twitch")); for tanh2 finds the peak.
  explicit Twitch(const TwitchParams& params);

  const TwitchParams& params() const { return m_params; }
  /// a(s) for s = t - t_act - delay (the periodic wrap applied by activation()).
  double shape(double s) const;
  /// a at time t for an element activated at t_act.
  double activation(double t, double t_act) const;
  /// Time after t_act + delay at which a = 1 [ms].
  double time_to_peak() const { return m_time_to_peak; }

  /// a(t) for every element (parallel, deterministic: one independent value per element).
  void activation(const Eigen::VectorXd& t_act, double t, Eigen::VectorXd& a) const;
  /// Ta(t) = Ta_max a(t) [kPa] for every element.
  void active_tension(const Eigen::VectorXd& t_act, double t, Eigen::VectorXd& ta) const;

 private:
  double raw_tanh2(double s) const;
  /// s - t_act - delay, wrapped into [0, period) if periodic (negative before the first twitch).
  double phase(double t, double t_act) const;
  /// The cosine shape as a quarter turn of sin^2: u in [0, 1] with a = sin^2(pi u / 2); 0 outside
  /// the twitch.
  double quarter_turn(double s) const;
  TwitchParams m_params;
  double m_time_to_peak = 0;
  double m_tanh2_peak = 1;
};

}  // namespace cardio::activation
