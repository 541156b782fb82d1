#pragma once
/// @file manifest.hpp
/// A cohort's manifest (docs/cohorts.md), read and checked as a whole: its keys, the case names,
/// the case inputs and every case config. Internal to cohort/.
#include <cstddef>
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "cohort/batch.hpp"

namespace cardio::pipeline::batch {

/// Per-task resources of the Slurm executor.
struct Resources {
  int cpus_per_task = 1;
  long memory_mb = 2048;                ///< --mem in MiB ("2 GB" = 2048)
  std::string time_limit = "01:00:00";  ///< Slurm time format
  std::string partition;                ///< empty: the cluster's default
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
  std::vector<SkippedCase> skipped;  ///< --skip-invalid: the invalid cases, left out of `cases`
};

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

/// batch --skip-invalid: the manifest with its valid cases only and the invalid ones in `skipped`;
/// std::nullopt if the manifest itself has a problem or no case is valid (then nothing is run, as
/// without the option).
std::optional<Manifest> without_invalid_cases(const ManifestCheck& check);

/// The skipped cases, one line each ("  NAME: invalid: REASON"), after `header`.
void report_skipped(const Manifest& m, const std::string& header, std::ostream& err);

/// Whether a case name can be used as a directory name under BATCH_DIR; if not, why.
std::string unsafe_name_reason(const std::string& name);

}  // namespace cardio::pipeline::batch
