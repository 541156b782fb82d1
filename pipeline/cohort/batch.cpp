#include "cohort/batch.hpp"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "cardio/config/config.hpp"
#include "cardio/core/parallel.hpp"
#include "cardio/core/atomic_file.hpp"
#include "cardio/core/dir_lock.hpp"
#include "cardio/core/error.hpp"
#include "mesh/input_check.hpp"
#include "common/run_log.hpp"

#ifndef CARDIO_SCRIPTS_DIR
#define CARDIO_SCRIPTS_DIR ""
#endif

namespace fs = std::filesystem;
using nlohmann::json;

namespace cardio::pipeline::batch {

namespace {

/// Entries of BATCH_DIR that are not cases.
const std::set<std::string> kReserved{"cases", "slurm", "figures"};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string trim(std::string s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return {};
  const auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

/// A YAML single-quoted scalar (for paths given to set_override).
std::string yaml_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("''") : std::string(1, c);
  return q + "'";
}

/// "2 GB", "512 MB", "1.5 GB", "2G" -> MiB (Slurm's convention: 1 GB = 1024 MB).
std::optional<long> parse_memory_mb(const std::string& text) {
  static const std::regex re(R"(^\s*([0-9]+(?:\.[0-9]+)?)\s*([KMGT])?(?:i?B)?\s*$)", std::regex::icase);
  std::smatch m;
  if (!std::regex_match(text, m, re)) return std::nullopt;
  double v = std::stod(m[1].str());
  const char u = m[2].matched ? static_cast<char>(std::toupper(m[2].str()[0])) : 'M';
  if (u == 'K') v /= 1024;
  if (u == 'G') v *= 1024;
  if (u == 'T') v *= 1024 * 1024;
  const long mb = static_cast<long>(std::ceil(v));
  if (mb < 1) return std::nullopt;
  return mb;
}

/// Slurm time formats: MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS.
bool valid_time_limit(const std::string& t) {
  static const std::regex re(R"(^([0-9]+|[0-9]+:[0-5]?[0-9]|[0-9]+:[0-5]?[0-9]:[0-5]?[0-9]|[0-9]+-[0-9]+(:[0-5]?[0-9]){0,2})$)");
  return std::regex_match(t, re) && t != "0" && t != "00:00:00";
}

/// The body of config.resolved.yaml without the header comment lines `cardiac run` puts first.
std::string resolved_body(const fs::path& file) {
  std::istringstream in(slurp(file));
  std::string line, body;
  bool header = true;
  while (std::getline(in, line)) {
    if (header && !line.empty() && line[0] == '#') continue;
    header = false;
    body += line + "\n";
  }
  return body;
}

/// Absolute path of this program.
fs::path self_exe() {
  std::error_code ec;
  const fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path("cardiac") : p;
}

/// The last line of a log that reads like an error (else its last non-empty line).
std::string last_error_line(const std::string& log) {
  std::istringstream in(log);
  std::string line, last, last_error;
  static const std::regex err(R"((error|failed|fail:|exception|invalid|cannot|terminate))", std::regex::icase);
  while (std::getline(in, line)) {
    line = trim(line);
    if (line.empty()) continue;
    last = line;
    if (std::regex_search(line, err)) last_error = line;
  }
  std::string r = last_error.empty() ? last : last_error;
  if (r.size() > 400) r = r.substr(0, 397) + "...";
  return r;
}

/// The log of the latest attempt of a case: batch.log from the last "=== cardiac batch" marker.
std::string latest_attempt(const fs::path& log) {
  const std::string s = slurp(log);
  const auto at = s.rfind("\n=== cardiac batch");
  return at == std::string::npos ? s : s.substr(at + 1);
}

std::string describe_exit(int code, const std::string& line) {
  std::string r;
  if (code == kExitInterrupted)
    r = "interrupted (exit code 75; resumable from its checkpoint)";
  else if (code > 128 && code < 160)
    r = "killed by signal " + std::to_string(code - 128) + " (" + strsignal(code - 128) + ")";
  else
    r = "exit code " + std::to_string(code);
  if (!line.empty()) r += ": " + line;
  return r;
}

std::string status_of(int code) {
  if (code == 0) return "ok";
  if (code == kExitInterrupted || code == 128 + SIGTERM || code == 128 + SIGINT) return "interrupted";
  return "failed";
}

// ----------------------------------------------------------------------------- case state
enum class CaseState { fresh, done, resumable };

/// What is in BATCH_DIR/<case> already: a finished run (summary.json) or an interrupted one
/// (checkpoint.bin) of the same resolved config. Output of another config is cleared so that it
/// neither counts as done nor gets resumed.
CaseState case_state(const fs::path& outdir, const Case& c, std::ostream& out) {
  std::error_code ec;
  const fs::path cfg = outdir / "config.resolved.yaml";
  const bool has_summary = fs::exists(outdir / "summary.json", ec);
  const bool has_checkpoint = fs::exists(outdir / "checkpoint.bin", ec);
  if (!has_summary && !has_checkpoint) return CaseState::fresh;
  if (fs::exists(cfg, ec) && resolved_body(cfg) != c.resolved) {
    out << "case " << c.name << ": output in " << outdir.string()
        << " is of another config (the manifest changed): running it again from the start\n";
    fs::remove(outdir / "summary.json", ec);
    fs::remove(outdir / "checkpoint.bin", ec);
    return CaseState::fresh;
  }
  return has_summary ? CaseState::done : CaseState::resumable;
}

/// Arguments after the executable for a fresh run of a case (without --threads).
std::vector<std::string> run_args(const Manifest& m, const Case& c, const fs::path& outdir) {
  std::vector<std::string> a{"run", m.base_config.string(), "-o", outdir.string()};
  for (const auto& o : c.overrides) a.insert(a.end(), {"--set", o});
  return a;
}

std::vector<std::string> resume_args(const fs::path& outdir) { return {"run", "--resume", outdir.string()}; }

std::string join_quoted(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : " ") + shell_quote(x);
  return s;
}

void write_case_scripts(const Manifest& m, const fs::path& dir, const fs::path& exe, int threads) {
  fs::create_directories(dir / "cases");
  for (const auto& c : m.cases) {
    std::ostringstream s;
    s << "#!/bin/sh\n# Case '" << c.name << "' of " << m.file.string() << ", written by cardiac batch " << utc_now()
      << ".\n# Rerun it by hand: sh " << (dir / "cases" / (c.name + ".sh")).string()
      << " [--threads N]   (a later --threads wins)\n"
      << "# Resume an interrupted run instead: " << shell_quote(exe.string()) << " run --resume "
      << shell_quote((dir / c.name).string()) << "\n"
      << "exec " << shell_quote(exe.string()) << " " << join_quoted(run_args(m, c, dir / c.name));
    if (threads > 0) s << " --threads " << threads;
    s << " \"$@\"\n";
    const fs::path f = dir / "cases" / (c.name + ".sh");
    write_file_atomic(f, s.str());
    fs::permissions(f, fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec, fs::perm_options::add);
  }
}

struct CaseResult {
  std::string status = "pending";  // ok | failed | interrupted | pending (slurm, not finished yet)
  std::optional<int> exit_code;
  std::string reason;
  double runtime_s = 0;
  bool reused = false;   // finished before this batch: not run again
  bool resumed = false;  // continued from checkpoint.bin
};

void write_batch_json(const fs::path& dir, const Manifest& m, const std::string& executor, const json& extra,
                      const std::vector<CaseResult>& results) {
  json j = {{"manifest", m.file.string()}, {"base_config", m.base_config.string()}, {"executor", executor},
            {"written_utc", utc_now()}};
  for (auto it = extra.begin(); it != extra.end(); ++it) j[it.key()] = it.value();
  json cases = json::array();
  for (std::size_t i = 0; i < m.cases.size(); ++i) {
    const auto& r = results[i];
    cases.push_back({{"name", m.cases[i].name},
                     {"status", r.status},
                     {"exit_code", r.exit_code ? json(*r.exit_code) : json(nullptr)},
                     {"reason", r.reason},
                     {"runtime_s", r.runtime_s},
                     {"reused", r.reused},
                     {"resumed", r.resumed},
                     {"outdir", (dir / m.cases[i].name).string()},
                     {"overrides", m.cases[i].overrides}});
  }
  for (const SkippedCase& c : m.skipped)  // --skip-invalid: not run, no directory
    cases.push_back({{"name", c.name}, {"status", "invalid"}, {"exit_code", nullptr}, {"reason", c.reason},
                     {"runtime_s", 0}, {"reused", false}, {"resumed", false}, {"outdir", nullptr}});
  j["cases"] = cases;
  write_file_atomic(dir / "batch.json", j.dump(2) + "\n");
}

// ----------------------------------------------------------------------------- local executor
std::atomic<int> g_signal{0};
extern "C" void on_signal(int sig) { g_signal = sig; }

pid_t spawn(const fs::path& exe, const std::vector<std::string>& args, const fs::path& log, int threads) {
  const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) CARDIO_FAIL("cannot open " << log.string() << ": " << std::strerror(errno));
  std::vector<std::string> argv_s{exe.string()};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& s : argv_s) argv.push_back(s.data());
  argv.push_back(nullptr);
  const std::string omp = std::to_string(threads);
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fd);
    CARDIO_FAIL("fork failed: " << std::strerror(errno));
  }
  if (pid == 0) {
    // Own process group: a Ctrl-C on the terminal reaches the batch only, which forwards one
    // SIGTERM to each case (cardiac run then checkpoints and exits with 75).
    ::setpgid(0, 0);
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
    const int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, 0);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    ::setenv("OMP_NUM_THREADS", omp.c_str(), 1);
    ::execv(argv[0], argv.data());
    const std::string msg = std::string("cardiac batch: cannot execute ") + argv[0] + ": " + std::strerror(errno) + "\n";
    (void)!::write(2, msg.data(), msg.size());
    ::_exit(127);
  }
  ::close(fd);
  return pid;
}

