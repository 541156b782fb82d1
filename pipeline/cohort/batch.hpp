#pragma once
/// @file batch.hpp
/// Cohorts (docs/cohorts.md): a manifest of cases (a base config plus per-case overrides and
/// input files), checked as a whole before anything runs; `cardiac batch` runs the cases locally
/// in parallel worker processes or writes (and submits) a Slurm job array; `cardiac collect`
/// merges the per-case summaries into cohort.csv. The public API of cohort/; the rest of its
/// headers serve its own files.
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <string>

#include "common/exit_codes.hpp"

namespace cardio::config {
class Document;
}

namespace cardio::pipeline::batch {

/// The checks of `cardiac validate` applied to a loaded document (overrides already applied);
/// throws cardio::Error. The `cardiac` program passes its own.
using Validator = std::function<void(config::Document&)>;

struct BatchOptions {
  std::filesystem::path manifest;
  std::filesystem::path batch_dir;
  std::string executor = "local";     ///< local | slurm
  int jobs = 1;                       ///< local: parallel worker processes
  int threads = 0;                    ///< local: threads per case (0: CPUs / jobs); jobs x threads <= CPUs
  bool submit = false;                ///< slurm: run sbatch
  bool wait = false;                  ///< slurm: wait for the array to leave the queue
  bool skip_invalid = false;          ///< run the valid cases, report the invalid ones (then exit 2)
  double poll_seconds = 1.0;          ///< slurm --wait: squeue polling interval
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

}  // namespace cardio::pipeline::batch
