#pragma once
/// @file run_dir.hpp
/// What every run of `cardiac` shares: its output directory (created, locked for the whole run,
/// stale results removed, the resolved config written before anything is computed), run.log, the
/// provenance stamped on summary.json, and how a failure maps to an exit code.
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "app/args.hpp"
#include "cardio/core/dir_lock.hpp"
#include "cardio/core/error.hpp"
#include "common/run_log.hpp"

namespace cardio::app {

/// Bad usage found after parsing the arguments (e.g. an output path that is a file): exit 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// What the command is building, and how large where known, for main's message when an allocation
/// fails (std::bad_alloc, std::length_error). Owned by main and passed down; the commands update
/// it as they go (it is read only after the failure, so it is not restored on the way out).
struct Stage {
  std::string what = "starting";
};

/// FNV-1a 64-bit hash of the resolved config (identifies the inputs of a result).
std::string config_hash(const std::string& resolved);

/// A config or input found invalid before anything was computed: one line on stderr, exit 2.
int invalid(const Error& e);

class RunDir {
 public:
  /// A fresh run into -o OUTDIR (default results/<name>): created, locked, the `stale` results of an
  /// earlier run (and its cavity_*.vtp) removed, config.resolved.yaml written.
  static RunDir create(const Args& a, const std::string& name, const std::string& resolved,
                       const std::vector<std::string>& stale);
  /// The directory of a stopped run (run --resume OUTDIR), locked.
  static RunDir reopen(const Args& a, const std::string& resolved);

  const std::filesystem::path& path() const { return m_path; }
  /// run.log (appended to by a resumed run) and the console; opened on first use.
  pipeline::RunLog& log();
  /// summary.json's provenance: version, config, config hash, threads, finish time.
  void stamp(nlohmann::json& summary) const;

 private:
  RunDir(const Args& a, std::filesystem::path path, std::string resolved);

  std::filesystem::path m_path;
  std::string m_config, m_resolved;
  bool m_resume = false;
  std::optional<DirectoryLock> m_lock;  ///< held until the run returns; the kernel drops it on any exit
  std::unique_ptr<pipeline::RunLog> m_log;
};

}  // namespace cardio::app
