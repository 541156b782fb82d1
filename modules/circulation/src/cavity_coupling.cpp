#include "cardio/circulation/cavity_coupling.hpp"

#include <cmath>

#include "cardio/core/error.hpp"
#include "cardio/core/units.hpp"

namespace cardio::circulation {

namespace {

/// The loop ventricle (0 LV, 1 RV) of each cavity; every cavity must be one of the loop's.
std::vector<int> loop_ventricles(const std::vector<CavityCirculation>& circulation, const ClosedLoopCirculation& loop) {
  std::vector<int> out;
  for (const auto& c : circulation) {
    if (c.name == loop.left_ventricle)
      out.push_back(0);
    else if (c.name == loop.right_ventricle)
      out.push_back(1);
    else
      CARDIO_FAIL("closed loop: cavity '" << c.name << "' is neither its left ventricle ('" << loop.left_ventricle
                                          << "') nor its right ventricle ('" << loop.right_ventricle << "')");
  }
  return out;
}

}  // namespace

CavityCoupling::CavityCoupling(const std::vector<CavityCirculation>& circulation,
                               std::vector<const meshing::CavitySurface*> surfaces, const Eigen::Matrix3Xd& rest,
                               double t_end_ms, const ClosedLoopCirculation* loop)
    : m_surfaces(std::move(surfaces)) {
  CARDIO_CHECK(m_surfaces.size() == circulation.size(), "CavityCoupling: one surface per cavity");
  for (std::size_t c = 0; c < circulation.size(); ++c) {
    BeatParams beat = circulation[c].beat;
    beat.end_ms = t_end_ms;  // the last beat ends with the run: no onset of a beat that is not simulated
    m_cycles.emplace_back(circulation[c].name, beat, circulation[c].windkessel, 0.0,
                          cavity_volume_mm3(*m_surfaces[c], rest) / kMm3PerMl);
  }
  m_command.resize(m_cycles.size());
  m_impulse.resize(m_cycles.size());
  m_coupled.resize(m_cycles.size());
  m_projected_mm3.assign(m_cycles.size(), std::nullopt);
  m_end_gradient.resize(m_cycles.size());
  if (!loop) return;
  m_ventricle = loop_ventricles(circulation, *loop);
  std::array<const meshing::CavitySurface*, 2> ventricles{nullptr, nullptr};
  for (std::size_t c = 0; c < m_cycles.size(); ++c) ventricles[std::size_t(m_ventricle[c])] = m_surfaces[c];
  m_loop.emplace(loop->params, loop->initial, ventricles, rest);
}

void CavityCoupling::set_time(double t) {
  for (std::size_t c = 0; c < m_cycles.size(); ++c) {
    m_command[c] = m_cycles[c].command(t);
    if (m_loop) m_command[c].mode = CavityCommand::Mode::closed_loop;
    m_impulse[c] = 0;
    m_projected_mm3[c].reset();
  }
}

void CavityCoupling::add_forces(const Eigen::Matrix3Xd& x, Eigen::Matrix3Xd& f) const {
  const bool reuse = end_gradient_valid_at(x);
  for (std::size_t c = 0; c < m_cycles.size(); ++c) {
    if (m_command[c].mode != CavityCommand::Mode::pressure) continue;
    const double p_kPa = m_command[c].pressure_mmHg * units::kMmHgInKPa;
    if (reuse && m_end_gradient[c])
      add_pressure_forces(*m_end_gradient[c], p_kPa, f);
    else
      add_pressure_forces(*m_surfaces[c], x, p_kPa, f);
  }
}

bool CavityCoupling::end_gradient_valid_at(const Eigen::Matrix3Xd& x) const {
  if (m_end_positions != x.data() || m_surfaces.empty() || m_surfaces[0]->nodes.empty()) return false;
  const std::int32_t first = m_surfaces[0]->nodes[0];
  return first < x.cols() && x.col(first) == m_end_first_node;
}

void CavityCoupling::drop_end_gradients() {
  for (auto& g : m_end_gradient) g.reset();
  m_end_positions = nullptr;
}

void CavityCoupling::project(const Eigen::VectorXd& mass, const Eigen::Matrix3Xd& free_mask, double dt,
                             Eigen::Matrix3Xd& x, Eigen::Matrix3Xd& v) {
  drop_end_gradients();
  if (m_loop) {
    Eigen::Vector2d begin = Eigen::Vector2d::Zero();
    for (std::size_t c = 0; c < m_cycles.size(); ++c) begin[m_ventricle[c]] = m_cycles[c].volume_mL();
    const Eigen::Vector2d end_mm3 = m_loop->project(mass, free_mask, dt, begin, x, v);
    for (std::size_t c = 0; c < m_cycles.size(); ++c) m_projected_mm3[c] = end_mm3[m_ventricle[c]];
    return;
  }
  for (std::size_t c = 0; c < m_cycles.size(); ++c) {
    const CavityCommand& cmd = m_command[c];
    if (cmd.mode == CavityCommand::Mode::volume) {
      const ProjectionResult r = project_volume(*m_surfaces[c], mass, free_mask, cmd.volume_mL * kMm3PerMl, dt, x, &v);
      m_impulse[c] += r.impulse(dt);
      m_projected_mm3[c] = r.volume_mm3;
    } else if (cmd.mode == CavityCommand::Mode::windkessel) {
      m_coupled[c] = project_volume_windkessel(*m_surfaces[c], mass, free_mask, m_cycles[c].windkessel(), cmd.volume_mL,
                                               dt, x, &v);
      m_projected_mm3[c] = m_coupled[c].projection.volume_mm3;
    }
  }
}

std::vector<double> CavityCoupling::volumes_mL(const Eigen::Matrix3Xd& x) const {
  std::vector<double> V(m_cycles.size());
  for (std::size_t c = 0; c < V.size(); ++c) V[c] = cavity_volume_mm3(*m_surfaces[c], x) / kMm3PerMl;
  return V;
}

std::vector<double> CavityCoupling::end_of_step_volumes_mL(const Eigen::Matrix3Xd& x) {
  drop_end_gradients();
  std::vector<double> V(m_cycles.size());
  for (std::size_t c = 0; c < V.size(); ++c) {
    if (m_projected_mm3[c]) {
      V[c] = *m_projected_mm3[c] / kMm3PerMl;
      continue;
    }
    VolumeAndGradient vg = volume_and_gradient(*m_surfaces[c], x);
    V[c] = vg.volume_mm3 / kMm3PerMl;
    m_end_gradient[c] = std::move(vg.gradient);
  }
  if (!m_surfaces.empty() && !m_surfaces[0]->nodes.empty() && m_surfaces[0]->nodes[0] < x.cols()) {
    m_end_positions = x.data();
    m_end_first_node = x.col(m_surfaces[0]->nodes[0]);
  }
  return V;
}

std::optional<Overrun> CavityCoupling::update(double t, const std::vector<double>& volumes_mL, double dt) {
  if (m_loop) {
    m_loop->advance(dt);
    const ClosedLoop& loop = m_loop->loop();
    constexpr Valve kInflow[2] = {Valve::mitral, Valve::tricuspid}, kOutflow[2] = {Valve::aortic, Valve::pulmonary};
    for (std::size_t c = 0; c < m_cycles.size(); ++c) {
      const int v = m_ventricle[c];
      m_cycles[c].observe(t, volumes_mL[c], m_loop->pressures_mmHg()[v], loop.valve_open(kInflow[v]),
                          loop.valve_open(kOutflow[v]));
    }
    return std::nullopt;  // the loop's valves follow the pressures: no beat overruns its period
  }
  std::optional<Overrun> overrun;
  for (std::size_t c = 0; c < m_cycles.size(); ++c) {
    // The cavity pressure of the step: the applied one, or the projection's multiplier (kPa -> mmHg).
    double p = m_command[c].pressure_mmHg;
    if (m_command[c].mode == CavityCommand::Mode::volume) p = m_impulse[c] / dt / units::kMmHgInKPa;
    if (m_command[c].mode == CavityCommand::Mode::windkessel) p = m_coupled[c].pressure_mmHg;
    try {
      m_cycles[c].update(t, volumes_mL[c], p);
    } catch (const BeatOverrun& e) {  // the caller stops, but keeps what was computed
      overrun = Overrun{c, e.what()};
    }
  }
  return overrun;
}

std::optional<UnfinishedBeat> CavityCoupling::finish() {
  std::optional<UnfinishedBeat> first;
  for (std::size_t c = 0; c < m_cycles.size(); ++c) {
    const UnfinishedBeat state{c, m_cycles[c].beat_index(), m_cycles[c].phase(), m_cycles[c].time()};
    if (!m_cycles[c].finish() && !first) first = state;
  }
  return first;
}

void CavityCoupling::add_blood(double volume_mL) {
  CARDIO_CHECK(m_loop, "add_blood: the cavities are not in a closed loop");
  m_loop->add_blood(volume_mL);
}

void CavityCoupling::set_systemic_arteries(const VesselParams& p) {
  CARDIO_CHECK(m_loop, "set_systemic_arteries: the cavities are not in a closed loop");
  m_loop->set_systemic_arteries(p);
}

double CavityCoupling::arterial_pressure_mmHg(std::size_t c) const {
  if (!m_loop) return m_cycles[c].windkessel().pressure();
  const Compartment artery = m_ventricle[c] == 0 ? Compartment::systemic_arteries : Compartment::pulmonary_arteries;
  return m_loop->loop().pressure_mmHg(artery);
}

void CavityCoupling::save(BinaryWriter& out) const {
  for (const auto& c : m_cycles) c.save(out);
  if (m_loop) m_loop->save(out);
}

void CavityCoupling::restore(BinaryReader& in) {
  drop_end_gradients();
  for (auto& c : m_cycles) c.restore(in);
  if (m_loop) m_loop->restore(in);
}

}  // namespace cardio::circulation
