// The local executor of `cardiac batch`: the cases run here as `cardiac run` children, o.jobs at a
// time, each with its output in <case>/batch.log; batch.json is rewritten as each case ends.
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <iomanip>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <thread>

#include "cardio/core/dir_lock.hpp"
#include "cardio/core/parallel.hpp"
#include "cardio/core/process.hpp"
#include "cohort/batch_dir.hpp"
#include "cohort/case_exit.hpp"
#include "cohort/executors.hpp"
#include "cohort/text.hpp"
#include "common/run_log.hpp"

namespace fs = std::filesystem;

namespace cardio::pipeline::batch {

namespace {

std::atomic<int> g_signal{0};
extern "C" void on_signal(int sig) { g_signal = sig; }

/// While it lives, SIGINT and SIGTERM only raise a flag: the batch then stops its cases itself.
class SignalFlag {
 public:
  SignalFlag() {
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    g_signal = 0;
    sigaction(SIGINT, &sa, &m_old_int);
    sigaction(SIGTERM, &sa, &m_old_term);
  }
  ~SignalFlag() {
    sigaction(SIGINT, &m_old_int, nullptr);
    sigaction(SIGTERM, &m_old_term, nullptr);
  }
  SignalFlag(const SignalFlag&) = delete;
  SignalFlag& operator=(const SignalFlag&) = delete;
  /// The signal received, or 0.
  int raised() const { return g_signal.load(); }

 private:
  struct sigaction m_old_int {
  }, m_old_term{};
};

class LocalBatch {
 public:
  LocalBatch(const Manifest& m, const BatchOptions& o, std::ostream& out, std::ostream& err)
      : m_m(m), m_o(o), m_dir(o.batch_dir), m_n(m.cases.size()), m_out(out), m_err(err), m_results(m.cases.size()) {
    m_jobs = std::max(1, std::min<int>(o.jobs, static_cast<int>(m_n)));
    m_threads = o.threads > 0 ? o.threads : std::max(1, available_cpus() / m_jobs);
    m_extra = {{"jobs", m_jobs}, {"threads_per_case", m_threads}, {"cardiac", o.cardiac_exe.string()}};
  }

