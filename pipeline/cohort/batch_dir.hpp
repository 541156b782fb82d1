#pragma once
/// @file batch_dir.hpp
/// BATCH_DIR as both executors write it (docs/cohorts.md): a folder per case (what it holds
/// decides whether the case runs, resumes or is done), cases/<case>.sh to rerun one by hand, and
/// batch.json, the record of every case. Internal to cohort/.
#include <filesystem>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cohort/manifest.hpp"

namespace cardio::pipeline::batch {

/// Entries of BATCH_DIR that are not cases.
inline const std::set<std::string> kReserved{"cases", "slurm", "figures"};

enum class CaseState { fresh, done, resumable };

/// What is in BATCH_DIR/<case> already: a finished run (summary.json) or an interrupted one
/// (checkpoint.bin) of the same resolved config. Output of another config is cleared so that it
/// neither counts as done nor gets resumed.
CaseState case_state(const std::filesystem::path& outdir, const Case& c, std::ostream& out);

/// Arguments after the executable for a fresh run of a case (without --threads).
std::vector<std::string> run_args(const Manifest& m, const Case& c, const std::filesystem::path& outdir);

/// Arguments after the executable to continue an interrupted case from its checkpoint.
std::vector<std::string> resume_args(const std::filesystem::path& outdir);

/// BATCH_DIR/cases/<case>.sh: each case's `cardiac run` with `threads` (0: none given).
void write_case_scripts(const Manifest& m, const std::filesystem::path& dir, const std::filesystem::path& exe,
                        int threads);

struct CaseResult {
  std::string status = "pending";  // ok | failed | interrupted | pending (slurm, not finished yet)
  std::optional<int> exit_code;
  std::string reason;
  double runtime_s = 0;
  bool reused = false;   // finished before this batch: not run again
  bool resumed = false;  // continued from checkpoint.bin
};

/// BATCH_DIR/batch.json: the manifest, the executor with its `extra` fields, and
/// every case with its result (the skipped ones as "invalid").
void write_batch_json(const std::filesystem::path& dir, const Manifest& m, const std::string& executor,
                      const nlohmann::json& extra, const std::vector<CaseResult>& results);

/// Lists the cases whose status is not "ok" on `err` (after the header "case(s) not successful");
/// returns how many there are.
int report_unsuccessful(const Manifest& m, const std::vector<CaseResult>& results, std::ostream& err);

}  // namespace cardio::pipeline::batch