int run_local(const Manifest& m, const BatchOptions& o, std::ostream& out, std::ostream& err) {
  const fs::path dir = o.batch_dir;
  const int jobs = std::max(1, std::min<int>(o.jobs, static_cast<int>(m.cases.size())));
  const int threads = o.threads > 0 ? o.threads : std::max(1, available_cpus() / jobs);
  write_case_scripts(m, dir, o.cardiac_exe, threads);
  std::vector<CaseResult> results(m.cases.size());
  const json extra = {{"jobs", jobs}, {"threads_per_case", threads}, {"cardiac", o.cardiac_exe.string()}};
  auto save = [&] { write_batch_json(dir, m, "local", extra, results); };
  save();

  struct Running {
    std::size_t index;
    std::chrono::steady_clock::time_point start;
    bool signalled = false;
  };
  std::map<pid_t, Running> running;
  std::size_t next = 0, finished = 0;
  const std::size_t n = m.cases.size();
  out << "cardiac batch: " << n << " case(s) from " << m.file.string() << ", " << jobs << " worker(s) x " << threads
      << " thread(s), output in " << dir.string() << "\n";

  struct sigaction sa {}, old_int {}, old_term {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  g_signal = 0;
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);

  while (next < n || !running.empty()) {
    const int sig = g_signal.load();
    if (sig) {
      for (auto& [pid, r] : running)
        if (!r.signalled) {
          ::kill(pid, SIGTERM);
          r.signalled = true;
        }
      for (; next < n; ++next) {
        results[next].status = "interrupted";
        results[next].reason = "not started: the batch was interrupted (signal " + std::to_string(sig) + ")";
      }
    }
    while (!sig && next < n && static_cast<int>(running.size()) < jobs) {
      const std::size_t i = next++;
      const Case& c = m.cases[i];
      const fs::path outdir = dir / c.name;
      fs::create_directories(outdir);
      // A case directory in use by another process is neither cleared nor run into (the lock is
      // dropped again before the case's own `cardiac run` takes it).
      std::optional<DirectoryLock> case_lock;
      try {
        case_lock.emplace(outdir, "cardiac batch (checking the case)");
      } catch (const DirectoryBusy& e) {
        results[i].status = "failed";
        results[i].reason = e.what();
        ++finished;
        out << "[" << finished << "/" << n << "] " << c.name << ": failed - " << e.what() << "\n";
        save();
        continue;
      }
      const CaseState state = case_state(outdir, c, out);
      case_lock.reset();
      if (state == CaseState::done) {
        results[i].status = "ok";
        results[i].exit_code = 0;
        results[i].reused = true;
        results[i].reason = "finished before (summary.json present): not run again";
        ++finished;
        out << "[" << finished << "/" << n << "] " << c.name << ": already finished\n";
        save();
        continue;
      }
      std::vector<std::string> args = state == CaseState::resumable ? resume_args(outdir) : run_args(m, c, outdir);
      args.insert(args.end(), {"--threads", std::to_string(threads)});
      results[i].resumed = state == CaseState::resumable;
      {
        std::ofstream log(outdir / "batch.log", std::ios::app);
        log << "\n=== cardiac batch " << utc_now() << ": " << shell_quote(o.cardiac_exe.string()) << " " << join_quoted(args)
            << "\n";
      }
      const pid_t pid = spawn(o.cardiac_exe, args, outdir / "batch.log", threads);
      running[pid] = {i, std::chrono::steady_clock::now()};
      out << "start " << c.name << (results[i].resumed ? " (resuming from its checkpoint)" : "") << "\n";
    }
    if (running.empty()) continue;
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid == 0 || (pid < 0 && errno == EINTR)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      continue;
    }
    if (pid < 0) {
      err << "cardiac batch: waitpid: " << std::strerror(errno) << "\n";
      break;
    }
    const auto it = running.find(pid);
    if (it == running.end()) continue;
    const std::size_t i = it->second.index;
    const Case& c = m.cases[i];
    CaseResult& r = results[i];
    r.runtime_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - it->second.start).count();
    running.erase(it);
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.exit_code = code;
    r.status = status_of(code);
    if (code != 0) r.reason = describe_exit(code, last_error_line(latest_attempt(dir / c.name / "batch.log")));
    if (code == 0 && !fs::exists(dir / c.name / "summary.json")) {
      r.status = "failed";
      r.reason = "exit code 0 but no summary.json (the config has no simulation?)";
    }
    ++finished;
    out << "[" << finished << "/" << n << "] " << c.name << ": " << r.status << " after " << std::fixed
        << std::setprecision(1) << r.runtime_s << " s" << std::defaultfloat << (r.reason.empty() ? "" : " - " + r.reason)
        << "\n";
    save();
  }
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  save();

  int bad = 0;
  for (std::size_t i = 0; i < n; ++i)
    if (results[i].status != "ok") {
      if (!bad) err << "cardiac batch: case(s) not successful:\n";
      ++bad;
      err << "  " << m.cases[i].name << ": " << results[i].status << ": " << results[i].reason << "\n";
    }
  report_skipped(m, bad ? "" : "cardiac batch: case(s) not successful:\n", err);
  out << "cardiac batch: " << (n - bad) << " of " << n + m.skipped.size() << " case(s) ok"
      << (m.skipped.empty() ? "" : " (" + std::to_string(m.skipped.size()) + " invalid, not run)") << "; wrote "
      << (dir / "batch.json").string() << "\n";
  return bad ? kExitFailed : kExitOk;
}

