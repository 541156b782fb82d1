#pragma once
/// @file progress.hpp
/// Progress of a long run: on a terminal a one-line bar (stage, simulated time, beat, ETA) redrawn
/// at most every 0.2 s on stderr; otherwise (Slurm, pipes) a plain log line every `log_every_s`
/// seconds of wall time. Wall-clock driven only: it never changes the computation.
#include <chrono>
#include <ostream>
#include <string>

namespace cardio::pipeline {

class Progress {
 public:
  /// `total` in the unit of update()'s `done` (e.g. ms of simulated time).
  Progress(std::string stage, double total, std::ostream* log, bool terminal, double log_every_s = 30.0);
  /// Report `done` of `total`; `detail` is appended (e.g. "beat 2/3").
  void update(double done, const std::string& detail);
  /// Clear the bar (terminal) before other output.
  void finish();

 private:
  std::string m_stage;
  double m_total;
  std::ostream* m_log;
  bool m_terminal;
  double m_log_every;
  std::chrono::steady_clock::time_point m_start, m_last;
  double m_done_at_start = -1;
  bool m_drawn = false;
};

/// True if stderr is a terminal.
bool stderr_is_terminal();

}  // namespace cardio::pipeline
