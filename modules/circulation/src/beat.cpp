#include "cardio/circulation/beat.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "cardio/core/error.hpp"

namespace cardio::circulation {

std::string_view phase_name(Phase p) {
  switch (p) {
    case Phase::filling:
      return "filling";
    case Phase::isovolumic_contraction:
      return "isovolumic_contraction";
    case Phase::ejection:
      return "ejection";
    case Phase::isovolumic_relaxation:
      return "isovolumic_relaxation";
  }
  return "unknown";
}

void BeatParams::validate(std::string_view where) const {
  const auto key = [&](const char* name) { return std::string(where) + "." + name; };
  const double edp = end_diastolic_pressure_mmHg;
  if (!(edp > 0 && edp < 40))
    CARDIO_FAIL(key("end_diastolic_pressure") << " = " << edp << " mmHg: expected a value in (0, 40)");
  if (!(atrial_pressure_mmHg > 0 && atrial_pressure_mmHg <= edp))
    CARDIO_FAIL(key("atrial_pressure") << " = " << atrial_pressure_mmHg << " mmHg: expected a value in (0, " << edp
                                       << "] (0 < atrial pressure <= end-diastolic pressure)");
  if (!(initial_pressure_mmHg >= 0 && initial_pressure_mmHg <= edp))
    CARDIO_FAIL(key("initial_pressure") << " = " << initial_pressure_mmHg << " mmHg: expected a value in [0, " << edp
                                        << "]");
  if (!(std::isfinite(filling_ramp_ms) && filling_ramp_ms > 0))
    CARDIO_FAIL(key("filling_ramp") << " = " << filling_ramp_ms << " ms: expected a finite value > 0");
  if (!(std::isfinite(period_ms) && period_ms > 0))
    CARDIO_FAIL(key("period") << " = " << period_ms << " ms: expected a finite value > 0");
  if (!std::isfinite(first_onset_ms))
    CARDIO_FAIL(key("first_onset") << " = " << first_onset_ms << " ms: expected a finite time");
  if (!(convergence_tolerance > 0 && convergence_tolerance < 1))
    CARDIO_FAIL(key("convergence_tolerance") << " = " << convergence_tolerance << ": expected a value in (0, 1)");
  if (std::isnan(end_ms)) CARDIO_FAIL(key("end") << " is not a number: expected a time");
}

namespace {
WindkesselParams validated(const WindkesselParams& wk, const std::string& name) {
  wk.validate(name + ".windkessel");
  return wk;
}
}  // namespace

BeatCycle::BeatCycle(std::string name, const BeatParams& beat, const WindkesselParams& windkessel, double t0_ms,
                     double volume0_mL)
    : m_name(std::move(name)), m_params(beat), m_wk(validated(windkessel, m_name)) {
  m_params.validate(m_name + ".beat");
  CARDIO_CHECK(std::isfinite(t0_ms), m_name << ": start time " << t0_ms << " ms is not finite");
  if (!(m_params.first_onset_ms > t0_ms))
    CARDIO_FAIL(m_name << ".beat.first_onset = " << m_params.first_onset_ms << " ms: expected a time after the start ("
                       << t0_ms << " ms), to fill the cavity first");
  if (!(std::isfinite(volume0_mL) && volume0_mL > 0))
    CARDIO_FAIL(m_name << ": initial cavity volume " << volume0_mL << " mL, expected a finite value > 0");
  m_t = t0_ms;
  m_volume = volume0_mL;
  m_pressure = m_params.initial_pressure_mmHg;
  m_fill_start_t = t0_ms;
  m_fill_start_p = m_params.initial_pressure_mmHg;
  m_next_onset = m_params.first_onset_ms;
}

double BeatCycle::filling_pressure(double t) const {
  const double s = std::clamp((t - m_fill_start_t) / m_params.filling_ramp_ms, 0.0, 1.0);
  return m_fill_start_p + s * (m_params.end_diastolic_pressure_mmHg - m_fill_start_p);
}

CavityCommand BeatCycle::command(double t) const {
  CavityCommand c;
  c.phase = m_phase;
  switch (m_phase) {
    case Phase::filling:
      c.mode = CavityCommand::Mode::pressure;
      c.pressure_mmHg = filling_pressure(t);
      c.volume_mL = m_volume;
      break;
    case Phase::isovolumic_contraction:
    case Phase::isovolumic_relaxation:
      c.mode = CavityCommand::Mode::volume;
      c.volume_mL = m_target;
      c.pressure_mmHg = m_pressure;
      break;
    case Phase::ejection:
      c.mode = CavityCommand::Mode::windkessel;
      c.pressure_mmHg = m_wk.cavity_pressure(m_outflow);
      c.volume_mL = m_volume;
      break;
  }
  return c;
}

void BeatCycle::enter(Phase p, double t) {
  m_phase = p;
  switch (p) {
    case Phase::filling:
      m_fill_start_t = t;
      m_fill_start_p = m_params.atrial_pressure_mmHg;
      break;
    case Phase::isovolumic_contraction:
      start_beat(t);
      m_target = m_volume;
      break;
    case Phase::ejection:
      m_current.ejection_start_ms = t;
      m_had_outflow = false;
      m_outflow = 0;
      break;
    case Phase::isovolumic_relaxation:
      m_current.ejection_end_ms = t;
      m_target = m_volume;
      m_outflow = 0;
      break;
  }
}

void BeatCycle::start_beat(double t) {
  if (m_current.index > 0) m_beats.push_back(m_current);
  m_current = BeatStats{};
  m_current.index = static_cast<int>(m_beats.size()) + 1;
  m_current.onset_ms = t;
  m_current.edv_mL = m_volume;
  m_current.edp_mmHg = m_pressure;
  m_current.esv_mL = m_volume;
  m_current.peak_pressure_mmHg = m_pressure;
  m_next_onset += m_params.period_ms;
}

double BeatCycle::checked_step(double t_new, double volume_mL, double pressure_mmHg) const {
  const double dt = t_new - m_t;
  CARDIO_CHECK(dt > 0 && std::isfinite(dt),
               m_name << ": update at t = " << t_new << " ms does not advance from t = " << m_t << " ms");
  CARDIO_CHECK(std::isfinite(volume_mL) && volume_mL > 0,
               m_name << ": cavity volume " << volume_mL << " mL at t = " << t_new << " ms (expected finite, > 0)");
  CARDIO_CHECK(std::isfinite(pressure_mmHg),
               m_name << ": cavity pressure " << pressure_mmHg << " mmHg at t = " << t_new << " ms is not finite");
  return dt;
}

void BeatCycle::observe(double t_new, double volume_mL, double pressure_mmHg, bool inflow_open, bool outflow_open) {
  const double dt = checked_step(t_new, volume_mL, pressure_mmHg);
  const double v_old = m_volume, p_old = m_pressure;
  m_t = t_new;
  m_volume = volume_mL;
  m_pressure = pressure_mmHg;
  m_outflow = (v_old - volume_mL) / dt;
  if (m_current.index > 0) {
    m_current.stroke_work_mmHg_mL += 0.5 * (p_old + pressure_mmHg) * (v_old - volume_mL);
    m_current.peak_pressure_mmHg = std::max(m_current.peak_pressure_mmHg, pressure_mmHg);
    m_current.esv_mL = std::min(m_current.esv_mL, volume_mL);
  }
  const double slack = 1e-9 * std::max(1.0, std::abs(m_next_onset));
  if (t_new >= m_next_onset - slack && m_next_onset < m_params.end_ms - slack) start_beat(t_new);
  Phase next = Phase::filling;
  if (outflow_open)
    next = Phase::ejection;
  else if (!inflow_open && m_current.index > 0)
    next = m_current.ejection_start_ms < 0 ? Phase::isovolumic_contraction : Phase::isovolumic_relaxation;
  if (next == Phase::ejection && m_current.ejection_start_ms < 0) m_current.ejection_start_ms = t_new;
  if (m_phase == Phase::ejection && next != Phase::ejection) m_current.ejection_end_ms = t_new;
  m_phase = next;
  m_current.sv_mL = m_current.edv_mL - m_current.esv_mL;
  m_current.ef = m_current.sv_mL / m_current.edv_mL;
}

void BeatCycle::update(double t_new, double volume_mL, double pressure_mmHg) {
  const double dt = checked_step(t_new, volume_mL, pressure_mmHg);
  const double v_old = m_volume, p_old = m_pressure;
  const double q = (v_old - volume_mL) / dt;
  m_wk.advance(dt, m_phase == Phase::ejection ? q : 0.0);  // valve closed: the arteries drain
  m_t = t_new;
  m_volume = volume_mL;
  m_pressure = pressure_mmHg;
  m_outflow = m_phase == Phase::ejection ? q : 0.0;
  if (m_current.index > 0) {
    m_current.stroke_work_mmHg_mL += 0.5 * (p_old + pressure_mmHg) * (v_old - volume_mL);
    m_current.peak_pressure_mmHg = std::max(m_current.peak_pressure_mmHg, pressure_mmHg);
  }

  // Onsets compare with a relative slack so that t accumulated as n * dt still hits them.
  const double slack = 1e-9 * std::max(1.0, std::abs(m_next_onset));
  const bool onset = t_new >= m_next_onset - slack && m_next_onset < m_params.end_ms - slack;
  switch (m_phase) {
    case Phase::filling:
      if (onset) enter(Phase::isovolumic_contraction, t_new);
      return;
    case Phase::isovolumic_contraction:
      if (pressure_mmHg > m_wk.pressure()) enter(Phase::ejection, t_new);
      break;
    case Phase::ejection:
      m_current.esv_mL = std::min(m_current.esv_mL, volume_mL);
      if (q > 0) m_had_outflow = true;
      if (m_had_outflow && q <= 0) enter(Phase::isovolumic_relaxation, t_new);
      break;
    case Phase::isovolumic_relaxation:
      if (pressure_mmHg < m_params.atrial_pressure_mmHg) enter(Phase::filling, t_new);
      break;
  }
  m_current.sv_mL = m_current.edv_mL - m_current.esv_mL;
  m_current.ef = m_current.sv_mL / m_current.edv_mL;
  if (onset && m_phase != Phase::filling) {
    std::ostringstream os;
    os << m_name << ": beat " << m_current.index
       << " has not finished when the next contraction onset comes (t = " << t_new << " ms, phase "
       << phase_name(m_phase) << ", p_cav = " << pressure_mmHg << " mmHg, arterial " << m_wk.pressure()
       << " mmHg, peak " << m_current.peak_pressure_mmHg << " mmHg)";
    throw BeatOverrun(os.str());
  }
}

bool BeatCycle::finish() {
  if (m_current.index == 0) return true;  // no beat in progress (or finished already)
  if (m_current.onset_ms >= m_t) {        // a run stopped at this beat's onset: it has not begun
    m_current = BeatStats{};
    return true;
  }
  if (m_current.ejection_end_ms < 0) return false;
  m_beats.push_back(m_current);
  m_current = BeatStats{};
  return true;
}

double BeatCycle::edv_change() const {
  if (m_beats.size() < 2) return std::numeric_limits<double>::quiet_NaN();
  const double a = m_beats[m_beats.size() - 2].edv_mL, b = m_beats.back().edv_mL;
  return std::abs(b - a) / a;
}

bool BeatCycle::converged() const {
  const double c = edv_change();
  return std::isfinite(c) && c < m_params.convergence_tolerance;
}

namespace {
void save_stats(BinaryWriter& out, const BeatStats& b) {
  out.i64(b.index);
  for (double v : {b.onset_ms, b.ejection_start_ms, b.ejection_end_ms, b.edv_mL, b.edp_mmHg, b.esv_mL, b.sv_mL, b.ef,
                   b.peak_pressure_mmHg, b.stroke_work_mmHg_mL})
    out.f64(v);
}
BeatStats read_stats(BinaryReader& in) {
  BeatStats b;
  b.index = static_cast<int>(in.i64());
  for (double* v : {&b.onset_ms, &b.ejection_start_ms, &b.ejection_end_ms, &b.edv_mL, &b.edp_mmHg, &b.esv_mL, &b.sv_mL,
                    &b.ef, &b.peak_pressure_mmHg, &b.stroke_work_mmHg_mL})
    *v = in.f64();
  return b;
}
}  // namespace

void BeatCycle::save(BinaryWriter& out) const {
  out.str(m_name);
  out.i64(static_cast<std::int64_t>(m_phase));
  for (double v :
       {m_t, m_volume, m_pressure, m_outflow, m_target, m_fill_start_t, m_fill_start_p, m_next_onset, m_wk.pressure()})
    out.f64(v);
  out.i64(m_had_outflow);
  save_stats(out, m_current);
  out.u64(m_beats.size());
  for (const BeatStats& b : m_beats) save_stats(out, b);
}

void BeatCycle::restore(BinaryReader& in) {
  const std::string name = in.str();
  CARDIO_CHECK(name == m_name, "checkpoint holds cavity '" << name << "' where '" << m_name << "' was expected");
  const std::int64_t phase = in.i64();
  CARDIO_CHECK(phase >= 0 && phase <= 3, "checkpoint: cavity '" << m_name << "' has an unknown phase " << phase);
  m_phase = static_cast<Phase>(phase);
  for (double* v :
       {&m_t, &m_volume, &m_pressure, &m_outflow, &m_target, &m_fill_start_t, &m_fill_start_p, &m_next_onset})
    *v = in.f64();
  m_wk.set_pressure(in.f64());
  m_had_outflow = in.i64() != 0;
  m_current = read_stats(in);
  const std::uint64_t n = in.u64();
  CARDIO_CHECK(n < 1000000, "checkpoint: cavity '" << m_name << "' claims " << n << " beats");
  m_beats.clear();
  for (std::uint64_t k = 0; k < n; ++k) m_beats.push_back(read_stats(in));
}

}  // namespace cardio::circulation