// ----------------------------------------------------------------------------- slurm executor
struct Captured {
  int code = -1;
  std::string out, err;
};

/// Run a program (searched in PATH) and capture its output.
Captured capture(const std::vector<std::string>& args) {
  Captured c;
  int po[2], pe[2];
  if (::pipe(po) != 0 || ::pipe(pe) != 0) CARDIO_FAIL("pipe failed: " << std::strerror(errno));
  std::vector<std::string> a = args;
  std::vector<char*> argv;
  for (auto& s : a) argv.push_back(s.data());
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) CARDIO_FAIL("fork failed: " << std::strerror(errno));
  if (pid == 0) {
    ::dup2(po[1], 1);
    ::dup2(pe[1], 2);
    ::close(po[0]), ::close(po[1]), ::close(pe[0]), ::close(pe[1]);
    ::execvp(argv[0], argv.data());
    const std::string msg = std::string("cannot execute ") + argv[0] + ": " + std::strerror(errno) + "\n";
    (void)!::write(2, msg.data(), msg.size());
    ::_exit(127);
  }
  ::close(po[1]);
  ::close(pe[1]);
  // Read both pipes without deadlock: small outputs here, so read stdout then stderr after a poll loop.
  auto drain = [](int fd, std::string& s) {
    char buf[4096];
    for (ssize_t k; (k = ::read(fd, buf, sizeof buf)) != 0;) {
      if (k < 0) {
        if (errno == EINTR) continue;
        break;
      }
      s.append(buf, static_cast<std::size_t>(k));
    }
    ::close(fd);
  };
  std::thread t([&] { drain(pe[0], c.err); });
  drain(po[0], c.out);
  t.join();
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  c.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return c;
}

