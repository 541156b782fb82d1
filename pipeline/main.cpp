// cardiac: command-line entry point. Exit codes: 0 success, 1 the run failed (simulation
// error, unstable or unconverged solve), 2 bad usage or bad config (nothing was computed).
#include <chrono>
#include <cmath>
#include <type_traits>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "bench.hpp"
#include "cardio/core/atomic_file.hpp"
#include "cardio/core/error.hpp"
#include "cardio/core/parallel.hpp"
#include "cardio/io/json.hpp"
#include "cardio/io/vtu.hpp"
#include "experiments.hpp"
#include "run_config.hpp"

namespace fs = std::filesystem;
using namespace cardio;

namespace {

constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;

const char* kHelp = R"(cardiac - image-based cardiac mass-spring simulation (version )" CARDIO_VERSION R"()

Usage:
  cardiac run CONFIG.yaml [-o OUTDIR] [--threads N] [--set KEY.PATH=VALUE]...
  cardiac validate CONFIG.yaml [--set KEY.PATH=VALUE]...
  cardiac bench [--sizes N1,N2,...] [--threads T1,T2,...] [--seconds S] [--json FILE]
  cardiac --help | --version

run       Validate CONFIG, write OUTDIR/config.resolved.yaml, solve, then write
          OUTDIR/final.vtu (point data `displacement` [mm]) and OUTDIR/summary.json.
          summary.json is written last: its presence marks a finished run.
          OUTDIR defaults to results/<name from the config>.
validate  Check a config (types, ranges, units, unknown keys) without running.
bench     Time force evaluation + one Verlet step of Bourguignon-Cani blocks
          (default sizes 1e3,1e4,1e5,1e6 elements at 1 and 2 threads).

Exit codes: 0 success; 1 the run failed; 2 bad usage or invalid config.
)";

struct Args {
  std::string command;
  std::string config;
  std::string outdir;
  int threads = 0;
  std::vector<std::string> overrides;
  std::vector<long> sizes;
  std::vector<int> thread_list;
  double seconds = 1.0;
  std::string json;
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
    } else if (s == "--threads") {
      a.thread_list = parse_list<int>(value(), "--threads");
    } else if (s == "--set") {
      a.overrides.push_back(value());
    } else if (s == "--sizes") {
      a.sizes = parse_list<long>(value(), "--sizes");
    } else if (s == "--seconds") {
      const auto secs = parse_list<double>(value(), "--seconds");
      if (secs.size() != 1) usage_error("--seconds takes one number");
      a.seconds = secs[0];
    } else if (s == "--json") {
      a.json = value();
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
  if (a.command != "run" && a.command != "validate" && a.command != "bench") usage_error("unknown command '" + a.command + "'");
  if ((a.command == "run" || a.command == "validate") && a.config.empty()) usage_error(a.command + " needs a CONFIG.yaml");
  if (a.command != "bench" && !a.thread_list.empty()) {
    if (a.thread_list.size() != 1) usage_error("--threads takes one number for " + a.command);
    a.threads = a.thread_list[0];
  }
  return a;
}

std::string now_utc() {
  const std::time_t t = std::time(nullptr);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

// Writes to stdout and to the run's log file.
class Tee : public std::streambuf {
 public:
  Tee(std::streambuf* a, std::streambuf* b) : m_a(a), m_b(b) {}
  int overflow(int c) override {
    if (c == EOF) return !EOF;
    m_a->sputc(static_cast<char>(c));
    m_b->sputc(static_cast<char>(c));
    return c;
  }
  int sync() override { return m_a->pubsync() | m_b->pubsync(); }

 private:
  std::streambuf *m_a, *m_b;
};

int run(const Args& a) {
  std::string resolved;
  pipeline::RunConfig cfg;
  try {
    cfg = pipeline::load_run_config(a.config, a.overrides, &resolved);
  } catch (const Error& e) {
    std::cerr << "cardiac: invalid config: " << e.what() << "\n";
    return kExitUsage;
  }
  if (a.threads > 0) set_thread_count(a.threads);
  const fs::path out = a.outdir.empty() ? fs::path("results") / cfg.name : fs::path(a.outdir);
  std::error_code ec;
  if (fs::exists(out, ec) && !fs::is_directory(out, ec)) {
    std::cerr << "cardiac: output " << out.string() << " exists and is not a directory\n";
    return kExitUsage;
  }
  fs::create_directories(out, ec);
  if (ec) {
    std::cerr << "cardiac: cannot create output directory " << out.string() << ": " << ec.message() << "\n";
    return kExitUsage;
  }
  // A re-run into an old directory must not leave old results that look finished.
  for (const char* stale : {"summary.json", "final.vtu"}) fs::remove(out / stale);

  std::ostringstream header;
  header << "# cardiac " << CARDIO_VERSION << ", resolved config of " << a.config << "\n# written " << now_utc()
         << ", threads " << thread_count() << "\n";
  write_file_atomic(out / "config.resolved.yaml", header.str() + resolved);

  std::ofstream logfile(out / "run.log");
  Tee tee(std::cout.rdbuf(), logfile.rdbuf());
  std::ostream log(&tee);
  log << "cardiac " << CARDIO_VERSION << ": run " << a.config << " -> " << out.string() << "\n";
  try {
    pipeline::ExperimentResult r = pipeline::run_experiment(cfg, &log);
    r.summary["version"] = CARDIO_VERSION;
    r.summary["config"] = a.config;
    r.summary["finished_utc"] = now_utc();
    if (cfg.write_vtu) io::write_vtu(out / "final.vtu", r.mesh, r.state.x, {{"velocity", r.state.v}});
    io::write_json(out / "summary.json", r.summary);
    log << "measured: " << r.summary["measured"].dump() << "\n";
    log << "wrote " << (out / "summary.json").string() << "\n";
  } catch (const std::exception& e) {
    log << "cardiac: run failed: " << e.what() << "\n";
    std::cerr << "cardiac: run failed: " << e.what() << "\n";
    return kExitFailed;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = parse_args(argc, argv);
  try {
    if (a.command == "validate") {
      pipeline::load_run_config(a.config, a.overrides);
      std::cout << a.config << ": valid\n";
      return 0;
    }
    if (a.command == "bench") {
      bench::BenchOptions o;
      if (!a.sizes.empty()) o.sizes = a.sizes;
      if (!a.thread_list.empty()) o.threads = a.thread_list;
      o.seconds = a.seconds;
      o.json_path = a.json;
      bench::run_bench(o, std::cout);
      return 0;
    }
    return run(a);
  } catch (const Error& e) {
    std::cerr << "cardiac: " << e.what() << "\n";
    return a.command == "validate" ? kExitUsage : kExitFailed;
  } catch (const std::exception& e) {
    std::cerr << "cardiac: unexpected error: " << e.what() << "\n";
    return kExitFailed;
  }
}
