#pragma once
/// @file case_exit.hpp
/// How a case ended, in the words of batch.json and cohort.csv: its status and, when it did not
/// succeed, the reason. Shared by the executors and collect (internal to cohort/).
#include <filesystem>
#include <optional>
#include <string>

namespace cardio::pipeline::batch {

/// "ok" (exit code 0), "interrupted" (75, or SIGTERM/SIGINT) or "failed".
std::string status_of(int code);

/// Why a case that ended with `code` did not succeed: the exit code (or the signal, or "interrupted")
/// and the line of its latest attempt in CASE_DIR/batch.log that reads like an error.
std::string exit_reason(int code, const std::filesystem::path& case_dir);

/// The exit status a Slurm task recorded in `file` (CASE_DIR/exit_code), if any.
std::optional<int> read_exit_code(const std::filesystem::path& file);

}  // namespace cardio::pipeline::batch
