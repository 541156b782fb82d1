#pragma once
/// @file dir_lock.hpp
/// One writer per output directory: two runs into one OUTDIR would delete or overwrite each
/// other's files. The lock is flock(2) on OUTDIR/.cardiac.lock, so the kernel drops it when the
/// holder exits or is killed (even by SIGKILL): a lock is never stale. The holder writes its PID
/// and command into the file, for the message of a process that is refused, and removes the file
/// when it releases the lock (a killed holder leaves it behind, unlocked).
#include <filesystem>
#include <string>

#include "cardio/core/error.hpp"

namespace cardio {

/// Thrown when another process holds the lock; what() names the directory and the holder.
class DirectoryBusy : public Error {
 public:
  using Error::Error;
};

/// An exclusive lock on a directory, held while the object lives (movable, not copyable).
class DirectoryLock {
 public:
  /// Name of the lock file inside the locked directory.
  static constexpr const char* kFileName = ".cardiac.lock";

  /// Lock `dir` (which must exist) without waiting. `what` describes the holder (e.g.
  /// "cardiac run cfg.yaml") and is written into the lock file with the PID. Throws DirectoryBusy
  /// if another process holds it, cardio::Error if the lock file cannot be created.
  DirectoryLock(const std::filesystem::path& dir, const std::string& what);
  ~DirectoryLock();
  DirectoryLock(DirectoryLock&& other) noexcept;
  DirectoryLock& operator=(DirectoryLock&& other) noexcept;
  DirectoryLock(const DirectoryLock&) = delete;
  DirectoryLock& operator=(const DirectoryLock&) = delete;

  /// Release early (also done by the destructor and, for any exit, by the kernel).
  void release() noexcept;

 private:
  int m_fd = -1;
  std::filesystem::path m_file;
};

}  // namespace cardio
