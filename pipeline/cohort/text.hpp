#pragma once
/// @file text.hpp
/// Text helpers of the cohort files (internal to cohort/): reading a file whole, trimming, and
/// quoting for the shell scripts and logs a batch writes.
#include <filesystem>
#include <string>
#include <vector>

namespace cardio::pipeline::batch {

/// The content of a file ("" when it cannot be read).
std::string slurp(const std::filesystem::path& p);

/// `s` without leading and trailing white space.
std::string trim(std::string s);

/// Quote `s` for a POSIX shell (single quotes; as it is when it needs none).
std::string shell_quote(const std::string& s);

/// The words shell-quoted and joined by spaces: a command line to paste into a shell.
std::string join_quoted(const std::vector<std::string>& words);

}  // namespace cardio::pipeline::batch
