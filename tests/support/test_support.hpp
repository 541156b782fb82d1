// Shared scaffolding of the pipeline-level tests (tests/*.cpp, tests/cli): a per-test temporary
// directory, reading files whole, and running shell commands with their output captured.
// Header-only; a test target gets it with
//   target_include_directories(TARGET PRIVATE ${PROJECT_SOURCE_DIR}/tests/support)
// Module tests (modules/*/tests) do not use it: a module does not depend on tests/.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

/// EXPECT that `needle` occurs in `haystack`, showing the haystack if not.
#define EXPECT_HAS(haystack, needle) \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos) << "'" << (needle) << "' not in:\n" << (haystack)

// (Not `cardio::testing`: with `using namespace cardio;` that would make gtest's `testing::` ambiguous.)
namespace cardio::test_support {

/// A fresh, empty directory for the current test: TEMP/PREFIX<pid>_<test name>. Removed when it
/// goes out of scope, unless the test has failed: then it is kept (and named on stderr) for
/// inspection. Make it a member of the test fixture (constructed while the test is current).
class TempDir {
 public:
  explicit TempDir(const std::string& prefix) {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    m_path = std::filesystem::temp_directory_path() /
             (prefix + std::to_string(::getpid()) + "_" + (info ? info->name() : std::string("no_test")));
    std::filesystem::remove_all(m_path);
    std::filesystem::create_directories(m_path);
  }
  ~TempDir() {
    if (::testing::Test::HasFailure()) {
      std::cerr << "(test directory kept: " << m_path.string() << ")\n";
      return;
    }
    std::error_code ec;
    std::filesystem::remove_all(m_path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return m_path; }

 private:
  std::filesystem::path m_path;
};

/// The whole content of a file (empty if it cannot be read).
/// A CSV file (timeseries.csv) as columns by name, the cells as text.
inline std::map<std::string, std::vector<std::string>> read_columns(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::vector<std::string> names;
  std::map<std::string, std::vector<std::string>> columns;
  for (std::string line; std::getline(in, line);) {
    std::stringstream ss(line);
    std::vector<std::string> cells;
    for (std::string c; std::getline(ss, c, ',');) cells.push_back(c);
    if (names.empty()) {
      names = cells;
      continue;
    }
    for (std::size_t i = 0; i < names.size() && i < cells.size(); ++i) columns[names[i]].push_back(cells[i]);
  }
  return columns;
}

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// `s` as one word for /bin/sh (single-quoted).
inline std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

struct CommandResult {
  int code = -1;  ///< exit status, 128 + signal if killed, -1 if the shell could not be run
  std::string out, err;
};

/// Run the shell command `cmd` (std::system) with its stdout and stderr captured in the files
/// stdout.txt and stderr.txt of `capture_dir` (left there, overwritten by the next command).
inline CommandResult run_command(const std::string& cmd, const std::filesystem::path& capture_dir) {
  const std::filesystem::path out = capture_dir / "stdout.txt", err = capture_dir / "stderr.txt";
  const std::string full = "( " + cmd + "\n) >" + shell_quote(out.string()) + " 2>" + shell_quote(err.string());
  const int status = std::system(full.c_str());
  CommandResult r;
  if (status != -1 && WIFEXITED(status))
    r.code = WEXITSTATUS(status);
  else if (status != -1 && WIFSIGNALED(status))
    r.code = 128 + WTERMSIG(status);
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

}  // namespace cardio::test_support