std::string sbatch_script(const Manifest& m, const fs::path& dir, const fs::path& exe) {
  const Resources& r = m.resources;
  std::ostringstream s;
  s << "#!/bin/bash\n"
    << "# Slurm job array for the cohort " << m.file.string() << ", written by cardiac batch " << utc_now() << ".\n"
    << "# One task per case; task i runs case CASES[i] into " << dir.string() << "/<case>.\n"
    << "# A task whose case has summary.json does nothing; one with checkpoint.bin and no\n"
    << "# summary.json continues with `cardiac run --resume`. SIGTERM (scancel, pre-emption, the\n"
    << "# time-limit warning) is forwarded to cardiac, which writes its checkpoint and exits 75.\n"
    << "# Each task records its exit status in <case>/exit_code. Submit: sbatch " << (dir / "batch.sbatch").string()
    << "\n"
    << "#SBATCH --job-name=" << m.name << "\n"
    << "#SBATCH --array=0-" << (m.cases.size() - 1) << "\n"
    << "#SBATCH --cpus-per-task=" << r.cpus_per_task << "\n"
    << "#SBATCH --mem=" << r.memory_mb << "M\n"
    << "#SBATCH --time=" << r.time_limit << "\n";
  if (!r.partition.empty()) s << "#SBATCH --partition=" << r.partition << "\n";
  s << "#SBATCH --requeue\n"
    << "#SBATCH --signal=B:TERM@60\n"
    << "#SBATCH --open-mode=append\n"
    << "#SBATCH --chdir=" << dir.string() << "\n"
    << "#SBATCH --output=" << (dir / "slurm" / "task_%a.out").string() << "\n"
    << "set -u\n"
    << "CARDIAC=" << shell_quote(exe.string()) << "\n"
    << "BATCH_DIR=" << shell_quote(dir.string()) << "\n"
    << "CASES=(";
  for (const auto& c : m.cases) s << " " << shell_quote(c.name);
  s << " )\n"
    << "task=\"${SLURM_ARRAY_TASK_ID:?not a Slurm array task}\"\n"
    << "case_name=\"${CASES[$task]:?no case for task $task}\"\n"
    << "outdir=\"$BATCH_DIR/$case_name\"\n"
    << "threads=\"${SLURM_CPUS_PER_TASK:-1}\"\n"
    << "export OMP_NUM_THREADS=\"$threads\"\n"
    << "mkdir -p \"$outdir\"\n"
    << "rm -f \"$outdir/exit_code\"\n"
    << "record() {  # the exit status, atomically (temp file + rename)\n"
    << "  printf '%s\\n' \"$1\" > \"$outdir/exit_code.tmp.$$\" && mv -f \"$outdir/exit_code.tmp.$$\" \"$outdir/exit_code\"\n"
    << "}\n"
    << "echo \"task $task: case $case_name on $(hostname) at $(date -u +%FT%TZ), $threads thread(s), restart ${SLURM_RESTART_COUNT:-0}\"\n"
    << "if [ -f \"$outdir/summary.json\" ]; then\n"
    << "  echo \"case $case_name: already finished (summary.json)\"\n"
    << "  record 0\n"
    << "  exit 0\n"
    << "fi\n"
    << "if [ -f \"$outdir/checkpoint.bin\" ]; then\n"
    << "  cmd=(\"$CARDIAC\" run --resume \"$outdir\")\n"
    << "else\n"
    << "  case \"$task\" in\n";
  for (std::size_t i = 0; i < m.cases.size(); ++i) {
    const auto args = run_args(m, m.cases[i], dir / m.cases[i].name);  // run BASE -o OUTDIR --set ...
    s << "    " << i << ") cmd=(\"$CARDIAC\"";
    for (std::size_t k = 0; k < args.size(); ++k) s << " " << (k == 3 ? std::string("\"$outdir\"") : shell_quote(args[k]));
    s << ") ;;\n";
  }
  s << "  esac\n"
    << "fi\n"
    << "cmd+=(--threads \"$threads\")\n"
    << "child=\n"
    << "forward() { echo \"task $task: $1 received, forwarding SIGTERM to cardiac\"; [ -n \"$child\" ] && kill -TERM \"$child\" 2>/dev/null; }\n"
    << "trap 'forward TERM' TERM\n"
    << "trap 'forward INT' INT\n"
    << "printf '\\n=== cardiac batch (slurm job %s task %s, restart %s) %s:' \"${SLURM_ARRAY_JOB_ID:-?}\" \"$task\" "
       "\"${SLURM_RESTART_COUNT:-0}\" \"$(date -u +%FT%TZ)\" >> \"$outdir/batch.log\"\n"
    << "printf ' %q' \"${cmd[@]}\" >> \"$outdir/batch.log\"; echo >> \"$outdir/batch.log\"\n"
    << "\"${cmd[@]}\" >> \"$outdir/batch.log\" 2>&1 &\n"
    << "child=$!\n"
    << "while :; do\n"
    << "  wait \"$child\"; rc=$?\n"
    << "  # wait returns early (> 128) when a trapped signal arrives: wait again until cardiac has exited.\n"
    << "  kill -0 \"$child\" 2>/dev/null || break\n"
    << "done\n"
    << "record \"$rc\"\n"
    << "echo \"task $task: case $case_name exit code $rc\"\n"
    << "exit \"$rc\"\n";
  return s.str();
}