  int run() {
    write_case_scripts(m_m, m_dir, m_o.cardiac_exe, m_threads);
    save();
    m_out << "cardiac batch: " << m_n << " case(s) from " << m_m.file.string() << ", " << m_jobs << " worker(s) x "
          << m_threads << " thread(s), output in " << m_dir.string() << "\n";
    {
      const SignalFlag signals;
      while (m_next < m_n || !m_running.empty()) {
        const int sig = signals.raised();
        if (sig) stop(sig);
        while (!sig && m_next < m_n && static_cast<int>(m_running.size()) < m_jobs) start(m_next++);
        if (m_running.empty()) continue;
        std::optional<EndedChild> ended;
        try {
          ended = reap_ended_child();
        } catch (const Error& e) {
          m_err << "cardiac batch: " << e.what() << "\n";
          break;
        }
        if (ended)
          on_end(*ended);
        else
          std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
    }
    save();
    return report();
  }

 private:
  struct Running {
    std::size_t index;
    std::chrono::steady_clock::time_point start;
    bool signalled = false;
  };

  void save() { write_batch_json(m_dir, m_m, "local", m_extra, m_results); }

  /// "[k/n] CASE: " for a case that has just ended (or needs no run); the caller ends the line.
  std::ostream& progress(std::size_t i) {
    ++m_finished;
    return m_out << "[" << m_finished << "/" << m_n << "] " << m_m.cases[i].name << ": ";
  }

  void start(std::size_t i) {
    const fs::path outdir = m_dir / m_m.cases[i].name;
    fs::create_directories(outdir);
    const std::optional<CaseState> state = checked_state(i, outdir);
    if (!state) return;
    if (*state != CaseState::done) {
      launch(i, outdir, *state == CaseState::resumable);
      return;
    }
    CaseResult& r = m_results[i];
    r.status = "ok";
    r.exit_code = 0;
    r.reused = true;
    r.reason = "finished before (summary.json present): not run again";
    progress(i) << "already finished\n";
    save();
  }

  /// The case's state, or std::nullopt (the case failed) when another process uses its directory:
  /// such a directory is neither cleared nor run into. The lock is dropped again before the case's
  /// own `cardiac run` takes it.
  std::optional<CaseState> checked_state(std::size_t i, const fs::path& outdir) {
    try {
      const DirectoryLock lock(outdir, "cardiac batch (checking the case)");
      return case_state(outdir, m_m.cases[i], m_out);
    } catch (const DirectoryBusy& e) {
      m_results[i].status = "failed";
      m_results[i].reason = e.what();
      progress(i) << "failed - " << e.what() << "\n";
      save();
      return std::nullopt;
    }
  }

  void launch(std::size_t i, const fs::path& outdir, bool resume) {
    std::vector<std::string> argv = resume ? resume_args(outdir) : run_args(m_m, m_m.cases[i], outdir);
    argv.insert(argv.begin(), m_o.cardiac_exe.string());
    argv.insert(argv.end(), {"--threads", std::to_string(m_threads)});
    m_results[i].resumed = resume;
    std::ofstream(outdir / "batch.log", std::ios::app)
        << "\n=== cardiac batch " << utc_now() << ": " << join_quoted(argv) << "\n";
    ProcessOptions po;
    po.env = {{"OMP_NUM_THREADS", std::to_string(m_threads)}};
    // Own process group: a Ctrl-C on the terminal reaches the batch only, which forwards one
    // SIGTERM to each case (cardiac run then checkpoints and exits with 75).
    po.own_process_group = true;
    po.error_prefix = "cardiac batch: ";
    const pid_t pid = spawn_process(argv, outdir / "batch.log", po);
    m_running[pid] = {i, std::chrono::steady_clock::now()};
    m_out << "start " << m_m.cases[i].name << (resume ? " (resuming from its checkpoint)" : "") << "\n";
  }

  /// One SIGTERM to each running case; the cases not started are interrupted.
  void stop(int sig) {
    for (auto& [pid, r] : m_running)
      if (!r.signalled) {
        ::kill(pid, SIGTERM);
        r.signalled = true;
      }
    for (; m_next < m_n; ++m_next) {
      m_results[m_next].status = "interrupted";
      m_results[m_next].reason = "not started: the batch was interrupted (signal " + std::to_string(sig) + ")";
    }
  }

  void on_end(const EndedChild& ended) {
    const auto it = m_running.find(ended.pid);
    if (it == m_running.end()) return;
    const std::size_t i = it->second.index;
    const fs::path outdir = m_dir / m_m.cases[i].name;
    CaseResult& r = m_results[i];
    r.runtime_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - it->second.start).count();
    m_running.erase(it);
    const int code = ended.status.code();
    r.exit_code = code;
    r.status = status_of(code);
    if (code != 0) r.reason = exit_reason(code, outdir);
    if (code == 0 && !fs::exists(outdir / "summary.json")) {
      r.status = "failed";
      r.reason = "exit code 0 but no summary.json (the config has no simulation?)";
    }
    progress(i) << r.status << " after " << std::fixed << std::setprecision(1) << r.runtime_s << " s"
                << std::defaultfloat << (r.reason.empty() ? "" : " - " + r.reason) << "\n";
    save();
  }

  int report() {
    const int bad = report_unsuccessful(m_m, m_results, m_err);
    report_skipped(m_m, bad ? "" : "cardiac batch: case(s) not successful:\n", m_err);
    m_out << "cardiac batch: " << (m_n - bad) << " of " << m_n + m_m.skipped.size() << " case(s) ok"
          << (m_m.skipped.empty() ? "" : " (" + std::to_string(m_m.skipped.size()) + " invalid, not run)") << "; wrote "
          << (m_dir / "batch.json").string() << "\n";
    return bad ? kExitFailed : kExitOk;
  }

  const Manifest& m_m;
  const BatchOptions& m_o;
  const fs::path m_dir;
  const std::size_t m_n;
  std::ostream& m_out;
  std::ostream& m_err;
  int m_jobs = 1, m_threads = 1;
  nlohmann::json m_extra;
  std::vector<CaseResult> m_results;
  std::map<pid_t, Running> m_running;
  std::size_t m_next = 0, m_finished = 0;
};

}  // namespace

int run_local(const Manifest& m, const BatchOptions& o, std::ostream& out, std::ostream& err) {
  return LocalBatch(m, o, out, err).run();
}

}  // namespace cardio::pipeline::batch
