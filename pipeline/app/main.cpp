// cardiac: command-line entry point. Exit codes: 0 success, 1 the run failed (simulation
// error, unstable or unconverged solve), 2 bad usage, bad config or input (nothing was computed).
#include <Eigen/Geometry>
#include <chrono>
#include <numbers>
#include <cmath>
#include <type_traits>
#include <ctime>
#include <filesystem>
#include <optional>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <new>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

#include "bench.hpp"
#include "cardio/core/atomic_file.hpp"
#include "cardio/core/binary.hpp"
#include "cardio/core/dir_lock.hpp"
#include "cardio/core/error.hpp"
#include "cardio/core/interrupt.hpp"
#include "cardio/core/parallel.hpp"
#include "cardio/io/json.hpp"
#include "cardio/io/vtu.hpp"
#include "cardio/imaging/image_io.hpp"
#include "cardio/imaging/memory.hpp"
#include "cardio/phantoms/phantoms.hpp"
#include "cohort/batch.hpp"
#include "common/exit_codes.hpp"
#include "blocks/experiments.hpp"
#include "common/figures.hpp"
#include "config/heart_config.hpp"
#include "heart/heart_beat.hpp"
#include "heart/heart_run.hpp"
#include "mesh/input_check.hpp"
#include "common/progress.hpp"
#include "config/mesh_config.hpp"
#include "mesh/mesh_stage.hpp"
#include "mesh/memory_estimate.hpp"
#include "heart/output_estimate.hpp"
#include "config/run_config.hpp"
#include "common/run_log.hpp"
#include "app/runtime_env.hpp"
#include "mesh/mesh_cache.hpp"

namespace fs = std::filesystem;
using namespace cardio;