std::optional<int> read_exit_code(const fs::path& f) {
  std::ifstream in(f);
  int code = 0;
  if (in >> code) return code;
  return std::nullopt;
}

int run_slurm(const Manifest& m, const BatchOptions& o, std::ostream& out, std::ostream& err) {
  const fs::path dir = o.batch_dir;
  fs::create_directories(dir / "slurm");
  write_case_scripts(m, dir, o.cardiac_exe, 0);
  std::vector<CaseResult> results(m.cases.size());
  for (std::size_t i = 0; i < m.cases.size(); ++i) {
    const fs::path outdir = dir / m.cases[i].name;
    fs::create_directories(outdir);
    fs::remove(outdir / "exit_code");  // a stale one must not count for this submission
    const CaseState st = case_state(outdir, m.cases[i], out);
    results[i].reused = st == CaseState::done;
    results[i].resumed = st == CaseState::resumable;
  }
  const fs::path script = dir / "batch.sbatch";
  write_file_atomic(script, sbatch_script(m, dir, o.cardiac_exe));
  json extra = {{"cardiac", o.cardiac_exe.string()}, {"sbatch", script.string()}};
  write_batch_json(dir, m, "slurm", extra, results);
  out << "wrote " << script.string() << " (" << m.cases.size() << " array task(s))\n";
  if (!o.submit) {
    out << "submit with: sbatch " << shell_quote(script.string()) << "\n";
    return kExitOk;
  }
  const Captured sb = capture({"sbatch", "--parsable", script.string()});
  if (sb.code != 0) {
    err << "cardiac batch: sbatch failed (exit code " << sb.code << "): " << trim(sb.err) << "\n";
    return kExitFailed;
  }
  std::string job = trim(sb.out);
  job = job.substr(0, job.find(';'));  // "JOBID;CLUSTER" on multi-cluster setups
  write_file_atomic(dir / "slurm" / "job_id", job + "\n");
  extra["job_id"] = job;
  write_batch_json(dir, m, "slurm", extra, results);
  out << job << "\n" << std::flush;
  if (!o.wait) return kExitOk;

  // Poll squeue until the array has left the queue (a purged job id is "Invalid job id").
  int errors = 0;
  for (;;) {
    const Captured q = capture({"squeue", "-h", "-j", job, "-o", "%i %T"});
    if (q.code == 0 && trim(q.out).empty()) break;
    if (q.code != 0) {
      if (q.err.find("Invalid job id") != std::string::npos) break;
      if (++errors > 60) {
        err << "cardiac batch: squeue keeps failing: " << trim(q.err) << "\n";
        return kExitFailed;
      }
    } else {
      errors = 0;
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(o.poll_seconds));
  }
  int bad = 0;
  for (std::size_t i = 0; i < m.cases.size(); ++i) {
    const fs::path outdir = dir / m.cases[i].name;
    CaseResult& r = results[i];
    r.exit_code = read_exit_code(outdir / "exit_code");
    if (!r.exit_code) {
      r.status = "failed";
      r.reason = "no exit code recorded (the task was cancelled, timed out or killed before cardiac ended; see " +
                 (dir / "slurm").string() + "/task_" + std::to_string(i) + ".out)";
    } else {
      r.status = status_of(*r.exit_code);
      if (*r.exit_code != 0) r.reason = describe_exit(*r.exit_code, last_error_line(latest_attempt(outdir / "batch.log")));
    }
    if (r.status != "ok") {
      if (!bad) err << "cardiac batch: case(s) not successful:\n";
      ++bad;
      err << "  " << m.cases[i].name << ": " << r.status << ": " << r.reason << "\n";
    }
  }
  write_batch_json(dir, m, "slurm", extra, results);
  out << "cardiac batch: job " << job << " ended; " << (m.cases.size() - bad) << " of " << m.cases.size()
      << " case(s) ok\n";
  return bad ? kExitFailed : kExitOk;
}

}  // namespace

