#include "common/run_log.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <iostream>
#include <sstream>

namespace cardio::pipeline {

namespace fs = std::filesystem;

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

void make_writable_directory(const fs::path& dir) {
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    throw UnusableOutput("output " + dir.string() + " exists and is not a directory");
  fs::create_directories(dir, ec);
  if (ec) throw UnusableOutput("cannot create output directory " + dir.string() + ": " + ec.message());
  // access() also answers for root: a read-only mount is EROFS even where permissions would not bind.
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    throw UnusableOutput("output directory " + dir.string() + " is not writable: " + std::strerror(errno));
}

std::string describe(const std::exception& e) {
  const auto* fe = dynamic_cast<const fs::filesystem_error*>(&e);
  if (!fe) return e.what();
  // what() is "filesystem error: cannot remove: Read-only file system [PATH]": keep the operation.
  std::string op = fe->what();
  const std::string prefix = "filesystem error: ";
  if (op.rfind(prefix, 0) == 0) op.erase(0, prefix.size());
  op = op.substr(0, op.find(": "));
  std::ostringstream text;  // (operator+ on these strings trips GCC 12's -Wrestrict)
  text << op;
  if (!fe->path1().empty()) text << " " << fe->path1().string();
  if (!fe->path2().empty()) text << " -> " << fe->path2().string();
  text << ": " << fe->code().message();
  return text.str();
}

RunLog::RunLog(const fs::path& file, bool append)
    : m_file(file, append ? std::ios::app : std::ios::trunc), m_tee(std::cout.rdbuf(), m_file.rdbuf()), m_out(&m_tee) {}

void RunLog::error(const std::string& message) {
  m_out.flush();
  std::cerr << message << std::flush;
  m_file << message << std::flush;
}

void RunLog::note(const std::string& message) {
  m_out.flush();
  m_file << message << std::flush;
}

int RunLog::Tee::overflow(int c) {
  if (c == EOF) return !EOF;
  m_a->sputc(static_cast<char>(c));
  m_b->sputc(static_cast<char>(c));
  return c;
}

int RunLog::Tee::sync() { return m_a->pubsync() | m_b->pubsync(); }

}  // namespace cardio::pipeline
