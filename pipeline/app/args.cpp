#include "app/args.hpp"

#include <Eigen/Core>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <type_traits>

#include "bench.hpp"
#include "cardio/core/parallel.hpp"
#include "common/exit_codes.hpp"

namespace cardio::app {
namespace {

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
                  [--rotate AX,AY,AZ,DEG] [--format nii.gz|nii|mha|nrrd|tif|png]
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
          --rotate rotates the whole phantom (an oblique direction matrix). --format tif|png
          writes the labels as a folder of 2-D slices (labels/slice_NNNN.tif) and the fibres as .nrrd.
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
          five; heart = the sampled-axes element hearts use, with the law as a beat runs it;
          the others with every term on, damping included; default sizes 1e3,1e4,1e5,1e6
          elements at 1 and 2 threads; --isa all: the sampled-axes rows once per SIMD build).
figures   Draw RUN_DIR/figures/*.png + *.pdf (PV loops, regional strain, bull's-eyes, J, 3-D view)
          with scripts/figures/run_figures.py and /usr/bin/python3 (docs/figures.md).

Exit codes: 0 success; 1 the run failed; 2 bad usage, invalid config or input file; 75 stopped by SIGTERM or
SIGINT after writing OUTDIR/checkpoint.bin (continue with: cardiac run --resume OUTDIR).
)";

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
      usage_error(
          "batch --executor slurm: -j and --threads do not apply (each case is one task with "
          "resources.cpus_per_task threads, set in the manifest)");
    return;
  }
  require_available_threads(a.jobs, "-j " + std::to_string(a.jobs));
  if (a.threads > 0)
    require_available_threads(a.jobs * a.threads, "-j " + std::to_string(a.jobs) + " x --threads " +
                                                      std::to_string(a.threads) + " = " +
                                                      std::to_string(a.jobs * a.threads) + " threads");
}

/// The value of the option being read (exits 2 when it has none).
using Value = std::function<std::string()>;

/// -o, --resume, --threads, --set, --no-figures; false if `s` is none of them.
bool read_run_option(Args& a, const std::string& s, const Value& value) {
  if (s == "-o" || s == "--output") {
    a.outdir = value();
    return true;
  }
  if (s == "--resume") {
    a.resume = true;
    a.outdir = value();
    return true;
  }
  if (s == "--threads") {
    a.thread_list = parse_list<int>(value(), "--threads");
    return true;
  }
  if (s == "--set") {
    a.overrides.push_back(value());
    return true;
  }
  if (s == "--no-figures") {
    a.figures = false;
    return true;
  }
  return false;
}

/// --sizes, --element(s), --seconds, --isa, --json (bench); false if `s` is none of them.
bool read_bench_option(Args& a, const std::string& s, const Value& value) {
  if (s == "--sizes") {
    a.sizes = parse_list<long>(value(), "--sizes");
    return true;
  }
  if (s == "--element" || s == "--elements") {
    std::stringstream ss(value());
    for (std::string item; std::getline(ss, item, ',');) {
      if (bench::bench_element(item).empty())
        usage_error(s + ": expected heart, sampled_axes, one_point, bourguignon_cani or baudet, got '" + item + "'");
      a.elements.push_back(item);
    }
    return true;
  }
  if (s == "--seconds") {
    const auto secs = parse_list<double>(value(), "--seconds");
    if (secs.size() != 1) usage_error("--seconds takes one number");
    a.seconds = secs[0];
    return true;
  }
  if (s == "--isa") {
    if (value() != "all") usage_error("--isa: expected all (default: the widest SIMD build only)");
    a.all_isas = true;
    return true;
  }
  if (s == "--json") {
    a.json = value();
    return true;
  }
  return false;
}

/// --voxel-size, --fibres, --rotate, --format (phantom); false if `s` is none of them.
bool read_phantom_option(Args& a, const std::string& s, const Value& value) {
  if (s == "--voxel-size") {
    const auto h = parse_list<double>(value(), "--voxel-size");
    if (h.size() != 1) usage_error("--voxel-size takes one number [mm]");
    a.voxel_size = h[0];
    return true;
  }
  if (s == "--fibres") {
    a.fibres = value();
    if (a.fibres != "land_benchmark" && a.fibres != "streeter")
      usage_error("--fibres: expected land_benchmark or streeter, got '" + a.fibres + "'");
    return true;
  }
  if (s == "--rotate") {
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
    return true;
  }
  if (s == "--format") {
    a.format = value();
    if (a.format != "nii.gz" && a.format != "nii" && a.format != "mha" && a.format != "nrrd" && a.format != "tif" &&
        a.format != "png")
      usage_error("--format: expected nii.gz, nii, mha, nrrd, tif or png, got '" + a.format + "'");
    return true;
  }
  return false;
}

/// --executor, -j, --submit, --wait, --skip-invalid (batch); false if `s` is none of them.
bool read_batch_option(Args& a, const std::string& s, const Value& value) {
  if (s == "--executor") {
    a.executor = value();
    if (a.executor != "local" && a.executor != "slurm")
      usage_error("--executor: expected local or slurm, got '" + a.executor + "'");
    return true;
  }
  if (s == "-j" || s == "--jobs") {
    const auto j = parse_list<int>(value(), s);
    if (j.size() != 1) usage_error(s + " takes one number");
    a.jobs = j[0];
    a.jobs_given = true;
    return true;
  }
  if (s == "--submit") {
    a.submit = true;
    return true;
  }
  if (s == "--wait") {
    a.wait = true;
    return true;
  }
  if (s == "--skip-invalid") {
    a.skip_invalid = true;
    return true;
  }
  return false;
}

/// The command and its operands fit together; --threads resolved.
void check_command(Args& a) {
  if (a.command != "run" && a.command != "validate" && a.command != "bench" && a.command != "mesh" &&
      a.command != "batch" && a.command != "collect" && a.command != "phantom" && a.command != "figures")
    usage_error("unknown command '" + a.command + "'");
  if (a.resume) {
    if (a.command != "run") usage_error("--resume is an option of run");
    if (!a.config.empty() || !a.overrides.empty())
      usage_error(
          "run --resume OUTDIR takes the config and overrides recorded in OUTDIR/invocation.json; give no CONFIG or "
          "--set");
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
}

}  // namespace

[[noreturn]] void usage_error(const std::string& msg) {
  std::cerr << "cardiac: " << msg << "\n(see cardiac --help)\n";
  std::exit(pipeline::kExitUsage);
}

Args parse_args(int argc, char** argv) {
  Args a;
  std::vector<std::string> v(argv + 1, argv + argc);
  if (v.empty()) usage_error("missing command");
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string& s = v[i];
    const Value value = [&]() -> std::string {
      if (i + 1 >= v.size()) usage_error(s + " needs a value");
      return v[++i];
    };
    if (s == "-h" || s == "--help") {
      std::cout << kHelp;
      std::exit(0);
    } else if (s == "--version") {
      std::cout << "cardiac " << CARDIO_VERSION << "\n";
      std::exit(0);
    } else if (read_run_option(a, s, value) || read_bench_option(a, s, value) || read_phantom_option(a, s, value) ||
               read_batch_option(a, s, value)) {
      continue;
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
  check_command(a);
  return a;
}

}  // namespace cardio::app
