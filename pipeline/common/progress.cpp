#include "common/progress.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <sstream>

namespace cardio::pipeline {

bool stderr_is_terminal() { return ::isatty(STDERR_FILENO) == 1; }

Progress::Progress(std::string stage, double total, std::ostream* log, bool terminal, double log_every_s)
    : m_stage(std::move(stage)),
      m_total(total),
      m_log(log),
      m_terminal(terminal),
      m_log_every(log_every_s),
      m_start(std::chrono::steady_clock::now()),
      m_last(m_start) {}

void Progress::update(double done, const std::string& detail) {
  const auto now = std::chrono::steady_clock::now();
  if (m_done_at_start < 0) m_done_at_start = done;  // a resumed run starts part-way
  const double since_last = std::chrono::duration<double>(now - m_last).count();
  if (since_last < (m_terminal ? 0.2 : m_log_every)) return;
  m_last = now;
  const double elapsed = std::chrono::duration<double>(now - m_start).count();
  const double fraction = m_total > 0 ? std::min(1.0, done / m_total) : 1.0;
  const double rate = (done - m_done_at_start) / std::max(elapsed, 1e-9);
  std::ostringstream eta;
  if (rate > 0) {
    const long s = std::lround((m_total - done) / rate);
    eta << "ETA " << s / 60 << "m" << std::setw(2) << std::setfill('0') << s % 60 << "s";
  } else {
    eta << "ETA --";
  }
  std::ostringstream line;
  line << m_stage << " " << std::fixed << std::setprecision(0) << done << "/" << m_total << " ms, " << detail << ", "
       << eta.str();
  if (m_terminal) {
    constexpr int width = 30;
    const int filled = static_cast<int>(std::lround(fraction * width));
    std::cerr << "\r[" << std::string(std::size_t(filled), '#') << std::string(std::size_t(width - filled), '.') << "] "
              << std::setw(3) << std::lround(100 * fraction) << "% " << line.str() << "   " << std::flush;
    m_drawn = true;
  } else if (m_log) {
    *m_log << "progress: " << std::lround(100 * fraction) << " %, " << line.str() << std::endl;
  }
}

void Progress::finish() {
  if (m_terminal && m_drawn) std::cerr << "\r" << std::string(100, ' ') << "\r" << std::flush;
  m_drawn = false;
}

}  // namespace cardio::pipeline
