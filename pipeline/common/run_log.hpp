#pragma once
/// @file run_log.hpp
/// Where `cardiac` reports (issue 14: errors were printed twice, on stdout and stderr): progress and
/// results go to stdout and OUTDIR/run.log; an error goes once to stderr, and to run.log. And the
/// check of an output directory, made before anything is written into it.
#include <exception>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <streambuf>
#include <string>

#include "cardio/core/error.hpp"

namespace cardio::pipeline {

/// An output directory that cannot be used: a file in its place, or a directory that cannot be
/// created or written (a read-only mount, another user's). Bad usage (exit 2), nothing was touched.
class UnusableOutput : public Error {
 public:
  using Error::Error;
};

/// Create `dir` if needed and check that this process may write into it; throws UnusableOutput
/// naming it and the reason.
void make_writable_directory(const std::filesystem::path& dir);

/// The current time as ISO 8601 UTC, "2026-11-25T19:22:03Z" (summaries, logs, batch files).
std::string utc_now();

/// A user-facing text for an exception: what() for cardio::Error; for a filesystem error
/// "cannot remove PATH: REASON" instead of "filesystem error: cannot remove: REASON [PATH]".
std::string describe(const std::exception& e);

/// OUTDIR/run.log and the console.
class RunLog {
 public:
  /// Opens `file` (appending for a resumed run).
  RunLog(const std::filesystem::path& file, bool append);
  RunLog(const RunLog&) = delete;
  RunLog& operator=(const RunLog&) = delete;

  /// stdout and run.log.
  std::ostream& out() { return m_out; }
  /// stderr and run.log: `message` is written as given (end it with a newline).
  void error(const std::string& message);
  /// run.log only (what main then reports on stderr in its own words).
  void note(const std::string& message);
  /// run.log only, as a stream.
  std::ostream& file() { return m_file; }

 private:
  /// Writes to two stream buffers.
  class Tee : public std::streambuf {
   public:
    Tee(std::streambuf* a, std::streambuf* b) : m_a(a), m_b(b) {}
    int overflow(int c) override;
    int sync() override;

   private:
    std::streambuf *m_a, *m_b;
  };
  std::ofstream m_file;
  Tee m_tee;
  std::ostream m_out;
};

}  // namespace cardio::pipeline