namespace {

using pipeline::kExitFailed;
using pipeline::kExitInterrupted;
using pipeline::kExitUsage;
/// The summary of a beat run cut short ("complete": false); summary.json marks finished runs only.
constexpr const char* kIncompleteSummary = "summary.incomplete.json";

/// Bad usage found after parsing the arguments (e.g. an output path that is a file).
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// What the command is building, and how large where known, for main's message when an allocation
/// fails (std::bad_alloc, std::length_error). Owned by main and passed down; the commands update
/// it as they go (it is read only after the failure, so it is not restored on the way out).
struct Stage {
  std::string what = "starting";
};

const char* kHelp = R"(cardiac - image-based cardiac mass-spring simulation (version )" CARDIO_VERSION R"()

Usage:
  cardiac run CONFIG.yaml [-o OUTDIR] [--threads N] [--set KEY.PATH=VALUE]... [--no-figures]
  cardiac run --resume OUTDIR [--threads N] [--no-figures]
  cardiac validate CONFIG.yaml [--set KEY.PATH=VALUE]...
  cardiac mesh CONFIG.yaml [-o OUTDIR] [--threads N] [--set KEY.PATH=VALUE]...
  cardiac batch MANIFEST.yaml -o BATCH_DIR [--executor local|slurm] [-j N] [--threads T] [--submit] [--wait]
                [--skip-invalid]
  cardiac collect BATCH_DIR [--no-figures]
  cardiac phantom lv|biv -o OUTDIR [--voxel-size MM] [--fibres land_benchmark|streeter]
                  [--rotate AX,AY,AZ,DEG] [--format nii.gz|nii|mha|nrrd]
  cardiac bench [--sizes N1,N2,...] [--threads T1,T2,...] [--element E1,E2,...] [--seconds S] [--isa all] [--json FILE]
  cardiac figures RUN_DIR
  cardiac --help | --version

run       Validate CONFIG, write OUTDIR/config.resolved.yaml, solve, then write
          OUTDIR/final.vtu (point data `displacement` [mm]) and OUTDIR/summary.json.
          summary.json is written last: its presence marks a finished run.
          OUTDIR defaults to results/<name from the config>.
validate  Check a config (types, ranges, units, unknown keys) and its input files (readable, in
          the expected format, the roles' labels present) without meshing or running.
mesh      Import the images or surface of a heart config, compute fibres and voxelize:
          OUTDIR/mesh.vtu, surfaces.vtp, cavity_<name>.vtp and mesh_report.json (last).
phantom   Write a synthetic heart as label and fibre images (labels, fibre, sheet):
          lv = the truncated-ellipsoid LV of Land et al. 2015, biv = a biventricular phantom.
          --rotate rotates the whole phantom (an oblique direction matrix).
batch     Run a cohort (docs/cohorts.md): all cases of MANIFEST (a base config plus per-case
          overrides and inputs) are checked first (problems listed per case, exit 2; with
          --skip-invalid the valid cases run, the invalid ones are listed and in batch.json as
          "invalid", and the exit code is 2).
          local: -j N parallel `cardiac run` processes into BATCH_DIR/<case> of --threads T
          threads each (default CPUs / N; N x T at most the CPUs), results in BATCH_DIR/batch.json. slurm: writes BATCH_DIR/batch.sbatch (a job array); --submit
          runs sbatch, --wait waits for the array to end and checks every case.
collect   Merge BATCH_DIR/*/summary.json into BATCH_DIR/cohort.csv (one row per case) and draw
          cohort figures (scripts/figures/cohort_figures.py).
bench     Time force evaluation + one Verlet step on voxel blocks, per element type
          (--element heart|sampled_axes|one_point|bourguignon_cani|baudet, or a list; default all
          four; heart = sampled_axes, the element hearts use; default sizes 1e3,1e4,1e5,1e6
          elements at 1 and 2 threads; --isa all: sampled_axes once per SIMD build the CPU runs).
figures   Draw RUN_DIR/figures/*.png + *.pdf (PV loops, regional strain, bull's-eyes, J, 3-D view)
          with scripts/figures/run_figures.py and /usr/bin/python3 (docs/figures.md).

Exit codes: 0 success; 1 the run failed; 2 bad usage, invalid config or input file; 75 stopped by SIGTERM or
SIGINT after writing OUTDIR/checkpoint.bin (continue with: cardiac run --resume OUTDIR).
)";

struct Args {
  std::string command;
  bool resume = false;  ///< run --resume OUTDIR
  std::string config;
  std::string outdir;
  int threads = 0;
  std::vector<std::string> overrides;
  std::vector<long> sizes;
  std::vector<std::string> elements;
  std::vector<int> thread_list;
  double seconds = 1.0;
  bool all_isas = false;
  std::string json;
  // phantom
  double voxel_size = 1.0;
  std::string fibres = "land_benchmark";
  std::vector<double> rotate;
  std::string format = "nii.gz";
  // batch, collect
  std::string executor = "local";
  int jobs = 1;
  bool jobs_given = false;
  bool submit = false, wait = false, figures = true, skip_invalid = false;
};

[[noreturn]] void usage_error(const std::string& msg) {
  std::cerr << "cardiac: " << msg << "\n(see cardiac --help)\n";
  std::exit(kExitUsage);
}

template <class T>
std::vector<T> parse_list(const std::string& s, const std::string& what) {
  std::vector<T> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');) {
    std::size_t used = 0;
    double v = 0;
    try {
      v = std::stod(item, &used);
    } catch (...) {
      used = 0;
    }
    const bool integral = std::is_integral_v<T>;
    if (used == 0 || used != item.size() || !(v > 0) || (integral && (v != std::floor(v) || v > 1e9)))
      usage_error(what + ": expected a comma-separated list of positive " + (integral ? "integers" : "numbers") +
                  ", got '" + s + "'");
    out.push_back(static_cast<T>(v));
  }
  if (out.empty()) usage_error(what + ": expected a value, got '" + s + "'");
  return out;
}

/// The one bound on thread counts (--threads of every command, batch's workers x threads): more
/// threads than the CPUs in the affinity mask only wait for each other; far more exhaust memory.
void require_available_threads(int n, const std::string& what) {
  if (n < 1 || n > available_cpus())
    usage_error(what + ": this process can run 1 to " + std::to_string(available_cpus()) +
                " threads (the CPUs in its affinity mask)");
}

/// batch: -j workers of --threads threads each (default CPUs / workers) must fit the CPUs together.
/// The Slurm executor takes both from the manifest (resources.cpus_per_task, one task per case).
void check_batch_threads(const Args& a) {
  if (a.executor == "slurm") {
    if (a.threads > 0 || a.jobs_given)
      usage_error("batch --executor slurm: -j and --threads do not apply (each case is one task with "
                  "resources.cpus_per_task threads, set in the manifest)");
    return;
  }
  require_available_threads(a.jobs, "-j " + std::to_string(a.jobs));
  if (a.threads > 0)
    require_available_threads(a.jobs * a.threads, "-j " + std::to_string(a.jobs) + " x --threads " +
                                                      std::to_string(a.threads) + " = " +
                                                      std::to_string(a.jobs * a.threads) + " threads");
}

Args parse_args(int argc, char** argv) {
  Args a;
  std::vector<std::string> v(argv + 1, argv + argc);
  if (v.empty()) usage_error("missing command");
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string& s = v[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= v.size()) usage_error(s + " needs a value");
      return v[++i];
    };
    if (s == "-h" || s == "--help") {
      std::cout << kHelp;
      std::exit(0);
    } else if (s == "--version") {
      std::cout << "cardiac " << CARDIO_VERSION << "\n";
      std::exit(0);
    } else if (s == "-o" || s == "--output") {
      a.outdir = value();
    } else if (s == "--resume") {
      a.resume = true;
      a.outdir = value();
    } else if (s == "--threads") {
      a.thread_list = parse_list<int>(value(), "--threads");
    } else if (s == "--set") {
      a.overrides.push_back(value());
    } else if (s == "--sizes") {
      a.sizes = parse_list<long>(value(), "--sizes");
    } else if (s == "--element" || s == "--elements") {
      std::stringstream ss(value());
      for (std::string item; std::getline(ss, item, ',');) {
        if (bench::bench_element(item).empty())
          usage_error(s + ": expected heart, sampled_axes, one_point, bourguignon_cani or baudet, got '" + item + "'");
        a.elements.push_back(item);
      }
    } else if (s == "--seconds") {
      const auto secs = parse_list<double>(value(), "--seconds");
      if (secs.size() != 1) usage_error("--seconds takes one number");
      a.seconds = secs[0];
    } else if (s == "--isa") {
      if (value() != "all") usage_error("--isa: expected all (default: the widest SIMD build only)");
      a.all_isas = true;
    } else if (s == "--json") {
      a.json = value();
    } else if (s == "--voxel-size") {
      const auto h = parse_list<double>(value(), "--voxel-size");
      if (h.size() != 1) usage_error("--voxel-size takes one number [mm]");
      a.voxel_size = h[0];
    } else if (s == "--fibres") {
      a.fibres = value();
      if (a.fibres != "land_benchmark" && a.fibres != "streeter")
        usage_error("--fibres: expected land_benchmark or streeter, got '" + a.fibres + "'");
    } else if (s == "--rotate") {
      const std::string r = value();
      std::stringstream ss(r);
      for (std::string item; std::getline(ss, item, ',');) {
        try {
          std::size_t used = 0;
          a.rotate.push_back(std::stod(item, &used));
          if (used != item.size()) throw std::invalid_argument(item);
        } catch (...) {
          usage_error("--rotate: expected AX,AY,AZ,DEG (axis and angle in degrees), got '" + r + "'");
        }
      }
      if (a.rotate.size() != 4 || Eigen::Vector3d(a.rotate[0], a.rotate[1], a.rotate[2]).norm() == 0)
        usage_error("--rotate: expected AX,AY,AZ,DEG with a non-zero axis, got '" + r + "'");
    } else if (s == "--format") {
      a.format = value();
      if (a.format != "nii.gz" && a.format != "nii" && a.format != "mha" && a.format != "nrrd")
        usage_error("--format: expected nii.gz, nii, mha or nrrd, got '" + a.format + "'");
    } else if (s == "--executor") {
      a.executor = value();
      if (a.executor != "local" && a.executor != "slurm")
        usage_error("--executor: expected local or slurm, got '" + a.executor + "'");
    } else if (s == "-j" || s == "--jobs") {
      const auto j = parse_list<int>(value(), s);
      if (j.size() != 1) usage_error(s + " takes one number");
      a.jobs = j[0];
      a.jobs_given = true;
    } else if (s == "--submit") {
      a.submit = true;
    } else if (s == "--wait") {
      a.wait = true;
    } else if (s == "--skip-invalid") {
      a.skip_invalid = true;
    } else if (s == "--no-figures") {
      a.figures = false;
    } else if (!s.empty() && s[0] == '-') {
      usage_error("unknown option " + s);
    } else if (a.command.empty()) {
      a.command = s;
    } else if (a.config.empty()) {
      a.config = s;
    } else {
      usage_error("unexpected argument " + s);
    }
  }
  if (a.command != "run" && a.command != "validate" && a.command != "bench" && a.command != "mesh" && a.command != "batch" && a.command != "collect" &&
      a.command != "phantom" && a.command != "figures")
    usage_error("unknown command '" + a.command + "'");
  if (a.resume) {
    if (a.command != "run") usage_error("--resume is an option of run");
    if (!a.config.empty() || !a.overrides.empty())
      usage_error("run --resume OUTDIR takes the config and overrides recorded in OUTDIR/invocation.json; give no CONFIG or --set");
  } else if ((a.command == "run" || a.command == "validate" || a.command == "mesh") && a.config.empty()) {
    usage_error(a.command + " needs a CONFIG.yaml");
  }
  if (a.command == "figures" && a.config.empty()) usage_error("figures needs a RUN_DIR");
  if (a.command == "batch" && a.config.empty()) usage_error("batch needs a MANIFEST.yaml");
  if (a.command == "batch" && a.outdir.empty()) usage_error("batch needs -o BATCH_DIR");
  if (a.skip_invalid && a.command != "batch") usage_error("--skip-invalid is an option of batch");
  if (a.command == "collect" && a.config.empty()) usage_error("collect needs a BATCH_DIR");
  if (a.command == "phantom") {
    if (a.config != "lv" && a.config != "biv") usage_error("phantom: expected lv or biv, got '" + a.config + "'");
    if (a.outdir.empty()) usage_error("phantom needs -o OUTDIR");
  }
  for (int t : a.thread_list) require_available_threads(t, "--threads " + std::to_string(t));
  if (a.command != "bench" && !a.thread_list.empty()) {
    if (a.thread_list.size() != 1) usage_error("--threads takes one number for " + a.command);
    a.threads = a.thread_list[0];
  }
  if (a.command == "batch") check_batch_threads(a);
  return a;
}

/// Lock OUTDIR for the whole run: a second run, resume or mesh into it is refused (DirectoryBusy,
/// exit 2) before it deletes anything. Under the lock, the temp files of a killed run can go.
DirectoryLock lock_outdir(const fs::path& out, const Args& a) {
  pipeline::make_writable_directory(out);  // a read-only OUTDIR is named as such, before the lock file fails
  DirectoryLock lock(out, "cardiac " + a.command + (a.resume ? " --resume " + a.outdir : " " + a.config));
  for (const fs::path& d : {out, out / "frames", out / "cache"}) remove_stale_temp_files(d);
  return lock;
}

/// The run directory: created, locked (`lock`), stale results removed, resolved config written first.
fs::path prepare_outdir(const Args& a, const std::string& name, const std::string& resolved,
                        const std::vector<std::string>& stale, std::optional<DirectoryLock>& lock) {
  const fs::path out = a.outdir.empty() ? fs::path("results") / name : fs::path(a.outdir);
  lock.emplace(lock_outdir(out, a));
  // A re-run into an old directory must not leave old results that look finished.
  for (const auto& f : stale) fs::remove(out / f);
  for (const auto& entry : fs::directory_iterator(out))
    if (entry.path().filename().string().rfind("cavity_", 0) == 0 && entry.path().extension() == ".vtp")
      fs::remove(entry.path());
  std::ostringstream header;
  header << "# cardiac " << CARDIO_VERSION << ", resolved config of " << a.config << "\n# written " << pipeline::utc_now()
         << ", threads " << thread_count() << "\n";
  write_file_atomic(out / "config.resolved.yaml", header.str() + resolved);
  return out;
}

const std::vector<std::string> kMeshOutputs{"mesh_report.json", "mesh.vtu", "surfaces.vtp"};

/// FNV-1a 64-bit hash of the resolved config (identifies the inputs of a result).
std::string config_hash(const std::string& text) { return hex16(fnv1a64(text)); }

void finish_summary(nlohmann::json& j, const Args& a, const std::string& resolved) {
  j["version"] = CARDIO_VERSION;
  j["config"] = a.config;
  j["config_hash_fnv1a"] = config_hash(resolved);
  j["threads"] = thread_count();
  j["finished_utc"] = pipeline::utc_now();
}

/// The checks of a heart config before OUTDIR is touched, the same for validate, run and mesh (an
/// invalid input is exit 2 from each): the input files, the memory estimate, then their content.
/// Throws pipeline::InvalidInput or cardio::Error.
pipeline::MemoryEstimate check_heart(const pipeline::HeartConfig& cfg, config::Document& doc) {
  pipeline::check_input_files(cfg.mesh, doc);
  pipeline::MemoryEstimate memory = pipeline::estimate_mesh_memory(cfg.mesh);
  pipeline::check_mesh_memory(memory, doc, double(imaging::available_memory_bytes()));
  pipeline::check_input_contents(cfg.mesh, doc);
  return memory;
}

/// A config or input found invalid before anything was computed: one line on stderr, exit 2.
int invalid(const Error& e) {
  const bool input = dynamic_cast<const pipeline::InvalidInput*>(&e) != nullptr;
  std::cerr << "cardiac: " << (input ? "invalid input: " : "invalid config: ") << e.what() << "\n";
  return kExitUsage;
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

/// What a heart config imports, for messages: "phantom lv_ellipsoid", "image labels.nii.gz", ...
std::string source_text(const pipeline::GeometryParams& g) {
  if (g.source == "phantom") return "the phantom " + g.phantom.kind;
  if (g.source == "box") return "the box";
  if (g.source == "image") return "the image " + g.labels_file.string();
  return "the surface " + g.surface.file.string();
}

int run_heart(const Args& a, std::shared_ptr<config::Document> doc, Stage& stage) {
  pipeline::HeartConfig cfg;
  pipeline::MemoryEstimate memory;  // before anything large is allocated or OUTDIR is touched
  try {
    cfg = pipeline::parse_heart_config(*doc);
    memory = check_heart(cfg, *doc);
  } catch (const Error& e) {
    return invalid(e);
  }
  if (a.threads > 0) set_thread_count(a.threads);
  const bool simulate = a.command == "run" && cfg.simulation.has_value();
  std::vector<std::string> stale = kMeshOutputs;
  stale.insert(stale.end(), {"summary.json", kIncompleteSummary, "final.vtu"});
  stale.insert(stale.end(), {"series.pvd", "timeseries.csv"});
  stale.insert(stale.end(), {"regional_strain.csv", "label_strain.csv", "checkpoint.bin"});
  const std::string resolved = doc->resolved_yaml();
  fs::path out;
  std::optional<DirectoryLock> lock;  // held until the run returns; the kernel drops it on any exit
  if (a.resume) {
    out = a.outdir;
    lock.emplace(lock_outdir(out, a));
    if (fs::exists(out / "summary.json")) {
      std::cout << out.string() << ": the run has finished (summary.json exists); nothing to resume\n";
      return 0;
    }
    if (!fs::exists(out / "checkpoint.bin"))
      throw UsageError(out.string() + ": no checkpoint.bin to resume from (the run stopped before its first checkpoint, or is not a beat run)");
  } else {
    out = prepare_outdir(a, cfg.mesh.name, resolved, stale, lock);
    fs::remove_all(out / "frames");
    // What `cardiac run --resume OUTDIR` needs to rebuild this run: the config and its overrides.
    write_file_atomic(out / "invocation.json",
                      nlohmann::json{{"config", fs::absolute(a.config).string()}, {"overrides", a.overrides}, {"version", CARDIO_VERSION}}
                          .dump(2));
  }
  pipeline::RunLog run_log(out / "run.log", a.resume);
  std::ostream& log = run_log.out();
  log << "cardiac " << CARDIO_VERSION << ": " << a.command << (a.resume ? " --resume " : " ") << a.config << " -> "
      << out.string() << "\n";
  try {
    stage.what = "meshing " + source_text(cfg.mesh.geometry) + " (estimated from the config: " +
                 memory.describe() + ")";
    const pipeline::MeshStageResult r = pipeline::cached_mesh_stages(cfg.mesh, *doc, out, &log);
    pipeline::warn_about_output_size(cfg, simulate, r.mesh, run_log.file(), std::cerr);
    const std::string elements = std::to_string(r.mesh.mesh.n_elements()) + " elements";
    // The beat's input checks (boundary selectors, pacing sites, activation image) come before any
    // output: a run that fails on its inputs leaves nothing that looks finished.
    std::optional<pipeline::BeatSetup> beat;
    if (simulate && cfg.simulation->mode == "beat") {
      stage.what = "preparing the simulation of " + elements;
      beat = pipeline::prepare_heart_beat(*cfg.simulation, r.mesh, &log);
    }
    stage.what = "writing the mesh outputs (" + elements + ")";
    pipeline::write_mesh_outputs(out, r, cfg.mesh.write_surfaces);
    stage.what = "simulating " + elements;
    log << "wrote " << (out / "mesh.vtu").string() << " and " << (out / "mesh_report.json").string() << "\n";
    if (beat) {
      pipeline::BeatRunOptions bo;
      bo.config_hash = config_hash(resolved);
      bo.progress_bar = pipeline::stderr_is_terminal();
      bo.resume = a.resume;
      // Only the beat loop polls the flag (and checkpoints): other stages keep the default
      // handlers, so that Ctrl-C stops them at once.
      install_interrupt_handlers();
      pipeline::BeatRunResult h = pipeline::run_heart_beat(*cfg.simulation, r.mesh, std::move(*beat), out, &log, bo);
      Eigen::MatrixXd label(1, r.mesh.mesh.n_elements());
      for (Eigen::Index e = 0; e < label.cols(); ++e) label(0, e) = r.mesh.label[std::size_t(e)];
      io::write_vtu(out / "final.vtu", r.mesh.mesh, h.state.x, {{"velocity", h.state.v}},
                    {{"activation_time", h.activation_time.transpose()}, {"active_tension", h.active_tension.transpose()},
                     {"label", label, true}});
      finish_summary(h.summary, a, resolved);
      if (!h.incomplete_reason.empty()) return report_incomplete(out, h, run_log);
      io::write_json(out / "summary.json", h.summary);
      fs::remove(out / "checkpoint.bin");  // finished: summary.json marks it, nothing to resume
      for (const auto& c : h.summary["cavities"])
        log << c["name"].get<std::string>() << ": EDV " << c["EDV_mL"] << " mL, ESV " << c["ESV_mL"] << " mL, EF "
            << c["EF"] << "\n";
      log << "wrote " << (out / "summary.json").string() << "\n";
      if (a.figures && cfg.mesh.draw_figures) {
        // The figures read the finished outputs; their failure does not undo the results.
        if (figures::run_figure_script("run_figures.py", out, log) != 0)
          log << "cardiac: warning: the figures were not (all) drawn (see above); the results are complete. "
                 "Retry with: cardiac figures " << out.string() << "\n";
      }
    } else if (simulate) {
      pipeline::HeartRunResult h = pipeline::run_heart_simulation(*cfg.simulation, r.mesh, &log);
      Eigen::MatrixXd ta(1, r.mesh.mesh.n_elements());
      for (Eigen::Index e = 0; e < ta.cols(); ++e) ta(0, e) = h.active_tension[std::size_t(e)];
      Eigen::MatrixXd label(1, ta.cols());
      for (Eigen::Index e = 0; e < ta.cols(); ++e) label(0, e) = r.mesh.label[std::size_t(e)];
      io::write_vtu(out / "final.vtu", r.mesh.mesh, h.state.x, {{"velocity", h.state.v}},
                    {{"active_tension", ta}, {"label", label, true}});
      finish_summary(h.summary, a, resolved);
      io::write_json(out / "summary.json", h.summary);
      for (const auto& p : h.summary["probes"]) log << "probe " << p["name"].get<std::string>() << ": final " << p["final_mm"].dump() << " mm\n";
      log << "wrote " << (out / "summary.json").string() << "\n";
    } else if (a.command == "run") {
      log << "this config has no simulation sections (material, loads): meshed only (see docs/config.md)\n";
    }
  } catch (const Interrupted& e) {
    run_log.error(std::string("cardiac: ") + e.what() + "\n");
    return kExitInterrupted;
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
  return 0;
}

/// The Args of the run that wrote OUTDIR (its invocation.json), for run --resume OUTDIR.
Args resumed_args(const Args& a) {
  const fs::path file = fs::path(a.outdir) / "invocation.json";
  std::ifstream in(file);
  if (!in) throw UsageError(file.string() + ": not found (run --resume needs a directory written by cardiac run)");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
    Args b = a;
    b.config = j.at("config").get<std::string>();
    b.overrides = j.at("overrides").get<std::vector<std::string>>();
    return b;
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(file.string() + ": damaged (" + e.what() + ")");
  }
}

int run(const Args& given, Stage& stage) {
  const Args a = given.resume ? resumed_args(given) : given;
  std::shared_ptr<config::Document> doc;
  try {
    doc = config::Document::load_file(a.config);
    for (const auto& o : a.overrides) doc->set_override(o);
  } catch (const Error& e) {
    return invalid(e);
  }
  if (pipeline::is_heart_config(*doc)) return run_heart(a, doc, stage);
  if (a.resume) throw UsageError("--resume: " + a.outdir + " is not a heart run (only beat runs write checkpoints)");
  if (a.command == "mesh") {
    std::cerr << "cardiac: " << a.config << " has no geometry section: nothing to mesh (block experiments are run with `cardiac run`)\n";
    return kExitUsage;
  }
  std::string resolved;
  pipeline::RunConfig cfg;
  try {
    cfg = pipeline::parse_run_config(*doc);
    resolved = doc->resolved_yaml();
  } catch (const Error& e) {
    return invalid(e);
  }
  if (a.threads > 0) set_thread_count(a.threads);
  std::optional<DirectoryLock> lock;
  const fs::path out = prepare_outdir(a, cfg.name, resolved, {"summary.json", "final.vtu"}, lock);

  pipeline::RunLog run_log(out / "run.log", false);
  std::ostream& log = run_log.out();
  log << "cardiac " << CARDIO_VERSION << ": run " << a.config << " -> " << out.string() << "\n";
  try {
    stage.what = "running the block experiment of " + std::to_string(cfg.block.nx) + " x " + std::to_string(cfg.block.ny) +
                 " x " + std::to_string(cfg.block.nz) + " voxels";
    pipeline::ExperimentResult r = pipeline::run_experiment(cfg, &log);
    r.summary["version"] = CARDIO_VERSION;
    r.summary["config"] = a.config;
    r.summary["finished_utc"] = pipeline::utc_now();
    if (cfg.write_vtu) io::write_vtu(out / "final.vtu", r.mesh, r.state.x, {{"velocity", r.state.v}});
    io::write_json(out / "summary.json", r.summary);
    log << "measured: " << r.summary["measured"].dump() << "\n";
    log << "wrote " << (out / "summary.json").string() << "\n";
  } catch (const std::bad_alloc&) {
    throw;  // main reports what was being built
  } catch (const std::length_error&) {
    throw;
  } catch (const std::exception& e) {
    run_log.error("cardiac: run failed: " + pipeline::describe(e) + "\n");
    return kExitFailed;
  }
  return 0;
}

/// The checks of `cardiac validate`, used by `cardiac batch` for every case of a manifest (without
/// the memory estimate: the cases run elsewhere or side by side, and each `cardiac run` checks its own).
void validate_document(config::Document& doc) {
  if (!pipeline::is_heart_config(doc)) {
    pipeline::parse_run_config(doc);
    return;
  }
  const pipeline::HeartConfig cfg = pipeline::parse_heart_config(doc);
  pipeline::check_input_files(cfg.mesh, doc);
  pipeline::check_input_contents(cfg.mesh, doc);
}

int validate(const Args& a, Stage& stage) {
  stage.what = "validating " + a.config;
  try {
    auto doc = config::Document::load_file(a.config);
    for (const auto& o : a.overrides) doc->set_override(o);
    if (pipeline::is_heart_config(*doc))
      (void)check_heart(pipeline::parse_heart_config(*doc), *doc);
    else
      pipeline::parse_run_config(*doc);
  } catch (const Error& e) {
    return invalid(e);
  }
  std::cout << a.config << ": valid\n";
  return 0;
}

int batch_command(const Args& a) {
  if (!a.overrides.empty()) throw UsageError("batch: --set does not apply (put overrides in the manifest's `set`)");
  pipeline::batch::BatchOptions o;
  o.manifest = a.config;
  o.batch_dir = a.outdir;
  o.executor = a.executor;
  o.jobs = a.jobs;
  o.threads = a.threads;
  o.submit = a.submit;
  o.wait = a.wait;
  o.skip_invalid = a.skip_invalid;
  o.validate = validate_document;
  return pipeline::batch::run_batch(o, std::cout, std::cerr);
}

/// `cardiac figures RUN_DIR`: the figure script's exit status (1 when python/matplotlib is missing).
int figures_command(const Args& a) { return figures::run_figure_script("run_figures.py", a.config, std::cout); }

int phantom(const Args& a, Stage& stage) {
  phantoms::PhantomSpec spec;
  spec.voxel_size = a.voxel_size;
  spec.biventricular = a.config == "biv";
  spec.helix = a.fibres == "streeter" ? phantoms::HelixRule::streeter() : phantoms::HelixRule::land2015();
  if (!a.rotate.empty())
    spec.rotation = Eigen::AngleAxisd(a.rotate[3] * std::numbers::pi / 180.0,
                                      Eigen::Vector3d(a.rotate[0], a.rotate[1], a.rotate[2]).normalized())
                        .toRotationMatrix();
  const Eigen::Vector3d n = phantoms::phantom_grid_size(spec);
  std::ostringstream what;
  what << "building the phantom " << a.config << " at " << a.voxel_size << " mm (a grid of " << n.x() << " x " << n.y()
       << " x " << n.z() << " voxels, about " << pipeline::bytes_text(n.prod() * pipeline::kPhantomBytesPerVoxel) << ")";
  stage.what = what.str();
  const phantoms::Phantom ph = phantoms::make_phantom(spec);
  stage.what = "writing the phantom images";
  const fs::path out(a.outdir);
  pipeline::make_writable_directory(out);
  imaging::write_label_image(ph.labels, out / ("labels." + a.format));
  imaging::write_vector_image(ph.fibre, out / ("fibre." + a.format));
  imaging::write_vector_image(ph.sheet, out / ("sheet." + a.format));
  std::cout << "wrote " << (out / ("labels." + a.format)).string() << ", fibre." << a.format << ", sheet." << a.format
            << " (" << ph.labels.grid.size[0] << "x" << ph.labels.grid.size[1] << "x" << ph.labels.grid.size[2]
            << " voxels of " << a.voxel_size << " mm)\n";
  return 0;
}

/// A failed allocation (std::bad_alloc, or std::length_error from a container asked for more than
/// it can hold) anywhere: what was being built and how large, instead of a crash. Exit 1.
int out_of_memory(const Stage& stage, const std::exception& e) {
  std::cerr << "cardiac: out of memory (" << e.what() << ") while " << stage.what << "; "
            << pipeline::bytes_text(double(imaging::available_memory_bytes()))
            << " are available (MemAvailable, capped by the container's memory limit and by ulimit -v)\n"
            << "cardiac: use a larger voxel or element size, or run where more memory is available\n";
  return kExitFailed;
}

}  // namespace

int main(int argc, char** argv) {
  cardio::pipeline::choose_runtime_settings(argv);
  const Args a = parse_args(argc, argv);
  Stage stage;
  try {
    if (a.command == "validate") return validate(a, stage);
    if (a.command == "batch") return batch_command(a);
    if (a.command == "collect") return pipeline::batch::collect({a.config, a.figures}, std::cout, std::cerr);
    if (a.command == "phantom") return phantom(a, stage);
    if (a.command == "figures") return figures_command(a);
    if (a.command == "bench") {
      bench::BenchOptions o;
      if (!a.sizes.empty()) o.sizes = a.sizes;
      if (!a.thread_list.empty()) o.threads = a.thread_list;
      std::erase_if(o.threads, [](int t) { return t > available_cpus(); });  // the default {1, 2} on one CPU
      if (!a.elements.empty()) o.elements = a.elements;
      o.seconds = a.seconds;
      o.all_isas = a.all_isas;
      o.json_path = a.json;
      bench::run_bench(o, std::cout);
      return 0;
    }
    return run(a, stage);
  } catch (const UsageError& e) {
    std::cerr << "cardiac: " << e.what() << "\n";
    return kExitUsage;
  } catch (const DirectoryBusy& e) {  // another run holds OUTDIR: a usage error, nothing was touched
    std::cerr << "cardiac: " << e.what() << "\n";
    return kExitUsage;
  } catch (const pipeline::UnusableOutput& e) {  // OUTDIR cannot be created or written: nothing was touched
    std::cerr << "cardiac: " << e.what() << "\n";
    return kExitUsage;
  } catch (const Error& e) {
    std::cerr << "cardiac: " << e.what() << "\n";
    return a.command == "validate" ? kExitUsage : kExitFailed;
  } catch (const std::bad_alloc& e) {
    return out_of_memory(stage, e);
  } catch (const std::length_error& e) {
    return out_of_memory(stage, e);
  } catch (const std::exception& e) {
    std::cerr << "cardiac: " << a.command << " failed: " << pipeline::describe(e) << "\n";
    return kExitFailed;
  }
}
