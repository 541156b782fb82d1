// The Slurm executor of `cardiac batch`: BATCH_DIR/batch.sbatch, a job array of one task per case;
// with --submit it runs sbatch, with --wait it polls squeue until the array has left the queue and
// reads the exit code each task recorded.
#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <sstream>
#include <thread>

#include "cardio/core/atomic_file.hpp"
#include "cardio/core/process.hpp"
#include "cohort/batch_dir.hpp"
#include "cohort/case_exit.hpp"
#include "cohort/executors.hpp"
#include "cohort/text.hpp"
#include "common/run_log.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace cardio::pipeline::batch {

namespace {

/// A program looked up in PATH (sbatch, squeue), run to its end.
ProcessOutput run_tool(const std::vector<std::string>& argv) {
  ProcessOptions o;
  o.search_path = true;
  return capture_process(argv, o);
}

/// The script's header: what it does, and the #SBATCH directives.
void write_directives(std::ostream& s, const Manifest& m, const fs::path& dir) {
  const Resources& r = m.resources;
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
    << "#SBATCH --output=" << (dir / "slurm" / "task_%a.out").string() << "\n";
}

/// The task's case, and its command: done already, resumed, or run from the start.
void write_case_choice(std::ostream& s, const Manifest& m, const fs::path& dir, const fs::path& exe) {
  s << "set -u\n"
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
    << "  printf '%s\\n' \"$1\" > \"$outdir/exit_code.tmp.$$\" && "
       "mv -f \"$outdir/exit_code.tmp.$$\" \"$outdir/exit_code\"\n"
    << "}\n"
    << "echo \"task $task: case $case_name on $(hostname) at $(date -u +%FT%TZ), $threads thread(s), "
       "restart ${SLURM_RESTART_COUNT:-0}\"\n"
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
    for (std::size_t k = 0; k < args.size(); ++k)
      s << " " << (k == 3 ? std::string("\"$outdir\"") : shell_quote(args[k]));
    s << ") ;;\n";
  }
  s << "  esac\n"
    << "fi\n";
}

/// Runs the command in the background, forwarding SIGTERM/SIGINT to it, and records its exit status.
void write_run_and_record(std::ostream& s) {
  s << "cmd+=(--threads \"$threads\")\n"
    << "child=\n"
    << "forward() { echo \"task $task: $1 received, forwarding SIGTERM to cardiac\"; "
       "[ -n \"$child\" ] && kill -TERM \"$child\" 2>/dev/null; }\n"
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
}

std::string sbatch_script(const Manifest& m, const fs::path& dir, const fs::path& exe) {
  std::ostringstream s;
  write_directives(s, m, dir);
  write_case_choice(s, m, dir, exe);
  write_run_and_record(s);
  return s.str();
}

/// Each case's directory readied for this submission, and what it holds (reused, resumed).
std::vector<CaseResult> prepare_cases(const Manifest& m, const fs::path& dir, std::ostream& out) {
  std::vector<CaseResult> results(m.cases.size());
  for (std::size_t i = 0; i < m.cases.size(); ++i) {
    const fs::path outdir = dir / m.cases[i].name;
    fs::create_directories(outdir);
    fs::remove(outdir / "exit_code");  // a stale one must not count for this submission
    const CaseState st = case_state(outdir, m.cases[i], out);
    results[i].reused = st == CaseState::done;
    results[i].resumed = st == CaseState::resumable;
  }
  return results;
}

/// sbatch: the job id, or std::nullopt (reported on err) when it failed.
std::optional<std::string> submit(const fs::path& script, std::ostream& err) {
  const ProcessOutput sb = run_tool({"sbatch", "--parsable", script.string()});
  if (sb.status.code() != 0) {
    err << "cardiac batch: sbatch failed (exit code " << sb.status.code() << "): " << trim(sb.err) << "\n";
    return std::nullopt;
  }
  const std::string job = trim(sb.out);
  return job.substr(0, job.find(';'));  // "JOBID;CLUSTER" on multi-cluster setups
}

/// Polls squeue until the array has left the queue (a purged job id is "Invalid job id"); false
/// (reported on err) when squeue keeps failing.
bool wait_for_array(const std::string& job, double poll_seconds, std::ostream& err) {
  int errors = 0;
  for (;;) {
    const ProcessOutput q = run_tool({"squeue", "-h", "-j", job, "-o", "%i %T"});
    if (q.status.code() == 0 && trim(q.out).empty()) return true;
    if (q.status.code() != 0) {
      if (q.err.find("Invalid job id") != std::string::npos) return true;
      if (++errors > 60) {
        err << "cardiac batch: squeue keeps failing: " << trim(q.err) << "\n";
        return false;
      }
    } else {
      errors = 0;
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(poll_seconds));
  }
}

/// Each case's result from the exit code its task recorded.
void read_task_results(const Manifest& m, const fs::path& dir, std::vector<CaseResult>& results) {
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
      if (*r.exit_code != 0) r.reason = exit_reason(*r.exit_code, outdir);
    }
  }
}

}  // namespace

int run_slurm(const Manifest& m, const BatchOptions& o, std::ostream& out, std::ostream& err) {
  const fs::path dir = o.batch_dir;
  fs::create_directories(dir / "slurm");
  write_case_scripts(m, dir, o.cardiac_exe, 0);
  std::vector<CaseResult> results = prepare_cases(m, dir, out);
  const fs::path script = dir / "batch.sbatch";
  write_file_atomic(script, sbatch_script(m, dir, o.cardiac_exe));
  json extra = {{"cardiac", o.cardiac_exe.string()}, {"sbatch", script.string()}};
  write_batch_json(dir, m, "slurm", extra, results);
  out << "wrote " << script.string() << " (" << m.cases.size() << " array task(s))\n";
  if (!o.submit) {
    out << "submit with: sbatch " << shell_quote(script.string()) << "\n";
    return kExitOk;
  }
  const std::optional<std::string> job = submit(script, err);
  if (!job) return kExitFailed;
  write_file_atomic(dir / "slurm" / "job_id", *job + "\n");
  extra["job_id"] = *job;
  write_batch_json(dir, m, "slurm", extra, results);
  out << *job << "\n" << std::flush;
  if (!o.wait) return kExitOk;
  if (!wait_for_array(*job, o.poll_seconds, err)) return kExitFailed;
  read_task_results(m, dir, results);
  const int bad = report_unsuccessful(m, results, err);
  write_batch_json(dir, m, "slurm", extra, results);
  out << "cardiac batch: job " << *job << " ended; " << (m.cases.size() - bad) << " of " << m.cases.size()
      << " case(s) ok\n";
  return bad ? kExitFailed : kExitOk;
}

}  // namespace cardio::pipeline::batch
