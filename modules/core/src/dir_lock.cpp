#include "cardio/core/dir_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

namespace cardio {
namespace fs = std::filesystem;

namespace {

/// The holder's record ("pid N ..."), read a few times: a new holder writes it just after locking.
std::string holder_of(const fs::path& file) {
  for (int attempt = 0; attempt < 20; ++attempt) {
    std::ifstream in(file);
    std::string line;
    if (std::getline(in, line) && !line.empty()) return line;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return "a process that did not record its PID";
}

}  // namespace

DirectoryLock::DirectoryLock(const fs::path& dir, const std::string& what) : m_file(dir / kFileName) {
  // The holder removes the file when it is done: a waiter may then hold a lock on the removed
  // file, so a lock counts only if the path still names the locked file (else try again).
  for (int attempt = 0; attempt < 100 && m_fd < 0; ++attempt) {
    // CLOEXEC: children (figure scripts, batch cases) must not inherit the lock and outlive us with it.
    const int fd = ::open(m_file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) CARDIO_FAIL("cannot create lock file " << m_file.string() << ": " << std::strerror(errno));
    int rc;
    while ((rc = ::flock(fd, LOCK_EX | LOCK_NB)) != 0 && errno == EINTR) {
    }
    if (rc != 0) {
      const int e = errno;
      ::close(fd);
      if (e == EWOULDBLOCK)
        throw DirectoryBusy(dir.string() + " is in use by another cardiac process (" + holder_of(m_file) +
                            "; lock file " + m_file.string() +
                            "): wait for it to finish or stop it, or choose another output directory");
      CARDIO_FAIL("cannot lock " << m_file.string() << ": " << std::strerror(e));
    }
    struct stat held = {};
    struct stat named = {};
    if (::fstat(fd, &held) == 0 && ::stat(m_file.c_str(), &named) == 0 && held.st_ino == named.st_ino &&
        held.st_dev == named.st_dev)
      m_fd = fd;
    else
      ::close(fd);
  }
  if (m_fd < 0) CARDIO_FAIL("cannot lock " << m_file.string() << ": it keeps being replaced");
  std::ostringstream record;
  record << "pid " << ::getpid() << ": " << what << "\n";
  const std::string text = record.str();
  // Best effort: the lock itself is the flock; the record only serves the refusal message.
  if (::ftruncate(m_fd, 0) == 0) (void)!::pwrite(m_fd, text.data(), text.size(), 0);
}

DirectoryLock::~DirectoryLock() { release(); }

DirectoryLock::DirectoryLock(DirectoryLock&& other) noexcept : m_fd(other.m_fd), m_file(std::move(other.m_file)) {
  other.m_fd = -1;
}

DirectoryLock& DirectoryLock::operator=(DirectoryLock&& other) noexcept {
  if (this != &other) {
    release();
    m_fd = other.m_fd;
    m_file = std::move(other.m_file);
    other.m_fd = -1;
  }
  return *this;
}

void DirectoryLock::release() noexcept {
  if (m_fd < 0) return;
  // Removed while still locked, so that a finished run leaves no lock file; a killed run leaves
  // it, unlocked, and the next run takes it over.
  ::unlink(m_file.c_str());
  ::close(m_fd);
  m_fd = -1;
}

}  // namespace cardio
