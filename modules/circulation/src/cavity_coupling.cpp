#include "cardio/circulation/cavity_coupling.hpp"

#include "cardio/core/error.hpp"
#include "cardio/core/units.hpp"

namespace cardio::circulation {

CavityCoupling::CavityCoupling(const std::vector<CavityCirculation>& circulation,
                               std::vector<const meshing::CavitySurface*> surfaces, const Eigen::Matrix3Xd& rest,
                               double t_end_ms)
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
}

void CavityCoupling::set_time(double t) {
  for (std::size_t c = 0; c < m_cycles.size(); ++c) {
    m_command[c] = m_cycles[c].command(t);
    m_impulse[c] = 0;
  }
}

void CavityCoupling::add_forces(const Eigen::Matrix3Xd& x, Eigen::Matrix3Xd& f) const {
  for (std::size_t c = 0; c < m_cycles.size(); ++c)
    if (m_command[c].mode == CavityCommand::Mode::pressure)
      add_pressure_forces(*m_surfaces[c], x, m_command[c].pressure_mmHg * units::kMmHgInKPa, f);
}

void CavityCoupling::project(const Eigen::VectorXd& mass, const Eigen::Matrix3Xd& free_mask, double dt,
                             Eigen::Matrix3Xd& x, Eigen::Matrix3Xd& v) {
  for (std::size_t c = 0; c < m_cycles.size(); ++c) {
    const CavityCommand& cmd = m_command[c];
    if (cmd.mode == CavityCommand::Mode::volume)
      m_impulse[c] += project_volume(*m_surfaces[c], mass, free_mask, cmd.volume_mL * kMm3PerMl, dt, x, &v).impulse(dt);
    else if (cmd.mode == CavityCommand::Mode::windkessel)
      m_coupled[c] = project_volume_windkessel(*m_surfaces[c], mass, free_mask, m_cycles[c].windkessel(), cmd.volume_mL,
                                               dt, x, &v);
  }
}

std::vector<double> CavityCoupling::volumes_mL(const Eigen::Matrix3Xd& x) const {
  std::vector<double> V(m_cycles.size());
  for (std::size_t c = 0; c < V.size(); ++c) V[c] = cavity_volume_mm3(*m_surfaces[c], x) / kMm3PerMl;
  return V;
}

std::optional<Overrun> CavityCoupling::update(double t, const std::vector<double>& volumes_mL, double dt) {
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

void CavityCoupling::save(BinaryWriter& out) const {
  for (const auto& c : m_cycles) c.save(out);
}

void CavityCoupling::restore(BinaryReader& in) {
  for (auto& c : m_cycles) c.restore(in);
}

}  // namespace cardio::circulation
