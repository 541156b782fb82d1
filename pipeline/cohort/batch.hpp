#pragma once
/// @file batch.hpp
/// Cohorts (docs/cohorts.md): a manifest of cases (a base config plus per-case overrides and
/// input files), checked as a whole before anything runs; `cardiac batch` runs the cases locally
/// in parallel worker processes or writes (and submits) a Slurm job array; `cardiac collect`
/// merges the per-case summaries into cohort.csv.
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "common/exit_codes.hpp"

namespace cardio::config {
class Document;
}

namespace cardio::pipeline::batch {


/// Per-task resources of the Slurm executor.
struct Resources {
  int cpus_per_task = 1;
  long memory_mb = 2048;              ///< --mem in MiB ("2 GB" = 2048)
  std::string time_limit = "01:00:00";  ///< Slurm time format
  std::string partition;              ///< empty: the cluster's default
};

struct Case {
  std::string name;
  /// "key.path=value" overrides in order: the manifest's common `set`, the case's `set`, then its
  /// `inputs` (as absolute paths).
  std::vector<std::string> overrides;
  /// The resolved config of the case (as `cardiac run` writes it to config.resolved.yaml).
  std::string resolved;
};

/// A case that is not run (batch --skip-invalid): in batch.json with status "invalid".
struct SkippedCase {
  std::string name;
  std::string reason;  ///< its problems, "; "-separated
};

struct Manifest {
  std::filesystem::path file;         ///< absolute
  std::filesystem::path base_config;  ///< absolute
  std::string name;                   ///< job name (default: the manifest's file stem)
  Resources resources;
  std::vector<Case> cases;
  std::vector<SkippedCase> skipped;   ///< --skip-invalid: the invalid cases, left out of `cases`
};

/// The checks of `cardiac validate` applied to a loaded document (overrides already applied);
/// throws cardio::Error. The `cardiac` program passes its own.
using Validator = std::function<void(config::Document&)>;

/// Read and check a manifest: its keys, the case names (unique, safe directory names), the case
/// input files, and every case config (base + overrides) through `validate`. All problems are
/// collected (one line each, naming the case); the manifest is usable only if `problems` is empty.
struct ManifestCheck {
  Manifest manifest;
  std::vector<std::string> problems;
  /// Per case of manifest.cases: its problems, "; "-separated (empty: valid).
  std::vector<std::string> case_problems;
  /// How many of `problems` are the manifest's own (its keys, base_config), not a case's.
  std::size_t manifest_problems = 0;
};
ManifestCheck load_manifest(const std::filesystem::path& file, const Validator& validate);

/// batch --skip-invalid (batch_skip.cpp): the manifest with its valid cases only and the invalid
/// ones in `skipped`; std::nullopt if the manifest itself has a problem or no case is valid (then
/// nothing is run, as without the option).
std::optional<Manifest> without_invalid_cases(const ManifestCheck& check);

/// The skipped cases, one line each ("  NAME: invalid: REASON"), after `header`.
void report_skipped(const Manifest& m, const std::string& header, std::ostream& err);

/// Whether a case name can be used as a directory name under BATCH_DIR; if not, why.
std::string unsafe_name_reason(const std::string& name);

struct BatchOptions {
  std::filesystem::path manifest;
  std::filesystem::path batch_dir;
  std::string executor = "local";  ///< local | slurm
  int jobs = 1;                    ///< local: parallel worker processes
  int threads = 0;                 ///< local: threads per case (0: CPUs / jobs); jobs x threads <= CPUs
  bool submit = false;             ///< slurm: run sbatch
  bool wait = false;               ///< slurm: wait for the array to leave the queue
  bool skip_invalid = false;       ///< run the valid cases, report the invalid ones (then exit 2)
  double poll_seconds = 1.0;       ///< slurm --wait: squeue polling interval
  std::filesystem::path cardiac_exe;  ///< absolute path of `cardiac` (default: /proc/self/exe)
  Validator validate;
};
/// `cardiac batch`: 0 all cases succeeded (or, for slurm without --wait, the script was
/// written/submitted), 1 a case failed or was interrupted (or sbatch failed), 2 bad manifest (with
/// skip_invalid: the valid cases were run, but a case was invalid).
int run_batch(const BatchOptions& o, std::ostream& out, std::ostream& err);

struct CollectOptions {
  std::filesystem::path batch_dir;
  bool figures = true;  ///< run scripts/figures/cohort_figures.py after writing cohort.csv
};
/// `cardiac collect`: writes BATCH_DIR/cohort.csv; 0 written, 2 not a batch directory.
int collect(const CollectOptions& o, std::ostream& out, std::ostream& err);

/// Quote `s` for a POSIX shell (single quotes).
std::string shell_quote(const std::string& s);

}  // namespace cardio::pipeline::batch
