// `cardiac batch`: its options, the manifest checked as a whole, BATCH_DIR created and locked, then
// the executor (local_executor.cpp, slurm_executor.cpp).
#include "cohort/batch.hpp"

#include <optional>
#include <ostream>

#include "cardio/core/atomic_file.hpp"
#include "cardio/core/dir_lock.hpp"
#include "cohort/executors.hpp"
#include "cohort/manifest.hpp"
#include "cohort/text.hpp"
#include "common/run_log.hpp"

namespace fs = std::filesystem;

namespace cardio::pipeline::batch {

namespace {

/// Absolute path of this program.
fs::path self_exe() {
  std::error_code ec;
  const fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path("cardiac") : p;
}

/// Bad usage in the options, reported on err; false when there is some.
bool usable_options(const BatchOptions& o, std::ostream& err) {
  if (o.executor != "local" && o.executor != "slurm") {
    err << "cardiac batch: --executor: expected local or slurm, got '" << o.executor << "'\n";
    return false;
  }
  if (o.executor == "local" && (o.submit || o.wait)) {
    err << "cardiac batch: --submit and --wait apply to --executor slurm only\n";
    return false;
  }
  if (o.wait && !o.submit) {
    err << "cardiac batch: --wait needs --submit\n";
    return false;
  }
  if (o.batch_dir.empty()) {
    err << "cardiac batch: needs -o BATCH_DIR\n";
    return false;
  }
  std::error_code ec;
  if (fs::exists(o.batch_dir, ec) && !fs::is_directory(o.batch_dir, ec)) {
    err << "cardiac batch: " << o.batch_dir.string() << " exists and is not a directory\n";
    return false;
  }
  return true;
}

/// The manifest's cases to run: all of them, or with --skip-invalid the valid ones; std::nullopt
/// (the problems reported on err) when nothing may run.
std::optional<Manifest> runnable_manifest(const BatchOptions& o, std::ostream& out, std::ostream& err) {
  out << "checking " << o.manifest.string() << " ...\n" << std::flush;
  const ManifestCheck check = load_manifest(o.manifest, o.validate);
  std::optional<Manifest> runnable;
  if (check.problems.empty())
    runnable = check.manifest;
  else if (o.skip_invalid)
    runnable = without_invalid_cases(check);
  if (!runnable) {
    err << "cardiac batch: " << o.manifest.string() << ": " << check.problems.size()
        << " problem(s); nothing was run or submitted"
        << (o.skip_invalid ? " (--skip-invalid needs a valid manifest and a valid case)" : "") << ":\n";
    for (const auto& p : check.problems) err << "  " << p << "\n";
    return std::nullopt;
  }
  out << runnable->cases.size() << " case(s) valid\n";
  report_skipped(*runnable,
                 "cardiac batch: " + o.manifest.string() + ": " + std::to_string(runnable->skipped.size()) +
                     " invalid case(s) not run (--skip-invalid):\n",
                 err);
  return runnable;
}

/// BATCH_DIR created and locked (one batch per BATCH_DIR; the cases lock their own directories),
/// then the executor.
int run_locked(const Manifest& m, const BatchOptions& o, std::ostream& out, std::ostream& err) {
  try {
    make_writable_directory(o.batch_dir);
    const DirectoryLock lock(o.batch_dir, "cardiac batch " + o.manifest.string());
    remove_stale_temp_files(o.batch_dir);
    // The manifest as used, for the record.
    write_file_atomic(o.batch_dir / "manifest.yaml",
                      "# copy of " + m.file.string() + " (" + utc_now() + ")\n" + slurp(m.file));
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

}  // namespace

int run_batch(const BatchOptions& o_in, std::ostream& out, std::ostream& err) {
  BatchOptions o = o_in;
  if (o.cardiac_exe.empty()) o.cardiac_exe = self_exe();
  if (!usable_options(o, err)) return kExitUsage;
  o.batch_dir = fs::absolute(o.batch_dir).lexically_normal();
  std::error_code ec;
  if (!fs::exists(o.manifest, ec)) {
    err << "cardiac batch: manifest " << o.manifest.string() << " does not exist\n";
    return kExitUsage;
  }
  const std::optional<Manifest> m = runnable_manifest(o, out, err);
  if (!m) return kExitUsage;
  return run_locked(*m, o, out, err);
}

}  // namespace cardio::pipeline::batch
