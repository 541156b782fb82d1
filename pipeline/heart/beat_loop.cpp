#include "heart/beat_loop.hpp"

#include <algorithm>
#include <cmath>

#include "cardio/activation/activation_times.hpp"
#include "cardio/analysis/axis.hpp"
#include "cardio/core/error.hpp"
#include "cardio/core/parallel.hpp"
#include "cardio/imaging/image_io.hpp"
#include "cardio/mechanics/integrators.hpp"

namespace cardio::pipeline {
namespace {

/// The apex of the site's cavity: where the long axis (through the cavity's centroid, along the
/// base-plane normal) leaves its endocardium towards the apex (analysis::axial_apex). A pacing site
/// given this way is the same anatomical place on any heart, whatever the image's coordinates. It is
/// found on the voxel lattice, the geometry of the grid the eikonal runs on: the same point for the
/// imaged mesh, its fitted boundary and its unloaded reference.
Eigen::Vector3d cavity_apex(const ActivationParams::Site& s, const meshing::VoxelMesh& m, std::ostream* log) {
  const auto it =
      std::find_if(m.cavities.begin(), m.cavities.end(), [&](const auto& c) { return c.name == s.apex_of; });
  if (it == m.cavities.end()) {
    std::string names;
    for (const auto& c : m.cavities) names += (names.empty() ? "" : ", ") + c.name;
    CARDIO_FAIL(s.where << ".apex: no cavity '" << s.apex_of
                        << "' in the mesh (its cavities: " << (names.empty() ? "none" : names) << ")");
  }
  const Eigen::Vector3d p = analysis::axial_apex(*it, meshing::lattice_positions(m),
                                                 analysis::unit_axis_direction(analysis::cardiac_axis(m.axis)));
  if (log) *log << s.where << ": the apex of " << s.apex_of << " at (" << p.transpose() << ") mm\n";
  return p;
}

Eigen::VectorXd activation_times(const ActivationParams& a, const meshing::VoxelMesh& m, std::ostream* log) {
  if (a.mode == ActivationMode::synchronous) return activation::synchronous_activation(m, 0.0);
  if (a.mode == ActivationMode::image)
    return activation::activation_from_image(m, imaging::read_scalar_image(a.image), a.image.string());
  std::vector<activation::PacingSite> sites;
  for (const auto& s : a.sites) {
    if (s.at_label)
      sites.push_back(activation::PacingSite::at_label(s.label, s.time, s.where));
    else
      sites.push_back(
          activation::PacingSite::at_point(s.apex_of.empty() ? s.point : cavity_apex(s, m, log), s.time, s.where));
  }
  activation::EikonalOptions o;
  o.velocity = {a.velocity_fibre, a.velocity_cross};
  const Eigen::VectorXd t = activation::eikonal_activation(m, sites, o);
  if (log) *log << "eikonal activation: latest element at " << t.maxCoeff() << " ms after the stimulus\n";
  return t;
}

std::size_t lv_index(const HeartSimulation& sim) {
  for (std::size_t c = 0; c < sim.circulation.size(); ++c)
    if (sim.circulation[c].name == sim.analysis.lv_cavity) return c;
  return 0;
}

}  // namespace

BeatSetup prepare_heart_beat(const HeartSimulation& sim, const meshing::VoxelMesh& m, std::ostream* log) {
  BeatSetup setup;
  // Damping acts on the nodal velocities (in the loop), not through the stiffness:
  // stiffness-proportional damping would shrink the explicit time step by the factor w tau.
  setup.model = build_heart_model(sim, m, sim.mass_scaling, {}, sim.precision);
  if (const auto& s = setup.model.selective_mass; s && log)
    *log << "selective mass scaling: " << s->scaled_elements << " elements, +" << 100 * s->added_mass_fraction
         << " % mass (largest element x" << s->largest_element_factor << "); largest element frequency bound "
         << s->bound_frequency_before << " -> " << s->bound_frequency_after << " 1/ms\n";
  for (const auto& c : sim.circulation) {
    const auto it = std::find_if(m.cavities.begin(), m.cavities.end(), [&](const auto& s) { return s.name == c.name; });
    if (it == m.cavities.end()) CARDIO_FAIL("circulation: no cavity named '" << c.name << "' in the mesh");
    setup.cavities.push_back(&*it);
  }
  setup.activation_time = activation_times(sim.activation, m, log);
  return setup;
}

BeatLoop::BeatLoop(const HeartSimulation& sim, const meshing::VoxelMesh& mesh, BeatSetup& setup)
    : m_sim(sim),
      m_mesh(mesh),
      m_system(*setup.model.system),
      m_cavities(sim.circulation, setup.cavities, mesh.mesh.rest, sim.first_onset + sim.beats * sim.period,
                 sim.closed_loop ? &*sim.closed_loop : nullptr),
      m_twitch(sim.activation.twitch),
      m_activation_time((setup.activation_time.array() + sim.first_onset).matrix()),
      m_Ta(Eigen::VectorXd::Zero(mesh.mesh.n_elements())),
      m_state(m_system.rest_state()),
      m_lv(lv_index(sim)),
      m_t_end(sim.first_onset + sim.beats * sim.period) {
  if (sim.activation.target) m_calibration.emplace(*sim.activation.target, sim.activation.twitch.peak_tension_kPa);
  if (sim.closed_loop && sim.closed_loop->fill)
    m_fill.emplace(*sim.closed_loop->fill, m_cavities.closed_loop()->loop().vessel_compliance_mL_per_mmHg());
  if (sim.closed_loop && sim.closed_loop->afterload)
    m_afterload.emplace(*sim.closed_loop->afterload, sim.closed_loop->params.systemic_arteries);
  m_stable_dt_at_check = stable_dt();
  m_dt = sim.time_step.choose(m_stable_dt_at_check);  // a user-given dt above the estimate at rest is refused
  m_velocity_decay = sim.damping_time > 0 ? std::exp(-m_dt / sim.damping_time) : 1.0;
}

double BeatLoop::stable_dt() {
  const int iterations = m_mode.size() > 0 ? kWarmIterations : kColdIterations;
  return mechanics::stable_time_step(
      mechanics::estimate_max_frequency(m_system, m_state.x, iterations, &m_mode, inputs()),
      m_system.internal().max_damping_time());
}

void BeatLoop::begin_step() {
  m_twitch.active_tension(m_activation_time, m_t, m_Ta);
  m_cavities.set_time(m_t);
}

std::optional<circulation::Overrun> BeatLoop::step() {
  mechanics::ForceInputs in = inputs();
  in.precision = m_sim.precision;  // the step's forces; the stable-step estimate differences them in double
  const auto forces = [&](const Eigen::Matrix3Xd& x, const Eigen::Matrix3Xd& v, double, Eigen::Matrix3Xd& f) {
    m_system.forces(x, v, in, f);
    m_cavities.add_forces(x, f);
  };
  const auto project = [&](Eigen::Matrix3Xd& x, Eigen::Matrix3Xd& v, double) {
    m_system.project(x, v, 1.0, 0.0);
    try {
      m_cavities.project(m_state.mass, m_system.free_mask(), m_dt, x, v);
    } catch (const Error&) {
      // A blow-up is named at its first bad node, not as a failed cavity projection of NaN positions
      // (checked here, on failure, not every step: a serial pass over x was 0.6 % of a beat).
      if (!x.allFinite()) mechanics::check_state(m_system, m_mesh.mesh, m_state, m_dt, m_steps + 1, m_t + m_dt);
      throw;
    }
  };
  mechanics::step(mechanics::Scheme::semi_implicit_euler, m_state, m_t, m_dt, forces, project);
  if (m_sim.damping_time > 0)  // mass-proportional damping, exact decay over dt
    parallel_for(m_state.v.cols(), [&](std::int64_t i) { m_state.v.col(i) *= m_velocity_decay; });
  m_t += m_dt;
  ++m_steps;
  if (m_steps % 100 == 0) mechanics::check_state(m_system, m_mesh.mesh, m_state, m_dt, m_steps, m_t);
  const std::vector<double> volumes = m_cavities.end_of_step_volumes_mL(m_state.x);
  check_cavity_volumes(volumes);
  if (auto overrun = m_cavities.update(m_t, volumes, m_dt)) return overrun;
  if (m_calibration) calibrate_tension();
  if (m_fill) fill_blood();
  if (m_afterload) calibrate_afterload();
  if (m_t >= m_next_dt_check && !m_sim.time_step.dt) update_time_step();
  return std::nullopt;
}

void BeatLoop::update_time_step() {
  // Re-estimate the stable step: it shrinks as the law stiffens in systole and grows back after
  // it (the whole diastole at the systolic step cost 12 % more steps on the default case). While
  // the tension rises or the step shrinks, look again sooner: a fast activation front stiffens
  // the wall within 50 ms by more than the safety factor allows. The step grows by at most
  // kMaxDtGrowth per estimate: a few warm Lanczos steps can miss a mode that takes over.
  const double stable = stable_dt();
  const double ta_max = m_Ta.size() > 0 ? m_Ta.maxCoeff() : 0.0;
  const bool stiffening = stable < m_stable_dt_at_check || ta_max > m_ta_max_at_check;
  const double interval = stiffening ? kDtCheckIntervalStiffening : kDtCheckInterval;
  const double dt = std::min(m_sim.time_step.choose(stable_dt_ahead(stable, interval)), kMaxDtGrowth * m_dt);
  m_next_dt_check += interval;
  m_ta_max_at_check = ta_max;
  m_dt = dt;
  m_velocity_decay = m_sim.damping_time > 0 ? std::exp(-m_dt / m_sim.damping_time) : 1.0;
}

double BeatLoop::stable_dt_ahead(double stable, double ahead) {
  // The step taken now must stay stable until the next estimate: in systole the stable step shrank
  // by up to 3.4 % per 10 ms on the LV phantom, a third of dt_safety 0.9's margin
  // (docs/performance.md, "Fewer steps: dt_safety 0.9 and a 10 % selective-mass budget").
  double expected = stable;
  const double elapsed = m_t - m_t_at_check;
  if (m_stable_dt_at_check > 0 && stable < m_stable_dt_at_check && elapsed > 0)
    expected = stable * std::pow(std::max(0.5, stable / m_stable_dt_at_check), ahead / elapsed);
  m_stable_dt_at_check = stable;
  m_t_at_check = m_t;
  return expected;
}

bool BeatLoop::periodic() const {
  const auto& cycles = m_cavities.cycles();
  return !cycles.empty() && std::all_of(cycles.begin(), cycles.end(), [](const auto& cy) { return cy.converged(); });
}

bool BeatLoop::reached_periodic_state() const {
  const auto& cycles = m_cavities.cycles();
  const bool beat_began = std::all_of(cycles.begin(), cycles.end(), [&](const auto& cy) {
    return cy.current().index > 0 && cy.current().onset_ms >= m_t;
  });
  return beat_began && periodic() && (!m_calibration || m_calibration->reached()) && (!m_fill || m_fill->reached()) &&
         (!m_afterload || m_afterload->reached());
}

double BeatLoop::largest_edv_change() const {
  double change = 0;
  for (const circulation::BeatCycle& cy : m_cavities.cycles()) {
    const double c = cy.edv_change();
    if (!std::isfinite(c)) return c;
    change = std::max(change, c);
  }
  return change;
}

void BeatLoop::calibrate_tension() {
  if (tension_measured_every_beat()) return;
  const circulation::BeatStats& b = m_cavities.cycles()[m_lv].beats().back();
  const bool ef = m_calibration->target().quantity == TensionTarget::Quantity::ejection_fraction;
  set_peak_tension(m_calibration->next(ef ? b.ef : b.peak_pressure_mmHg));
}

void BeatLoop::fill_blood() {
  const circulation::BeatStats& beat = m_cavities.cycles()[m_lv].current();
  const auto& measured = m_fill->history();
  if (beat.index < 2 || (!measured.empty() && measured.back().first >= beat.index)) return;
  if (const double added = m_fill->next(beat.index, beat.edp_mmHg); added != 0) m_cavities.add_blood(added);
}

void BeatLoop::calibrate_afterload() {
  const circulation::ClosedLoop& loop = m_cavities.closed_loop()->loop();
  m_afterload->observe(m_dt, loop.pressure_mmHg(circulation::Compartment::systemic_arteries),
                       loop.pressure_mmHg(circulation::Compartment::systemic_veins),
                       loop.valve_flow_mL_per_ms(circulation::Valve::aortic));
  const int beat = m_cavities.cycles()[m_lv].current().index;
  if (beat > m_afterload->beat())  // the LV's onset: the beat before it is measured
    m_cavities.set_systemic_arteries(m_afterload->next(beat));
}

void BeatLoop::set_peak_tension(double kPa) {
  activation::TwitchParams p = m_twitch.params();
  p.peak_tension_kPa = kPa;
  m_twitch = activation::Twitch(p);
}

void BeatLoop::check_cavity_volumes(const std::vector<double>& volumes_mL) {
  for (std::size_t c = 0; c < volumes_mL.size(); ++c) {
    const double V = volumes_mL[c];
    if (std::isfinite(V) && V > 0) continue;
    // A blow-up: name its first bad node before the cavity.
    mechanics::check_state(m_system, m_mesh.mesh, m_state, m_dt, m_steps, m_t);
    CARDIO_FAIL("cavity " << m_sim.circulation[c].name << " has volume " << V << " mL at step " << m_steps
                          << " (t = " << m_t
                          << " ms): the wall folded through itself; lower simulation.dt_safety "
                             "or the load");
  }
}

void BeatLoop::save(BinaryWriter& w) const {
  w.u64(std::uint64_t(m_state.x.cols()));
  for (double v : {m_t, m_dt, m_next_dt_check, m_ta_max_at_check, m_stable_dt_at_check, m_t_at_check}) w.f64(v);
  w.i64(m_steps);
  for (const Eigen::Matrix3Xd* a : {&m_state.x, &m_state.v, &m_state.f, &m_mode})
    w.f64s(a->data(), std::size_t(a->size()));
  m_cavities.save(w);
  if (m_calibration) m_calibration->save(w);
  if (m_fill) m_fill->save(w);
  if (m_afterload) m_afterload->save(w);
}

void BeatLoop::restore(BinaryReader& r) {
  const std::uint64_t nodes = r.u64();
  if (nodes != std::uint64_t(m_state.x.cols()))
    CARDIO_FAIL("the checkpoint has " << nodes << " nodes, the mesh " << m_state.x.cols());
  for (double* v : {&m_t, &m_dt, &m_next_dt_check, &m_ta_max_at_check, &m_stable_dt_at_check, &m_t_at_check})
    *v = r.f64();
  m_steps = r.i64();
  m_mode.resize(3, m_state.x.cols());
  for (Eigen::Matrix3Xd* a : {&m_state.x, &m_state.v, &m_state.f, &m_mode}) r.f64s(a->data(), std::size_t(a->size()));
  m_cavities.restore(r);
  if (m_calibration) {
    m_calibration->restore(r);
    set_peak_tension(m_calibration->peak_tension_kPa());
  }
  if (m_fill) m_fill->restore(r);
  if (m_afterload) m_afterload->restore(r);
  m_velocity_decay = m_sim.damping_time > 0 ? std::exp(-m_dt / m_sim.damping_time) : 1.0;
}

}  // namespace cardio::pipeline
