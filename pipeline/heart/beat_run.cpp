#include "heart/beat_run.hpp"

#include <chrono>
#include <cmath>
#include <iomanip>
#include <sstream>

#include "cardio/core/binary.hpp"
#include "cardio/core/error.hpp"
#include "cardio/core/interrupt.hpp"
#include "cardio/io/series.hpp"
#include "cardio/mechanics/mesh.hpp"
#include "heart/beat_observers.hpp"
#include "heart/clinical_summary.hpp"

namespace cardio::pipeline {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr char kCheckpointMagic[] = "CARDBEAT";
// 3: the loop, then each observer; 4: + the stable-step mode; 5: + the closed loop, the blood volume,
// the tension calibration, engineering strains, twist and the arterial pressure; 6: + GLS and GCS on
// the LV endocardium per strain sample; 7: + the last stable-step estimate and its time
constexpr std::uint32_t kCheckpointVersion = 7;

/// What to change when cavity c's beat overruns its period, with the config keys that set it.
std::string overrun_advice(const HeartSimulation& sim, std::size_t c) {
  return "lengthen simulation.period (" + io::CsvTable::number(sim.period) +
         " ms), or check the contraction (activation.twitch) and " +
         (sim.closed_loop ? std::string("circulation.closed_loop")
                          : "circulation.cavities[" + std::to_string(c) + "].windkessel");
}

/// The peak tension found for activation.target, beat by beat.
json calibration_summary(const TensionCalibration& c) {
  json beats = json::array();
  for (const auto& [tension, measured] : c.history())
    beats.push_back({{"peak_tension_kPa", tension}, {"measured", measured}});
  const bool ef = c.target().quantity == TensionTarget::Quantity::ejection_fraction;
  return {{"target", ef ? "ejection_fraction" : "peak_pressure_mmHg"},
          {"value", c.target().value},
          {"tolerance_relative", c.target().tolerance},
          {"beats", beats},
          {"reached", c.reached()},
          {"peak_tension_kPa", c.peak_tension_kPa()}};
}

/// circulation.closed_loop.afterload: each measured beat's aortic pressures and the R and C it ran with.
json afterload_summary(const circulation::AfterloadCalibration& a) {
  json beats = json::array();
  for (const circulation::AfterloadBeat& b : a.history())
    beats.push_back({{"beat", b.beat},
                     {"aortic_systolic_mmHg", b.systolic_mmHg},
                     {"aortic_diastolic_mmHg", b.diastolic_mmHg},
                     {"aortic_mean_mmHg", b.mean_mmHg},
                     {"cardiac_output_L_per_min", 0.06 * b.aortic_flow_mL_per_s},
                     {"resistance_mmHg_s_per_mL", 1e-3 * b.resistance_mmHg_ms_per_mL},
                     {"compliance_mL_per_mmHg", b.compliance_mL_per_mmHg}});
  return {{"aortic_systolic_pressure_mmHg", a.target().systolic_mmHg},
          {"aortic_diastolic_pressure_mmHg", a.target().diastolic_mmHg},
          {"tolerance_mmHg", a.target().tolerance_mmHg},
          {"beats", beats},
          {"reached", a.reached()},
          {"systemic_arteries",
           {{"resistance_mmHg_s_per_mL", 1e-3 * a.systemic_arteries().resistance_mmHg_ms_per_mL},
            {"compliance_mL_per_mmHg", a.systemic_arteries().compliance_mL_per_mmHg}}}};
}

/// The closed loop: blood volume conservation, and the loop's state at the end.
json circulation_summary(const BeatLoop& loop, const TimeSeriesRecorder& series) {
  const circulation::ClosedLoopCoupling* coupling = loop.cavities().closed_loop();
  if (!coupling) return {{"model", "windkessel"}};
  json pressures;
  for (int c = 0; c < 8; ++c) {
    const auto compartment = static_cast<circulation::Compartment>(c);
    pressures[std::string(circulation::compartment_name(compartment)) + "_mmHg"] =
        coupling->loop().pressure_mmHg(compartment);
  }
  json out = {{"model", "closed_loop"},
              {"source", "Regazzoni et al. 2022, J Comput Phys 457:111083"},
              {"left_ventricle_3d", coupling->is_3d(0)},
              {"right_ventricle_3d", coupling->is_3d(1)},
              {"blood_volume_initial_mL", series.initial_blood_volume_mL()},
              {"blood_volume_final_mL", coupling->blood_volume_mL(loop.state().x)},
              {"blood_volume_added_mL", coupling->added_blood_mL()},
              {"max_blood_volume_change_relative", series.max_blood_volume_change()},
              {"pressures_at_end", pressures}};
  if (const circulation::BloodFill* fill = loop.blood_fill()) {
    json beats = json::array();
    for (const auto& [beat, edp] : fill->history()) beats.push_back({{"beat", beat}, {"lv_EDP_mmHg", edp}});
    out["fill"] = {{"lv_end_diastolic_pressure_mmHg", fill->target().lv_end_diastolic_pressure_mmHg},
                   {"tolerance_mmHg", fill->target().tolerance_mmHg},
                   {"beats", beats},
                   {"reached", fill->reached()}};
  }
  if (const circulation::AfterloadCalibration* a = loop.afterload()) out["afterload"] = afterload_summary(*a);
  return out;
}

/// Why the last beat of a cavity has no statistics.
std::string unfinished_reason(const circulation::UnfinishedBeat& u, const BeatLoop& loop, const HeartSimulation& sim) {
  return loop.cavities().cycles()[u.cavity].name() + ": beat " + std::to_string(u.beat) + " is still in " +
         std::string(circulation::phase_name(u.phase)) +
         " at the end of the simulation (t = " + io::CsvTable::number(u.t_ms) +
         " ms), so its ESV and EF are unknown: " + overrun_advice(sim, u.cavity);
}

/// After the run (its last beat finished): whether it ended periodic, after how many beats.
void log_periodic_state(const HeartSimulation& sim, const BeatLoop& loop, std::ostream& log) {
  const auto& cycles = loop.cavities().cycles();
  const std::size_t beats = cycles.empty() ? 0 : cycles[loop.lv()].beats().size();
  std::ostringstream line;  // its own stream: the log's formatting stays as it was
  line << std::fixed << std::setprecision(2);
  if (loop.periodic())
    line << "periodic after " << beats << " beats: every cavity's EDV changed by at most "
         << 100 * loop.largest_edv_change() << " % from the beat before (simulation.stop_when_periodic)";
  else
    line << "not periodic after " << beats << " beats (simulation.beats = " << sim.beats
         << "): the largest EDV change from the beat before was " << 100 * loop.largest_edv_change() << " %";
  log << line.str() << std::endl;
}

/// The run's state between two segments (a checkpoint is exactly this): the loop, each observer,
/// and the driver's own clock and schedule.
struct Checkpoint {
  fs::path file;
  std::string config_hash;
  double next = 0;       ///< simulated time of the next periodic checkpoint [ms]
  double compute_s = 0;  ///< wall time of the earlier segments of a resumed run
};

void write_checkpoint(const Checkpoint& cp, const BeatLoop& loop, const std::vector<BeatObserver*>& observers) {
  BinaryWriter w;
  w.str(cp.config_hash);
  w.f64(cp.next);
  w.f64(cp.compute_s);
  loop.save(w);
  for (const BeatObserver* o : observers) o->save(w);
  write_framed_file(cp.file, kCheckpointMagic, kCheckpointVersion, w.bytes());
}

void read_checkpoint(Checkpoint& cp, BeatLoop& loop, const std::vector<BeatObserver*>& observers) {
  BinaryReader r(read_framed_file(cp.file, kCheckpointMagic, kCheckpointVersion), cp.file.string());
  const std::string hash = r.str();
  if (hash != cp.config_hash)
    CARDIO_FAIL(cp.file.string() << ": the checkpoint was written for another config (hash " << hash << ", now "
                                 << cp.config_hash << "): a resumed run must use the same config and overrides");
  cp.next = r.f64();
  cp.compute_s = r.f64();
  try {
    loop.restore(r);
  } catch (const Error& e) {
    CARDIO_FAIL(cp.file.string() << ": " << e.what());
  }
  for (BeatObserver* o : observers) o->restore(r);
  r.expect_end();
}

json cavity_summary(const circulation::BeatCycle& cy, bool incomplete) {
  json beats = json::array();
  for (const auto& b : cy.beats())
    beats.push_back({{"beat", b.index},
                     {"EDV_mL", b.edv_mL},
                     {"EDP_mmHg", b.edp_mmHg},
                     {"ESV_mL", b.esv_mL},
                     {"SV_mL", b.sv_mL},
                     {"EF", b.ef},
                     {"stroke_work_mmHg_mL", b.stroke_work_mmHg_mL}});
  json last = cy.beats().empty() ? json(nullptr) : beats.back();
  // A run cut short: the statistics of the beat that did not finish, as far as they go.
  if (incomplete && cy.beat_index() > 0)
    beats.push_back({{"beat", cy.current().index},
                     {"complete", false},
                     {"phase_at_end", circulation::phase_name(cy.phase())},
                     {"EDV_mL", cy.current().edv_mL},
                     {"ESV_so_far_mL", cy.current().esv_mL}});
  const auto of_last = [&](const char* key) { return last.is_null() ? json(nullptr) : last[key]; };
  return {{"name", cy.name()},
          {"beats", beats},
          {"last_beat", last},
          {"EDV_mL", of_last("EDV_mL")},
          {"EDP_mmHg", of_last("EDP_mmHg")},
          {"ESV_mL", of_last("ESV_mL")},
          {"SV_mL", of_last("SV_mL")},
          {"EF", of_last("EF")},
          {"converged", cy.converged()}};
}

/// summary.json periodic_state: whether the run ended periodic, after how many beats.
json periodic_summary(const HeartSimulation& sim, const BeatLoop& loop) {
  const auto& cycles = loop.cavities().cycles();
  const double change = loop.largest_edv_change();
  const std::size_t beats = cycles.empty() ? 0 : cycles[loop.lv()].beats().size();
  return {{"stop_when_periodic", sim.stop_when_periodic},
          {"periodic", loop.periodic()},
          {"beats", beats},
          {"largest_edv_change_relative", std::isfinite(change) ? json(change) : json(nullptr)}};
}

/// summary.json of a beat (the app adds version, config and timing).
json beat_summary(const HeartSimulation& sim, const BeatLoop& loop, const BeatSetup& setup,
                  const TimeSeriesRecorder& series, const StrainRecorder& strains, std::size_t frames,
                  const std::string& incomplete) {
  const auto& cycles = loop.cavities().cycles();
  json cavities = json::array();
  for (const auto& cy : cycles) cavities.push_back(cavity_summary(cy, !incomplete.empty()));
  const double tissue0 = loop.mesh().volume.sum();
  const double tissue_end = mechanics::element_volumes(loop.mesh().mesh, loop.state().x).sum();
  json heart = {{"max_tissue_volume_change_percent", 100 * series.max_tissue_change()},
                {"tissue_volume_drift_percent", 100 * (tissue_end - tissue0) / tissue0}};
  strains.summarise(heart);
  // Peak strains over the last complete beat of the LV (onset to onset), else over the whole run.
  double window_begin = 0, window_end = loop.time() + 1;
  if (!cycles.empty() && !cycles[loop.lv()].beats().empty()) {
    window_begin = cycles[loop.lv()].beats().back().onset_ms;
    window_end = window_begin + sim.period;
  }
  json strain = strains.analysis().peaks(window_begin, window_end);
  strain["lv_cavity"] = sim.analysis.lv_cavity;
  const json analysis = {{"peak_strain", strain}, {"twist", strains.analysis().twist(window_begin, window_end)}};
  json summary = {{"mode", "beat"},
                  {"complete", incomplete.empty()},
                  {"element_count", loop.mesh().mesh.n_elements()},
                  {"node_count", loop.mesh().mesh.n_nodes()},
                  {"steps", loop.steps()},
                  {"dt_ms", loop.dt()},
                  {"simd_isa", std::string(setup.model.myocardium().simd_isa())},
                  {"t_end_ms", loop.time()},
                  {"cavities", cavities},
                  {"circulation", circulation_summary(loop, series)},
                  {"heart", heart},
                  {"analysis", analysis},
                  {"frames", frames}};
  if (!incomplete.empty()) summary["incomplete_reason"] = incomplete;
  if (const TensionCalibration* c = loop.tension_calibration())
    summary["tension_calibration"] = calibration_summary(*c);
  summary["periodic_state"] = periodic_summary(sim, loop);
  add_clinical_measures(summary, loop.cavities(), loop.lv(), sim.period, series);
  return summary;
}

json mass_scaling_summary(const mechanics::SelectiveMassScaling& sm) {
  return {{"scaled_elements", sm.scaled_elements},
          {"added_mass_fraction", sm.added_mass_fraction},
          {"largest_element_factor", sm.largest_element_factor},
          {"element_bound_before_per_ms", sm.bound_frequency_before},
          {"element_bound_after_per_ms", sm.bound_frequency_after}};
}

}  // namespace

