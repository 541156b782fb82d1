#include "app/heart_app.hpp"

#include <filesystem>
#include <iostream>
#include <optional>

#include "cardio/core/atomic_file.hpp"
#include "cardio/core/interrupt.hpp"
#include "cardio/core/parallel.hpp"
#include "cardio/imaging/memory.hpp"
#include "cardio/io/json.hpp"
#include "cardio/io/vtu.hpp"
#include "common/exit_codes.hpp"
#include "common/figures.hpp"
#include "common/progress.hpp"
#include "heart/beat_run.hpp"
#include "heart/coarse_start.hpp"
#include "heart/output_estimate.hpp"
#include "heart/quasi_static.hpp"
#include "heart/reference_stage.hpp"
#include "mesh/input_check.hpp"
#include "mesh/mesh_cache.hpp"

namespace cardio::app {
namespace {

namespace fs = std::filesystem;
using pipeline::kExitFailed;

/// The summary of a beat run cut short ("complete": false); summary.json marks finished runs only.
constexpr const char* kIncompleteSummary = "summary.incomplete.json";

/// What a run into an old directory must remove first: results that would look finished.
std::vector<std::string> stale_outputs() {
  return {"mesh_report.json",    "mesh.vtu",         "surfaces.vtp",         "summary.json",
          kIncompleteSummary,    "final.vtu",        "series.pvd",           "timeseries.csv",
          "regional_strain.csv", "label_strain.csv", "lv_global_strain.csv", "checkpoint.bin",
          "unloaded_mesh.vtu",   "unloading.json",   "klotz_fit.csv",        "passive_calibration.json"};
}

/// What a heart config imports, for messages: "the phantom lv_ellipsoid", "the image labels.nii.gz", ...
std::string source_text(const pipeline::GeometryParams& g) {
  if (g.source == pipeline::GeometrySource::phantom)
    return "the phantom " + std::string(pipeline::name_of(g.phantom.kind));
  if (g.source == pipeline::GeometrySource::box) return "the box";
  if (g.source == pipeline::GeometrySource::image) return "the image " + g.labels_file.string();
  return "the surface " + pipeline::surface_files_text(g.surface);
}

Eigen::MatrixXd label_field(const meshing::VoxelMesh& m) {
  Eigen::MatrixXd label(1, m.mesh.n_elements());
  for (Eigen::Index e = 0; e < label.cols(); ++e) label(0, e) = m.label[std::size_t(e)];
  return label;
}

/// A beat run cut short (a beat overran its period) keeps what it computed: frames, tables,
/// final.vtu and the summary under its own name, so that summary.json still means "finished"
/// (batch, collect and --resume rely on it). Nothing to resume: it would overrun again. Exit 1.
int report_incomplete(const fs::path& out, const pipeline::BeatRunResult& h, pipeline::RunLog& log) {
  io::write_json(out / kIncompleteSummary, h.summary);
  fs::remove(out / "checkpoint.bin");
  log.error("cardiac: run failed: " + h.incomplete_reason + "\ncardiac: what was computed is in " + out.string() +
            " (frames, timeseries.csv, final.vtu; " + kIncompleteSummary +
            " with \"complete\": false); no summary.json\n");
  return kExitFailed;
}

}  // namespace

pipeline::MemoryEstimate check_heart_config(const pipeline::HeartConfig& cfg, config::Document& doc) {
  pipeline::check_input_files(cfg.mesh, doc);
  pipeline::MemoryEstimate memory = pipeline::estimate_mesh_memory(cfg.mesh);
  pipeline::check_mesh_memory(memory, doc, double(imaging::available_memory_bytes()));
  pipeline::check_input_contents(cfg.mesh, doc);
  return memory;
}

HeartRun::HeartRun(const Args& args, std::shared_ptr<config::Document> doc)
    : m_args(args), m_doc(std::move(doc)), m_cfg(pipeline::parse_heart_config(*m_doc)) {
  m_memory = check_heart_config(m_cfg, *m_doc);  // before anything large is allocated or OUTDIR is touched
  m_resolved = m_doc->resolved_yaml();
  m_simulate = m_args.command == "run" && m_cfg.simulation.has_value();
}

int HeartRun::run(Stage& stage) {
  const Args& a = m_args;
  if (a.threads > 0) set_thread_count(a.threads);
  std::optional<RunDir> dir;
  if (a.resume) {
    dir.emplace(RunDir::reopen(a, m_resolved));
    if (fs::exists(dir->path() / "summary.json")) {
      std::cout << dir->path().string() << ": the run has finished (summary.json exists); nothing to resume\n";
      return 0;
    }
    if (!fs::exists(dir->path() / "checkpoint.bin"))
      throw UsageError(dir->path().string() +
                       ": no checkpoint.bin to resume from (the run stopped before its first "
                       "checkpoint, or is not a beat run)");
  } else {
    dir.emplace(RunDir::create(a, m_cfg.mesh.name, m_resolved, stale_outputs()));
    fs::remove_all(dir->path() / "frames");
    // What `cardiac run --resume OUTDIR` needs to rebuild this run: the config and its overrides.
    write_file_atomic(dir->path() / "invocation.json", nlohmann::json{{"config", fs::absolute(a.config).string()},
                                                                      {"overrides", a.overrides},
                                                                      {"version", CARDIO_VERSION}}
                                                           .dump(2));
  }
  pipeline::RunLog& run_log = dir->log();
  run_log.out() << "cardiac " << CARDIO_VERSION << ": " << a.command << (a.resume ? " --resume " : " ") << a.config
                << " -> " << dir->path().string() << "\n";
  try {
    return run_stages(*dir, stage);
  } catch (const Interrupted& e) {
    run_log.error(std::string("cardiac: ") + e.what() + "\n");
    return pipeline::kExitInterrupted;
  } catch (const std::bad_alloc&) {
    run_log.note("cardiac: out of memory while " + stage.what + "\n");
    throw;  // main reports it
  } catch (const std::length_error&) {
    run_log.note("cardiac: out of memory while " + stage.what + "\n");
    throw;
  } catch (const std::exception& e) {
    run_log.error("cardiac: " + a.command + " failed: " + pipeline::describe(e) + "\n");
    return kExitFailed;
  }
}

int HeartRun::run_stages(RunDir& dir, Stage& stage) {
  const fs::path& out = dir.path();
  std::ostream& log = dir.log().out();
  stage.what =
      "meshing " + source_text(m_cfg.mesh.geometry) + " (estimated from the config: " + m_memory.describe() + ")";
  const pipeline::MeshStageResult r = pipeline::cached_mesh_stages(m_cfg.mesh, *m_doc, out, &log);
  pipeline::warn_about_output_size(m_cfg, m_simulate, r.mesh, dir.log().file(), std::cerr);
  const std::string elements = std::to_string(r.mesh.mesh.n_elements()) + " elements";
  // The beat's input checks (boundary selectors, pacing sites, activation image) come before any
  // output: a run that fails on its inputs leaves nothing that looks finished.
  std::optional<pipeline::BeatSetup> beat;
  if (m_simulate && m_cfg.simulation->mode == pipeline::SimulationMode::beat) {
    stage.what = "preparing the simulation of " + elements;
    beat = pipeline::prepare_heart_beat(*m_cfg.simulation, r.mesh, &log);
  }
  // The unloaded reference (unloading, passive_calibration) replaces the imaged mesh, and the
  // fitted C the config's, in the simulation; the beat is prepared again on them.
  pipeline::ReferenceStage reference;
  if (m_simulate) {
    stage.what = "unloading the reference of " + elements;
    reference = pipeline::prepare_reference(*m_cfg.simulation, r.mesh, &log);
  }
  const meshing::VoxelMesh& mesh = reference.mesh(r.mesh);
  if (beat && reference.unloading) beat = pipeline::prepare_heart_beat(*m_cfg.simulation, mesh, &log);
  stage.what = "writing the mesh outputs (" + elements + ")";
  pipeline::write_mesh_outputs(out, r, m_cfg.mesh.write_surfaces);
  if (pipeline::write_reference_outputs(out, reference)) draw_figures(dir, "klotz_fit.py");
  stage.what = "simulating " + elements;
  log << "wrote " << (out / "mesh.vtu").string() << " and " << (out / "mesh_report.json").string() << "\n";
  if (beat) return finish_beat(dir, mesh, std::move(*beat));
  if (m_simulate)
    finish_quasi_static(dir, mesh);
  else if (m_args.command == "run")
    log << "this config has no simulation sections (material, loads): meshed only (see docs/config.md)\n";
  return pipeline::kExitOk;
}

int HeartRun::finish_beat(RunDir& dir, const meshing::VoxelMesh& mesh, pipeline::BeatSetup setup) {
  const fs::path& out = dir.path();
  std::ostream& log = dir.log().out();
  pipeline::BeatRunOptions bo;
  bo.config_hash = config_hash(m_resolved);
  bo.progress_bar = pipeline::stderr_is_terminal();
  bo.resume = m_args.resume;
  // Only the beat loop polls the flag (and checkpoints): other stages keep the default
  // handlers, so that Ctrl-C stops them at once.
  install_interrupt_handlers();
  pipeline::BeatRunResult h = pipeline::run_heart_beat(*m_cfg.simulation, mesh, std::move(setup), out, &log, bo);
  io::write_vtu(out / "final.vtu", mesh.mesh, h.state.x, {{"velocity", h.state.v}},
                {{"activation_time", h.activation_time.transpose()},
                 {"active_tension", h.active_tension.transpose()},
                 {"label", label_field(mesh), true}});
  dir.stamp(h.summary);
  if (!h.incomplete_reason.empty()) return report_incomplete(out, h, dir.log());
  io::write_json(out / "summary.json", h.summary);
  fs::remove(out / "checkpoint.bin");  // finished: summary.json marks it, nothing to resume
  for (const auto& c : h.summary["cavities"])
    log << c["name"].get<std::string>() << ": EDV " << c["EDV_mL"] << " mL, ESV " << c["ESV_mL"] << " mL, EF "
        << c["EF"] << "\n";
  log << "wrote " << (out / "summary.json").string() << "\n";
  draw_figures(dir);
  return pipeline::kExitOk;
}

void HeartRun::finish_quasi_static(RunDir& dir, const meshing::VoxelMesh& mesh) {
  const fs::path& out = dir.path();
  std::ostream& log = dir.log().out();
  pipeline::HeartRunResult h = pipeline::run_quasi_static(*m_cfg.simulation, m_cfg.mesh, mesh, &log);
  Eigen::MatrixXd ta(1, mesh.mesh.n_elements());
  for (Eigen::Index e = 0; e < ta.cols(); ++e) ta(0, e) = h.active_tension[std::size_t(e)];
  io::write_vtu(out / "final.vtu", mesh.mesh, h.state.x, {{"velocity", h.state.v}},
                {{"active_tension", ta}, {"label", label_field(mesh), true}});
  dir.stamp(h.summary);
  io::write_json(out / "summary.json", h.summary);
  for (const auto& p : h.summary["probes"])
    log << "probe " << p["name"].get<std::string>() << ": final " << p["final_mm"].dump() << " mm\n";
  log << "wrote " << (out / "summary.json").string() << "\n";
}

void HeartRun::draw_figures(RunDir& dir, const std::string& script) const {
  if (!m_args.figures || !m_cfg.mesh.draw_figures) return;
  // The figures read the finished outputs; their failure does not undo the results.
  std::ostream& log = dir.log().out();
  if (figures::run_figure_script(script, dir.path(), log) != 0) {
    log << "cardiac: warning: the figures were not (all) drawn (see above); the results are complete. "
           "Retry with: ";
    if (script == "run_figures.py")
      log << "cardiac figures";
    else
      log << figures::kPython << " " << figures::script_path(script).string();
    log << " " << dir.path().string() << "\n";
  }
}

}  // namespace cardio::app
