#include "heart/heart_beat.hpp"

#include <Eigen/LU>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <sstream>

#include "cardio/activation/activation_times.hpp"
#include "cardio/activation/twitch.hpp"
#include "cardio/analysis/strain.hpp"
#include "cardio/analysis/wall.hpp"
#include "cardio/circulation/beat.hpp"
#include "cardio/circulation/volume_constraint.hpp"
#include "cardio/core/binary.hpp"
#include "cardio/core/error.hpp"
#include "cardio/core/interrupt.hpp"
#include "cardio/core/parallel.hpp"
#include "cardio/imaging/image_io.hpp"
#include "cardio/io/series.hpp"
#include "cardio/io/vtu.hpp"
#include "cardio/mechanics/myocardium.hpp"
#include "cardio/mechanics/integrators.hpp"
#include "heart/beat_analysis.hpp"
#include "heart/heart_run.hpp"
#include "common/progress.hpp"

namespace cardio::pipeline {
namespace {

namespace fs = std::filesystem;
using circulation::CavityCommand;
using nlohmann::json;

Eigen::VectorXd activation_times(const ActivationParams& a, const meshing::VoxelMesh& m, std::ostream* log) {
  if (a.mode == "synchronous") return activation::synchronous_activation(m, 0.0);
  if (a.mode == "image")
    return activation::activation_from_image(m, imaging::read_scalar_image(a.image), a.image.string());
  std::vector<activation::PacingSite> sites;
  for (const auto& s : a.sites)
    sites.push_back(s.at_label ? activation::PacingSite::at_label(s.label, s.time, s.where)
                               : activation::PacingSite::at_point(s.point, s.time, s.where));
  activation::EikonalOptions o;
  o.velocity = {a.velocity_fibre, a.velocity_cross};
  const Eigen::VectorXd t = activation::eikonal_activation(m, sites, o);
  if (log) *log << "eikonal activation: latest element at " << t.maxCoeff() << " ms after the stimulus\n";
  return t;
}

/// Fibre stretch of every element relative to the rest state, lambda = |F f0| (F at the centre).
Eigen::VectorXd fibre_stretch(const mechanics::HexMesh& mesh, const Eigen::Matrix3Xd& x) {
  Eigen::VectorXd lambda(mesh.n_elements());
  parallel_for(mesh.n_elements(), [&](std::int64_t e) {
    const mechanics::Hex& h = mesh.hexes[std::size_t(e)];
    const Eigen::Matrix3d F = analysis::centre_deformation_gradient(mechanics::gather(mesh.rest, h), mechanics::gather(x, h));
    lambda[e] = (F * mesh.fibre.col(e)).norm();
  });
  return lambda;
}

/// What to change when cavity c's beat overruns its period, with the config keys that set it.
std::string overrun_advice(const HeartSimulation& sim, std::size_t c) {
  return "lengthen simulation.period (" + io::CsvTable::number(sim.period) +
         " ms), or check the contraction (activation.twitch) and circulation.cavities[" + std::to_string(c) +
         "].windkessel";
}

/// The last beat of every cavity ends at the end of the run. A cavity still contracting or ejecting
/// there has no final statistics: the reason, or "" if every last beat is complete.
std::string finish_last_beats(std::vector<circulation::BeatCycle>& cycles, const HeartSimulation& sim) {
  std::string reason;
  for (std::size_t c = 0; c < cycles.size(); ++c) {
    const int beat = cycles[c].beat_index();
    const std::string phase(circulation::phase_name(cycles[c].phase()));
    if (!cycles[c].finish() && reason.empty())
      reason = cycles[c].name() + ": beat " + std::to_string(beat) + " is still in " + phase +
               " at the end of the simulation (t = " + io::CsvTable::number(cycles[c].time()) +
               " ms), so its ESV and EF are unknown: " + overrun_advice(sim, c);
  }
  return reason;
}

}  // namespace

BeatSetup prepare_heart_beat(const HeartSimulation& sim, const meshing::VoxelMesh& m, std::ostream* log) {
  BeatSetup setup;
  // Damping acts on the nodal velocities (in the loop), not through the stiffness:
  // stiffness-proportional damping would shrink the explicit time step by the factor w tau.
  setup.model = build_heart_model(sim, m, sim.mass_scaling);
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

BeatRunResult run_heart_beat(const HeartSimulation& sim, const meshing::VoxelMesh& m, const fs::path& outdir,
                             std::ostream* log) {
  return run_heart_beat(sim, m, prepare_heart_beat(sim, m, log), outdir, log, BeatRunOptions{});
}

namespace {

constexpr char kCheckpointMagic[] = "CARDBEAT";
constexpr std::uint32_t kCheckpointVersion = 2;

/// Everything the time loop carries from one step to the next: a checkpoint is exactly this.
struct LoopState {
  double t = 0, dt = 0, next_frame = 0, next_row = 0, next_sample = 0, next_dt_check = 50, next_checkpoint = 0;
  std::int64_t steps = 0;
  std::vector<io::PvdFrame> frames;
  std::vector<std::vector<std::string>> rows;  ///< timeseries.csv rows so far
  Eigen::VectorXd lambda_ed, lambda_es;        ///< fibre stretch at end-diastole / end-systole
  double thickness_ed = 0, thickness_es = 0, max_tissue_change = 0;
  std::int64_t previous_phase = 0;
  double compute_s = 0;                        ///< wall time of the earlier segments of a resumed run
};

void save_vector(BinaryWriter& w, const Eigen::VectorXd& v) {
  w.u64(std::uint64_t(v.size()));
  w.f64s(v.data(), std::size_t(v.size()));
}
Eigen::VectorXd read_vector(BinaryReader& r) {
  Eigen::VectorXd v(Eigen::Index(r.u64()));
  r.f64s(v.data(), std::size_t(v.size()));
  return v;
}

void write_checkpoint(const fs::path& file, const std::string& config_hash, const LoopState& L,
                      const mechanics::NodeState& s, const std::vector<circulation::BeatCycle>& cycles,
                      const BeatAnalysis& analysis) {
  BinaryWriter w;
  w.str(config_hash);
  w.u64(std::uint64_t(s.x.cols()));
  for (double v : {L.t, L.dt, L.next_frame, L.next_row, L.next_sample, L.next_dt_check, L.next_checkpoint, L.thickness_ed,
                   L.thickness_es, L.max_tissue_change, L.compute_s})
    w.f64(v);
  w.i64(L.steps);
  w.i64(L.previous_phase);
  for (const Eigen::Matrix3Xd* a : {&s.x, &s.v, &s.f}) w.f64s(a->data(), std::size_t(a->size()));
  for (const auto& c : cycles) c.save(w);
  w.u64(L.frames.size());
  for (const auto& f : L.frames) {
    w.f64(f.time_ms);
    w.str(f.file);
  }
  w.u64(L.rows.size());
  for (const auto& row : L.rows) {
    w.u64(row.size());
    for (const auto& cell : row) w.str(cell);
  }
  save_vector(w, L.lambda_ed);
  save_vector(w, L.lambda_es);
  analysis.save(w);
  write_framed_file(file, kCheckpointMagic, kCheckpointVersion, w.bytes());
}

void read_checkpoint(const fs::path& file, const std::string& config_hash, LoopState& L, mechanics::NodeState& s,
                     std::vector<circulation::BeatCycle>& cycles, BeatAnalysis& analysis) {
  BinaryReader r(read_framed_file(file, kCheckpointMagic, kCheckpointVersion), file.string());
  const std::string hash = r.str();
  if (hash != config_hash)
    CARDIO_FAIL(file.string() << ": the checkpoint was written for another config (hash " << hash << ", now "
                              << config_hash << "): a resumed run must use the same config and overrides");
  const std::uint64_t nodes = r.u64();
  if (nodes != std::uint64_t(s.x.cols()))
    CARDIO_FAIL(file.string() << ": the checkpoint has " << nodes << " nodes, the mesh " << s.x.cols());
  for (double* v : {&L.t, &L.dt, &L.next_frame, &L.next_row, &L.next_sample, &L.next_dt_check, &L.next_checkpoint,
                    &L.thickness_ed, &L.thickness_es, &L.max_tissue_change, &L.compute_s})
    *v = r.f64();
  L.steps = r.i64();
  L.previous_phase = r.i64();
  for (Eigen::Matrix3Xd* a : {&s.x, &s.v, &s.f}) r.f64s(a->data(), std::size_t(a->size()));
  for (auto& c : cycles) c.restore(r);
  L.frames.resize(r.u64());
  for (auto& f : L.frames) {
    f.time_ms = r.f64();
    f.file = r.str();
  }
  L.rows.resize(r.u64());
  for (auto& row : L.rows) {
    row.resize(r.u64());
    for (auto& cell : row) cell = r.str();
  }
  L.lambda_ed = read_vector(r);
  L.lambda_es = read_vector(r);
  analysis.restore(r);
  r.expect_end();
}

}  // namespace

BeatRunResult run_heart_beat(const HeartSimulation& sim, const meshing::VoxelMesh& m, BeatSetup setup,
                             const fs::path& outdir, std::ostream* log, const BeatRunOptions& options) {
  const auto t_start = std::chrono::steady_clock::now();
  const mechanics::HexMesh& mesh = m.mesh;
  const auto n_el = mesh.n_elements();
  mechanics::MassSpringSystem& sys = *setup.model.system;
  mechanics::GuccioneForces& guccione = *setup.model.myocardium;

  // --- cavities and their circulation ---
  const std::vector<const meshing::CavitySurface*>& cavity = setup.cavities;
  std::vector<circulation::BeatCycle> cycles;
  std::size_t lv = 0;
  const double t_end = sim.first_onset + sim.beats * sim.period;
  for (std::size_t c = 0; c < sim.circulation.size(); ++c) {
    const auto& cc = sim.circulation[c];
    circulation::BeatParams beat = cc.beat;
    beat.end_ms = t_end;  // the last beat ends with the run: no onset of a beat that is not simulated
    cycles.emplace_back(cc.name, beat, cc.windkessel, 0.0, circulation::cavity_volume_mm3(*cavity[c], mesh.rest) / 1000.0);
    if (cc.name == sim.analysis.lv_cavity) lv = c;
  }
  BeatAnalysis analysis(sim.analysis, m, *cavity[lv]);

  // --- activation ---
  const Eigen::VectorXd& t_rel = setup.activation_time;
  const Eigen::VectorXd t_act = (t_rel.array() + sim.first_onset).matrix();
  const activation::Twitch twitch(sim.activation.twitch);
  Eigen::VectorXd Ta = Eigen::VectorXd::Zero(n_el);

  // --- state: fresh, or from the checkpoint ---
  mechanics::NodeState s = sys.rest_state();
  const auto stable_dt = [&]() {
    return mechanics::stable_time_step(mechanics::estimate_max_frequency(sys, s.x), sys.internal().max_damping_time());
  };
  // A user-given step above the estimate at rest would blow up within a few steps: refused unless forced.
  if (sim.dt > 0 && !options.resume && !sim.force_dt && sim.dt > stable_dt())
    CARDIO_FAIL("simulation.dt: " << sim.dt << " ms is above the stability estimate " << stable_dt()
                                  << " ms of this model at rest; use a smaller dt (or leave it unset: the estimate x "
                                     "simulation.dt_safety), or set simulation.force_dt: true to run anyway");
  const auto estimate_dt = [&]() { return sim.dt > 0 ? sim.dt : sim.dt_safety * stable_dt(); };
  const fs::path checkpoint = outdir / "checkpoint.bin";
  LoopState L;
  if (options.resume) {
    read_checkpoint(checkpoint, options.config_hash, L, s, cycles, analysis);
    if (log) *log << "resumed from " << checkpoint.string() << " at t = " << L.t << " ms (step " << L.steps << ")" << std::endl;
  } else {
    L.dt = estimate_dt();
    L.previous_phase = cycles.empty() ? 0 : std::int64_t(cycles[0].phase());
    L.next_checkpoint = sim.checkpoint_interval;
    fs::remove(checkpoint);
  }
  double& t = L.t;
  double& dt = L.dt;
  // A frame per step would write gigabytes for a fraction of a beat (issue 14).
  if (sim.output_interval < dt)
    CARDIO_FAIL("simulation.output_interval: " << sim.output_interval << " ms is below the time step dt = " << dt
                                               << " ms; frames are written at most once per step: give at least "
                                               << dt << " ms (10 ms is the default)");
  if (log) *log << "beat: " << sim.beats << " beats to t = " << t_end << " ms, dt = " << dt << " ms" << std::endl;

  // --- outputs as we go ---
  fs::create_directories(outdir / "frames");
  io::CsvTable series{{"time_ms"}, {}};
  for (const auto& c : sim.circulation)
    for (const char* col : {"_volume_mL", "_pressure_mmHg", "_phase"}) series.columns.push_back(c.name + col);
  series.columns.push_back("tissue_volume_mL");
  const double tissue0 = m.volume.sum();
  Eigen::MatrixXd tact_field = t_rel.transpose(), label_field(1, n_el);
  for (Eigen::Index e = 0; e < n_el; ++e) label_field(0, e) = m.label[std::size_t(e)];
  const auto write_frame = [&]() {
    char name[64];
    std::snprintf(name, sizeof name, "frames/frame_%05zu.vtu", L.frames.size());
    std::vector<io::Field> cells{{"activation_time", tact_field}, {"active_tension", Ta.transpose()}, {"label", label_field, true}};
    for (auto& f : analysis.frame_fields(s.x)) cells.push_back(std::move(f));
    io::write_vtu(outdir / name, mesh, s.x, {{"velocity", s.v}}, cells);
    L.frames.push_back({t, name});
    io::write_pvd(outdir / "series.pvd", L.frames);
  };
  // The tables are rewritten whole, so only at checkpoints and at the end (not every frame): a
  // stopped run's tables end at its checkpoint, where a resumed run continues them.
  const auto write_tables = [&]() {
    series.rows = L.rows;
    io::write_csv(outdir / "timeseries.csv", series);
    io::write_csv(outdir / "regional_strain.csv", analysis.regional_table());
    io::write_csv(outdir / "label_strain.csv", analysis.label_table());
  };

  std::vector<double> impulse(cycles.size());
  std::vector<circulation::CoupledResult> coupled(cycles.size());
  std::vector<CavityCommand> cmd(cycles.size());
  double velocity_decay = sim.damping_time > 0 ? std::exp(-dt / sim.damping_time) : 1.0;
  const auto forces = [&](const Eigen::Matrix3Xd& x, const Eigen::Matrix3Xd& v, double, Eigen::Matrix3Xd& f) {
    sys.forces(x, v, 1.0, f);
    for (std::size_t c = 0; c < cycles.size(); ++c)
      if (cmd[c].mode == CavityCommand::Mode::pressure)
        circulation::add_pressure_forces(*cavity[c], x, cmd[c].pressure_mmHg * units::kMmHgInKPa, f);
  };
  const auto project = [&](Eigen::Matrix3Xd& x, Eigen::Matrix3Xd& v, double) {
    sys.project(x, v, 1.0, 0.0);
    for (std::size_t c = 0; c < cycles.size(); ++c) {
      if (cmd[c].mode == CavityCommand::Mode::volume)
        impulse[c] += circulation::project_volume(*cavity[c], s.mass, sys.free_mask(), cmd[c].volume_mL * 1000.0, dt, x, &v)
                          .impulse(dt);
      else if (cmd[c].mode == CavityCommand::Mode::windkessel)
        coupled[c] = circulation::project_volume_windkessel(*cavity[c], s.mass, sys.free_mask(), cycles[c].windkessel(),
                                                            cmd[c].volume_mL, dt, x, &v);
    }
  };
  const auto segment_start = std::chrono::steady_clock::now();
  const auto compute_s = [&]() {
    return L.compute_s + std::chrono::duration<double>(std::chrono::steady_clock::now() - segment_start).count();
  };
  Progress progress("simulated", t_end, log, options.progress_bar);
  std::string incomplete;  // why the run stopped before t_end, or why its last beat has no statistics
  while (t < t_end - 1e-9) {
    twitch.active_tension(t_act, t, Ta);
    guccione.set_active_tension(std::vector<double>(Ta.data(), Ta.data() + n_el));
    for (std::size_t c = 0; c < cycles.size(); ++c) {
      cmd[c] = cycles[c].command(t);
      impulse[c] = 0;
    }
    if (t >= L.next_row - 1e-9) {
      std::vector<std::string> row{io::CsvTable::number(t)};
      for (const auto& cy : cycles) {
        row.push_back(io::CsvTable::number(cy.volume_mL()));
        row.push_back(io::CsvTable::number(cy.pressure_mmHg()));
        row.emplace_back(circulation::phase_name(cy.phase()));
      }
      const double tissue = mechanics::element_volumes(mesh, s.x).sum();
      L.max_tissue_change = std::max(L.max_tissue_change, std::abs(tissue - tissue0) / tissue0);
      row.push_back(io::CsvTable::number(tissue / 1000.0));
      L.rows.push_back(std::move(row));
      L.next_row += 1.0;
    }
    if (t >= L.next_sample - 1e-9) {
      analysis.sample(t, s.x);
      L.next_sample += sim.analysis.interval;
    }
    if (t >= L.next_frame - 1e-9) {
      check_physical_state(m, s.x, "beat at t = " + io::CsvTable::number(t) + " ms",
                           "the time step is too large (lower simulation.dt_safety or leave simulation.dt unset), "
                           "or the loads too large (active tension, pressures) for this mesh");
      write_frame();
      L.next_frame += sim.output_interval;
    }
    // Checkpoint at the top of the loop, after this time's outputs: a resumed run starts here.
    if (const int sig = interrupt_signal()) {
      progress.finish();
      L.compute_s = compute_s();
      write_tables();
      write_checkpoint(checkpoint, options.config_hash, L, s, cycles, analysis);
      throw Interrupted(sig, "stopped by signal " + std::to_string(sig) + " at t = " + std::to_string(t) +
                                 " ms; checkpoint written to " + checkpoint.string() + " (resume with: cardiac run --resume " +
                                 outdir.string() + ")");
    }
    if (sim.checkpoint_interval > 0 && t >= L.next_checkpoint - 1e-9) {
      L.next_checkpoint += sim.checkpoint_interval;
      L.compute_s = compute_s();
      write_tables();
      write_checkpoint(checkpoint, options.config_hash, L, s, cycles, analysis);
    }
    mechanics::step(mechanics::Scheme::semi_implicit_euler, s, t, dt, forces, project);
    if (sim.damping_time > 0) s.v *= velocity_decay;  // mass-proportional damping, exact decay over dt
    t += dt;
    ++L.steps;
    if (L.steps % 100 == 0) mechanics::check_state(sys, mesh, s, dt, L.steps, t);
    for (std::size_t c = 0; c < cycles.size(); ++c) {
      const double V = circulation::cavity_volume_mm3(*cavity[c], s.x) / 1000.0;
      if (!(std::isfinite(V) && V > 0)) {  // a blow-up: name its first bad node before the cavity
        mechanics::check_state(sys, mesh, s, dt, L.steps, t);
        CARDIO_FAIL("cavity " << sim.circulation[c].name << " has volume " << V << " mL at step " << L.steps << " (t = " << t
                              << " ms): the wall folded through itself; lower simulation.dt_safety or the load");
      }
      double p = cmd[c].pressure_mmHg;
      if (cmd[c].mode == CavityCommand::Mode::volume) p = impulse[c] / dt / units::kMmHgInKPa;
      if (cmd[c].mode == CavityCommand::Mode::windkessel) p = coupled[c].pressure_mmHg;
      try {
        cycles[c].update(t, V, p);
      } catch (const circulation::BeatOverrun& e) {  // stop here, but keep what was computed
        incomplete = std::string(e.what()) + ": " + overrun_advice(sim, c);
      }
    }
    if (!incomplete.empty()) break;
    if (!cycles.empty() && std::int64_t(cycles[lv].phase()) != L.previous_phase) {
      using circulation::Phase;
      const auto& cy = cycles[lv];
      if (cy.phase() == Phase::isovolumic_contraction) {
        L.lambda_ed = fibre_stretch(mesh, s.x);
        L.thickness_ed = analysis::mean_wall_thickness(m, s.x);
        analysis.end_diastole(t, s.x);
      }
      if (L.previous_phase == std::int64_t(Phase::ejection)) {
        L.lambda_es = fibre_stretch(mesh, s.x);
        L.thickness_es = analysis::mean_wall_thickness(m, s.x);
      }
      if (log) {
        progress.finish();
        std::ostringstream line;
        line << std::fixed << "t = " << std::setprecision(1) << t << " ms: " << cy.name() << " "
             << circulation::phase_name(cy.phase()) << ", V = " << std::setprecision(3) << cy.volume_mL()
             << " mL, p = " << std::setprecision(1) << cy.pressure_mmHg() << " mmHg";
        *log << line.str() << std::endl;
      }
      L.previous_phase = std::int64_t(cy.phase());
    }
    if (t >= L.next_dt_check && sim.dt == 0) {  // stiffening law: re-estimate the stable step every 50 ms
      dt = std::min(dt, estimate_dt());
      velocity_decay = sim.damping_time > 0 ? std::exp(-dt / sim.damping_time) : 1.0;
      L.next_dt_check += 50;
    }
    if (L.steps % 64 == 0) {
      const int beat = cycles.empty() ? 0 : cycles[lv].beat_index();
      progress.update(t, "beat " + std::to_string(std::max(beat, 0)) + "/" + std::to_string(sim.beats));
    }
  }
  progress.finish();
  if (incomplete.empty()) incomplete = finish_last_beats(cycles, sim);
  write_frame();
  write_tables();

  // --- summary ---
  BeatRunResult out;
  out.incomplete_reason = incomplete;
  json cavities = json::array();
  for (const auto& cy : cycles) {
    json beats = json::array();
    for (const auto& b : cy.beats())
      beats.push_back({{"beat", b.index}, {"EDV_mL", b.edv_mL}, {"ESV_mL", b.esv_mL}, {"SV_mL", b.sv_mL},
                       {"EF", b.ef}, {"stroke_work_mmHg_mL", b.stroke_work_mmHg_mL}});
    json last = cy.beats().empty() ? json(nullptr) : beats.back();
    // A run cut short: the statistics of the beat that did not finish, as far as they go.
    if (!incomplete.empty() && cy.beat_index() > 0)
      beats.push_back({{"beat", cy.current().index}, {"complete", false}, {"phase_at_end", circulation::phase_name(cy.phase())},
                       {"EDV_mL", cy.current().edv_mL}, {"ESV_so_far_mL", cy.current().esv_mL}});
    cavities.push_back({{"name", cy.name()}, {"beats", beats}, {"last_beat", last},
                        {"EDV_mL", last.is_null() ? json(nullptr) : last["EDV_mL"]},
                        {"ESV_mL", last.is_null() ? json(nullptr) : last["ESV_mL"]},
                        {"SV_mL", last.is_null() ? json(nullptr) : last["SV_mL"]},
                        {"EF", last.is_null() ? json(nullptr) : last["EF"]},
                        {"converged", cy.converged()}});
  }
  const double tissue_end = mechanics::element_volumes(mesh, s.x).sum();
  json heart = {{"max_tissue_volume_change_percent", 100 * L.max_tissue_change},
                {"tissue_volume_drift_percent", 100 * (tissue_end - tissue0) / tissue0}};
  if (L.lambda_ed.size() && L.lambda_es.size()) {
    heart["fibre_shortening_end_systole"] = (L.lambda_es.array() / L.lambda_ed.array()).mean() - 1.0;
    heart["wall_thickening"] = L.thickness_es / L.thickness_ed - 1.0;
    heart["wall_thickness_ed_mm"] = L.thickness_ed;
    heart["wall_thickness_es_mm"] = L.thickness_es;
  }
  // Peak strains over the last complete beat of the LV (onset to onset), else over the whole run.
  double window_begin = 0, window_end = t + 1;
  if (!cycles.empty() && !cycles[lv].beats().empty()) {
    window_begin = cycles[lv].beats().back().onset_ms;
    window_end = window_begin + sim.period;
  }
  json strain = analysis.peaks(window_begin, window_end);
  strain["lv_cavity"] = sim.analysis.lv_cavity;
  out.summary = {{"mode", "beat"},
                 {"complete", incomplete.empty()},
                 {"element_count", n_el},
                 {"node_count", mesh.n_nodes()},
                 {"steps", L.steps},
                 {"dt_ms", dt},
                 {"simd_isa", std::string(guccione.simd_isa())},
                 {"t_end_ms", t},
                 {"cavities", cavities},
                 {"heart", heart},
                 {"analysis", {{"peak_strain", strain}}},
                 {"frames", L.frames.size()},
                 {"resumed", options.resume},
                 {"simulate_time_s", options.resume ? compute_s() : std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count()}};
  if (!incomplete.empty()) out.summary["incomplete_reason"] = incomplete;
  if (const auto& sm = setup.model.selective_mass)
    out.summary["selective_mass_scaling"] = {{"scaled_elements", sm->scaled_elements},
                                             {"added_mass_fraction", sm->added_mass_fraction},
                                             {"largest_element_factor", sm->largest_element_factor},
                                             {"element_bound_before_per_ms", sm->bound_frequency_before},
                                             {"element_bound_after_per_ms", sm->bound_frequency_after}};
  out.activation_time = t_rel;
  out.active_tension = Ta;
  out.state = std::move(s);
  return out;
}

}  // namespace cardio::pipeline
