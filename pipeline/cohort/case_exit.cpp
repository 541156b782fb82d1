#include "cohort/case_exit.hpp"

#include <signal.h>

#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>

#include "cohort/text.hpp"
#include "common/exit_codes.hpp"

namespace fs = std::filesystem;

namespace cardio::pipeline::batch {

namespace {

/// The last line of a log that reads like an error (else its last non-empty line).
std::string last_error_line(const std::string& log) {
  std::istringstream in(log);
  std::string line, last, last_error;
  static const std::regex err(R"((error|failed|fail:|exception|invalid|cannot|terminate))", std::regex::icase);
  while (std::getline(in, line)) {
    line = trim(line);
    if (line.empty()) continue;
    last = line;
    if (std::regex_search(line, err)) last_error = line;
  }
  std::string r = last_error.empty() ? last : last_error;
  if (r.size() > 400) r = r.substr(0, 397) + "...";
  return r;
}

/// The log of the latest attempt of a case: batch.log from the last "=== cardiac batch" marker.
std::string latest_attempt(const fs::path& log) {
  const std::string s = slurp(log);
  const auto at = s.rfind("\n=== cardiac batch");
  return at == std::string::npos ? s : s.substr(at + 1);
}

}  // namespace

std::string status_of(int code) {
  if (code == 0) return "ok";
  if (code == kExitInterrupted || code == 128 + SIGTERM || code == 128 + SIGINT) return "interrupted";
  return "failed";
}

std::string exit_reason(int code, const fs::path& case_dir) {
  std::string r;
  if (code == kExitInterrupted)
    r = "interrupted (exit code 75; resumable from its checkpoint)";
  else if (code > 128 && code < 160)
    r = "killed by signal " + std::to_string(code - 128) + " (" + strsignal(code - 128) + ")";
  else
    r = "exit code " + std::to_string(code);
  const std::string line = last_error_line(latest_attempt(case_dir / "batch.log"));
  if (!line.empty()) r += ": " + line;
  return r;
}

std::optional<int> read_exit_code(const fs::path& file) {
  std::ifstream in(file);
  int code = 0;
  if (in >> code) return code;
  return std::nullopt;
}

}  // namespace cardio::pipeline::batch