BeatRunResult run_heart_beat(const HeartSimulation& sim, const meshing::VoxelMesh& m, const fs::path& outdir,
                             std::ostream* log) {
  return run_heart_beat(sim, m, prepare_heart_beat(sim, m, log), outdir, log, BeatRunOptions{});
}

BeatRunResult run_heart_beat(const HeartSimulation& sim, const meshing::VoxelMesh& m, BeatSetup setup,
                             const fs::path& outdir, std::ostream* log, const BeatRunOptions& options) {
  const auto t_start = std::chrono::steady_clock::now();
  BeatLoop loop(sim, m, setup);
  TimeSeriesRecorder series(sim, m);
  StrainRecorder strains(sim, loop);
  FrameWriter frames(sim, m, setup.activation_time, strains.analysis(), outdir);
  ProgressReport progress(sim, loop, log, options.progress_bar);
  // Their order is the order of the outputs of a step (and of the checkpoint's sections).
  const std::vector<BeatObserver*> observers{&series, &strains, &frames, &progress};

  Checkpoint cp{outdir / "checkpoint.bin", options.config_hash, sim.checkpoint_interval, 0};
  if (options.resume) {
    read_checkpoint(cp, loop, observers);
    if (log)
      *log << "resumed from " << cp.file.string() << " at t = " << loop.time() << " ms (step " << loop.steps() << ")"
           << std::endl;
  } else {
    fs::remove(cp.file);
  }
  // A frame per step would write gigabytes for a fraction of a beat (issue 14).
  if (sim.output_interval < loop.dt())
    CARDIO_FAIL("simulation.output_interval: " << sim.output_interval << " ms is below the time step dt = " << loop.dt()
                                               << " ms; frames are written at most once per step: give "
                                               << "at least " << loop.dt() << " ms (10 ms is the default)");
  if (log)
    *log << "beat: " << sim.beats << " beats to t = " << loop.t_end() << " ms, dt = " << loop.dt() << " ms"
         << std::endl;

  // The tables are rewritten whole, so only at checkpoints and at the end (not every frame): a
  // stopped run's tables end at its checkpoint, where a resumed run continues them.
  const auto write_tables = [&]() {
    series.write(outdir);
    strains.write(outdir);
  };
  const auto segment_start = std::chrono::steady_clock::now();
  const auto compute_s = [&]() {
    return cp.compute_s + std::chrono::duration<double>(std::chrono::steady_clock::now() - segment_start).count();
  };
  const auto checkpoint = [&]() {
    cp.compute_s = compute_s();
    write_tables();
    frames.flush();  // the checkpoint lists the frames written
    write_checkpoint(cp, loop, observers);
  };
  std::string incomplete;  // why the run stopped before t_end, or why its last beat has no statistics
  while (!loop.done()) {
    loop.begin_step();
    for (BeatObserver* o : observers) o->before_step(loop);
    // Checkpoint after this time's outputs: a resumed run starts with its step.
    if (const int sig = interrupt_signal()) {
      progress.pause();
      checkpoint();
      throw Interrupted(sig, "stopped by signal " + std::to_string(sig) + " at t = " + std::to_string(loop.time()) +
                                 " ms; checkpoint written to " + cp.file.string() +
                                 " (resume with: cardiac run --resume " + outdir.string() + ")");
    }
    if (sim.checkpoint_interval > 0 && loop.time() >= cp.next - 1e-9) {
      cp.next += sim.checkpoint_interval;
      checkpoint();
    }
    if (const auto overrun = loop.step()) {
      incomplete = overrun->message + ": " + overrun_advice(sim, overrun->cavity);
      break;
    }
    for (BeatObserver* o : observers) o->after_step(loop);
    if (sim.stop_when_periodic && loop.reached_periodic_state()) break;
  }
  progress.pause();
  if (incomplete.empty()) {  // a run stopped by an overrun keeps its unfinished beats as they are
    if (const auto unfinished = loop.finish()) incomplete = unfinished_reason(*unfinished, loop, sim);
    if (incomplete.empty()) progress.log_last_beat(loop);
  }
  if (sim.stop_when_periodic && log) log_periodic_state(sim, loop, *log);
  frames.write_frame(loop);
  frames.flush();
  write_tables();

  BeatRunResult out;
  out.incomplete_reason = incomplete;
  out.summary = beat_summary(sim, loop, setup, series, strains, frames.frames(), incomplete);
  out.summary["resumed"] = options.resume;
  out.summary["simulate_time_s"] =
      options.resume ? compute_s() : std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
  if (const auto& sm = setup.model.selective_mass) out.summary["selective_mass_scaling"] = mass_scaling_summary(*sm);
  out.activation_time = setup.activation_time;
  out.active_tension = loop.active_tension();
  out.state = loop.state();
  return out;
}

}  // namespace cardio::pipeline