std::string shell_quote(const std::string& s) {
  static const std::regex plain(R"(^[A-Za-z0-9_./=:,+@%-]+$)");
  if (!s.empty() && std::regex_match(s, plain)) return s;
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string unsafe_name_reason(const std::string& name) {
  static const std::regex safe(R"(^[A-Za-z0-9][A-Za-z0-9_-]*$)");
  if (name.empty()) return "the name is empty";
  if (name.size() > 64) return "the name is longer than 64 characters";
  if (!std::regex_match(name, safe))
    return "not a safe directory name (use letters, digits, '_' and '-', starting with a letter or digit)";
  if (kReserved.count(name)) return "'" + name + "' is reserved (a folder of BATCH_DIR that is not a case)";
  return {};
}

ManifestCheck load_manifest(const fs::path& file, const Validator& validate) {
  ManifestCheck out;
  Manifest& m = out.manifest;
  struct RawCase {
    std::string label;  // "cases[i]" or the name
    std::string name;
    std::vector<std::string> overrides;
    std::vector<std::string> problems;
    bool ok = true;        // no problem found yet
    bool checkable = true;  // its config can be validated (inputs present, case entry readable)
  };
  // Problems of the manifest itself, and of one case (which --skip-invalid can leave out).
  auto problem = [&](const std::string& p) {
    out.problems.push_back(p);
    ++out.manifest_problems;
  };
  auto case_problem = [&](RawCase& rc, const std::string& p) {
    out.problems.push_back(rc.label + ": " + p);
    rc.problems.push_back(p);
  };
  std::error_code ec;
  m.file = fs::absolute(file, ec);
  std::shared_ptr<config::Document> doc;
  std::vector<std::string> common;
  std::vector<RawCase> raw;
  try {
    doc = config::Document::load_file(file);
    const config::Node root = doc->root();
    const std::string base = root.text("base_config", std::nullopt);
    m.base_config = fs::absolute(m.file.parent_path() / base).lexically_normal();
    std::string stem = m.file.stem().string();
    for (char& ch : stem)
      if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_' && ch != '-' && ch != '.') ch = '_';
    m.name = root.text("name", stem.empty() ? std::string("cohort") : stem.substr(0, 64));
    if (!std::regex_match(m.name, std::regex(R"(^[A-Za-z0-9_.+-]{1,64}$)")))
      root.fail("name", "expected a job name of letters, digits and _ . + -");
    const config::Node res = root.child_or_empty("resources");
    m.resources.cpus_per_task = static_cast<int>(res.integer("cpus_per_task", 1, 1, 4096));
    const std::string mem = res.text("memory", "2 GB");
    if (const auto mb = parse_memory_mb(mem))
      m.resources.memory_mb = *mb;
    else
      res.fail("memory", "expected an amount of memory like '2 GB' or '512 MB', got '" + mem + "'");
    m.resources.time_limit = res.text("time_limit", "01:00:00");
    if (!valid_time_limit(m.resources.time_limit))
      res.fail("time_limit", "expected a Slurm time limit (HH:MM:SS, D-HH:MM:SS, MM or MM:SS), got '" +
                                 m.resources.time_limit + "'");
    m.resources.partition = res.text("partition", "");
    if (!m.resources.partition.empty() && !std::regex_match(m.resources.partition, std::regex(R"(^[A-Za-z0-9_.,-]+$)")))
      res.fail("partition", "expected a partition name");
    for (const auto& k : root.keys("set")) common.push_back(k + "=" + root.child("set").yaml_text(k));
    const auto cases = root.list("cases");
    if (cases.empty()) root.fail("cases", "expected a non-empty list of cases ({name, set, inputs})");
    for (std::size_t i = 0; i < cases.size(); ++i) {
      RawCase rc;
      rc.label = "cases[" + std::to_string(i) + "]";
      const config::Node& c = cases[i];
      try {
        rc.name = c.text("name", std::nullopt);
        rc.label = "case '" + rc.name + "'";
      } catch (const Error& e) {
        case_problem(rc, e.what());
        rc.ok = rc.checkable = false;
      }
      try {
        for (const auto& k : c.keys("set")) rc.overrides.push_back(k + "=" + c.child("set").yaml_text(k));
        for (const auto& k : c.keys("inputs")) {
          const std::string p = c.child("inputs").text(k, std::nullopt);
          const fs::path abs = fs::absolute(m.file.parent_path() / p).lexically_normal();
          if (!fs::exists(abs, ec)) {
            case_problem(rc, "input " + k + ": " + abs.string() + " does not exist");
            rc.ok = rc.checkable = false;
          } else if (!fs::is_directory(abs, ec) && ::access(abs.c_str(), R_OK) != 0) {
            case_problem(rc, "input " + k + ": " + abs.string() + " is not readable");
            rc.ok = rc.checkable = false;
          }
          rc.overrides.push_back(k + "=" + yaml_quote(abs.string()));
        }
      } catch (const Error& e) {
        case_problem(rc, e.what());
        rc.ok = rc.checkable = false;
      }
      raw.push_back(std::move(rc));
    }
    try {
      doc->check_no_unknown_keys();
    } catch (const Error& e) {
      problem(std::string("manifest: ") + e.what());
    }
  } catch (const Error& e) {
    problem(std::string("manifest: ") + e.what());
    return out;  // the manifest itself is unreadable: case checks would only add noise
  }

  // Names: safe and unique.
  std::map<std::string, std::size_t> first;
  for (std::size_t i = 0; i < raw.size(); ++i) {
    if (raw[i].name.empty() && !raw[i].ok) continue;  // already reported (no name)
    if (const std::string why = unsafe_name_reason(raw[i].name); !why.empty()) {
      case_problem(raw[i], why);
      raw[i].ok = false;
    }
    const auto [it, inserted] = first.emplace(raw[i].name, i);
    if (!inserted) {
      case_problem(raw[i], "duplicate case name (cases[" + std::to_string(it->second) + "] and cases[" +
              std::to_string(i) + "])");
      raw[i].ok = false;
    }
  }

  // The base config must at least load; each case is then validated as `cardiac validate` would.
  try {
    (void)config::Document::load_file(m.base_config);
  } catch (const Error& e) {
    problem(std::string("base_config: ") + e.what());
    return out;
  }
  for (auto& rc : raw) {
    Case c;
    c.name = rc.name;
    c.overrides = common;
    c.overrides.insert(c.overrides.end(), rc.overrides.begin(), rc.overrides.end());
    if (rc.checkable) {
      try {
        auto d = config::Document::load_file(m.base_config);
        for (const auto& o : c.overrides) d->set_override(o);
        if (validate) validate(*d);
        c.resolved = d->resolved_yaml();
      } catch (const Error& e) {
        const bool input = dynamic_cast<const InvalidInput*>(&e) != nullptr;
        case_problem(rc, std::string(input ? "invalid input: " : "invalid config: ") + e.what());
        rc.ok = false;
      }
    }
    m.cases.push_back(std::move(c));
    std::string why;
    for (const auto& p : rc.problems) why += (why.empty() ? "" : "; ") + p;
    out.case_problems.push_back(why);
  }
  return out;
}

int run_batch(const BatchOptions& o_in, std::ostream& out, std::ostream& err) {
  BatchOptions o = o_in;
  if (o.cardiac_exe.empty()) o.cardiac_exe = self_exe();
  if (o.executor != "local" && o.executor != "slurm") {
    err << "cardiac batch: --executor: expected local or slurm, got '" << o.executor << "'\n";
    return kExitUsage;
  }
  if (o.executor == "local" && (o.submit || o.wait)) {
    err << "cardiac batch: --submit and --wait apply to --executor slurm only\n";
    return kExitUsage;
  }
  if (o.wait && !o.submit) {
    err << "cardiac batch: --wait needs --submit\n";
    return kExitUsage;
  }
  if (o.batch_dir.empty()) {
    err << "cardiac batch: needs -o BATCH_DIR\n";
    return kExitUsage;
  }
  std::error_code ec;
  if (fs::exists(o.batch_dir, ec) && !fs::is_directory(o.batch_dir, ec)) {
    err << "cardiac batch: " << o.batch_dir.string() << " exists and is not a directory\n";
    return kExitUsage;
  }
  o.batch_dir = fs::absolute(o.batch_dir).lexically_normal();
  if (!fs::exists(o.manifest, ec)) {
    err << "cardiac batch: manifest " << o.manifest.string() << " does not exist\n";
    return kExitUsage;
  }
  out << "checking " << o.manifest.string() << " ...\n" << std::flush;
  const ManifestCheck check = load_manifest(o.manifest, o.validate);
  std::optional<Manifest> runnable;
  if (check.problems.empty()) runnable = check.manifest;
  else if (o.skip_invalid) runnable = without_invalid_cases(check);
  if (!runnable) {
    err << "cardiac batch: " << o.manifest.string() << ": " << check.problems.size()
        << " problem(s); nothing was run or submitted"
        << (o.skip_invalid ? " (--skip-invalid needs a valid manifest and a valid case)" : "") << ":\n";
    for (const auto& p : check.problems) err << "  " << p << "\n";
    return kExitUsage;
  }
  const Manifest& m = *runnable;
  out << m.cases.size() << " case(s) valid\n";
  report_skipped(m, "cardiac batch: " + o.manifest.string() + ": " + std::to_string(m.skipped.size()) +
                        " invalid case(s) not run (--skip-invalid):\n", err);
  std::optional<DirectoryLock> lock;  // one batch per BATCH_DIR (the cases lock their own directories)
  try {
    make_writable_directory(o.batch_dir);
    lock.emplace(o.batch_dir, "cardiac batch " + o.manifest.string());
    remove_stale_temp_files(o.batch_dir);
    // The manifest as used, for the record.
    write_file_atomic(o.batch_dir / "manifest.yaml", "# copy of " + m.file.string() + " (" + utc_now() + ")\n" + slurp(m.file));
    const int code = o.executor == "local" ? run_local(m, o, out, err) : run_slurm(m, o, out, err);
    return m.skipped.empty() ? code : kExitUsage;  // the valid cases ran; the manifest needs fixing
  } catch (const DirectoryBusy& e) {
    err << "cardiac batch: " << e.what() << "\n";
    return kExitUsage;
  } catch (const UnusableOutput& e) {
    err << "cardiac batch: " << e.what() << "\n";
    return kExitUsage;
  } catch (const std::exception& e) {
    err << "cardiac batch: " << describe(e) << "\n";
    return kExitFailed;
  }
}

// ----------------------------------------------------------------------------- collect
namespace {

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string num(const json& v) {
  if (v.is_number()) {
    std::ostringstream os;
    os << std::setprecision(10) << v.get<double>();
    return os.str();
  }
  if (v.is_object() && v.contains("value")) return num(v["value"]);
  return {};
}

const json* at_path(const json& j, std::initializer_list<const char*> keys) {
  const json* p = &j;
  for (const char* k : keys) {
    if (!p->is_object() || !p->contains(k)) return nullptr;
    p = &(*p)[k];
  }
  return p;
}

}  // namespace

int collect(const CollectOptions& o, std::ostream& out, std::ostream& err) {
  const fs::path dir = o.batch_dir;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    err << "cardiac collect: " << dir.string() << " is not a directory\n";
    return kExitUsage;
  }
  // Cases: those of batch.json in manifest order, else the sub-directories that look like cases.
  struct Row {
    std::string name, status, reason;
    std::optional<int> exit_code;
    json summary;
  };
  std::vector<Row> rows;
  json batch;
  if (fs::exists(dir / "batch.json", ec)) {
    try {
      batch = json::parse(slurp(dir / "batch.json"));
      for (const auto& c : batch.at("cases")) {
        Row r;
        r.name = c.at("name").get<std::string>();
        r.status = c.value("status", "pending");
        r.reason = c.value("reason", "");
        if (c.contains("exit_code") && c["exit_code"].is_number_integer()) r.exit_code = c["exit_code"].get<int>();
        rows.push_back(r);
      }
    } catch (const std::exception& e) {
      err << "cardiac collect: " << (dir / "batch.json").string() << ": " << e.what() << "\n";
      return kExitUsage;
    }
  } else {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      const std::string n = e.path().filename().string();
      if (!e.is_directory() || kReserved.count(n)) continue;
      for (const char* f : {"summary.json", "config.resolved.yaml", "batch.log", "exit_code"})
        if (fs::exists(e.path() / f)) {
          names.push_back(n);
          break;
        }
    }
    std::sort(names.begin(), names.end());
    for (const auto& n : names) rows.push_back({n, "pending", "", std::nullopt, {}});
  }
  if (rows.empty()) {
    err << "cardiac collect: no cases in " << dir.string() << " (no batch.json and no case folders)\n";
    return kExitUsage;
  }
  std::vector<std::string> cavities;
  for (auto& r : rows) {
    const fs::path cd = dir / r.name;
    if (r.status == "invalid") {  // not run (--skip-invalid): a summary.json there is an older config's
    } else if (fs::exists(cd / "summary.json", ec)) {
      try {
        r.summary = json::parse(slurp(cd / "summary.json"));
        r.status = "ok";
        r.reason.clear();
        if (!r.exit_code) r.exit_code = 0;
      } catch (const std::exception& e) {
        r.status = "failed";
        r.reason = "unreadable summary.json: " + std::string(e.what());
      }
    } else if (const auto code = read_exit_code(cd / "exit_code")) {  // a Slurm task
      r.exit_code = code;
      r.status = *code == 0 ? "failed" : status_of(*code);
      r.reason = *code == 0 ? "exit code 0 but no summary.json"
                            : describe_exit(*code, last_error_line(latest_attempt(cd / "batch.log")));
    } else if (r.status == "ok") {
      r.status = "failed";
      r.reason = "summary.json missing";
    } else if (r.status == "pending") {
      r.reason = fs::exists(cd / "checkpoint.bin", ec) ? "not finished (checkpoint.bin present: resumable)"
                                                       : "not finished (no summary.json, no exit code)";
    }
    if (const json* cs = at_path(r.summary, {"cavities"}); cs && cs->is_array())
      for (const auto& c : *cs)
        if (c.contains("name") && c["name"].is_string()) {
          const std::string n = c["name"].get<std::string>();
          if (std::find(cavities.begin(), cavities.end(), n) == cavities.end()) cavities.push_back(n);
        }
  }

  std::vector<std::string> header{"case", "status", "exit_code", "reason"};
  for (const auto& c : cavities)
    for (const char* q : {"EDV_mL", "ESV_mL", "SV_mL", "EF"}) header.push_back(c + "_" + q);
  for (const char* q : {"max_tissue_volume_change_percent", "fibre_shortening_end_systole", "wall_thickening",
                        "simulate_time_s", "peak_E_cc", "peak_E_ll", "peak_E_rr", "peak_E_ff"})
    header.push_back(q);
  std::ostringstream csv;
  for (std::size_t k = 0; k < header.size(); ++k) csv << (k ? "," : "") << header[k];
  csv << "\n";
  int ok = 0;
  for (const auto& r : rows) {
    std::vector<std::string> f{r.name, r.status, r.exit_code ? std::to_string(*r.exit_code) : "", r.reason};
    ok += r.status == "ok";
    for (const auto& c : cavities) {
      const json* cav = nullptr;
      if (const json* cs = at_path(r.summary, {"cavities"}); cs && cs->is_array())
        for (const auto& x : *cs)
          if (x.value("name", "") == c) cav = &x;
      for (const char* q : {"EDV_mL", "ESV_mL", "SV_mL", "EF"})
        f.push_back(cav && cav->contains(q) ? num((*cav)[q]) : "");
    }
    for (const char* q : {"max_tissue_volume_change_percent", "fibre_shortening_end_systole", "wall_thickening"}) {
      const json* v = at_path(r.summary, {"heart", q});
      f.push_back(v ? num(*v) : "");
    }
    const json* st = at_path(r.summary, {"simulate_time_s"});
    f.push_back(st ? num(*st) : "");
    for (const char* q : {"E_cc", "E_ll", "E_rr", "E_ff"}) {
      const json* v = at_path(r.summary, {"analysis", "peak_strain", "global", q});
      f.push_back(v ? num(*v) : "");
    }
    for (std::size_t k = 0; k < f.size(); ++k) csv << (k ? "," : "") << csv_field(f[k]);
    csv << "\n";
  }
  const fs::path file = dir / "cohort.csv";
  try {
    write_file_atomic(file, csv.str());
  } catch (const std::exception& e) {
    err << "cardiac collect: " << e.what() << "\n";
    return kExitFailed;
  }
  out << "wrote " << file.string() << " (" << rows.size() << " case(s), " << ok << " ok)\n";
  for (const auto& r : rows)
    if (r.status != "ok") out << "  " << r.name << ": " << r.status << (r.reason.empty() ? "" : ": " + r.reason) << "\n";

  if (!o.figures) return kExitOk;
  const char* env = std::getenv("CARDIAC_SCRIPTS_DIR");
  const fs::path scripts = env && *env ? fs::path(env) : fs::path(CARDIO_SCRIPTS_DIR);
  const fs::path script = scripts / "figures" / "cohort_figures.py";
  const fs::path python = "/usr/bin/python3";
  if (scripts.empty() || !fs::exists(script, ec)) {
    err << "cardiac collect: warning: no cohort figures: " << script.string() << " not found\n";
    return kExitOk;
  }
  if (::access(python.c_str(), X_OK) != 0) {
    err << "cardiac collect: warning: no cohort figures: " << python.string() << " not found\n";
    return kExitOk;
  }
  out << std::flush;
  const Captured c = capture({python.string(), script.string(), fs::absolute(dir).string()});
  out << c.out;
  if (c.code != 0) {
    err << c.err << "cardiac collect: warning: the cohort figures failed (" << script.string() << ", exit code "
        << c.code << "); cohort.csv is written\n";
    return kExitOk;
  }
  return kExitOk;
}

}  // namespace cardio::pipeline::batch
