#pragma once
/// @file atomic_file.hpp
/// Outputs are written to a temporary file in the target directory and renamed into place,
/// so a reader (or a killed run) never sees a partial file under the final name.
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

namespace cardio {

/// Write `content` to `path` atomically (temp file + fsync + rename). Every write, the fsync
/// and the close are checked (a full disk fails there); errors name `path` first.
void write_file_atomic(const std::filesystem::path& path, std::string_view content);

/// Let `writer` produce a file at the given temporary path, then fsync it and rename it to
/// `path`. Used for writers that insist on a file name (e.g. VTK); `writer` must throw if its
/// output is incomplete. The temp file is removed on error, and `path` is left as it was.
void write_via_temp(const std::filesystem::path& path,
                    const std::function<void(const std::filesystem::path& tmp)>& writer);

/// Whether `name` is a temporary name of write_via_temp (".NAME.tmpPID") or of the image writer
/// (".tmpPID-N-NAME").
bool is_temp_file_name(const std::string& name);

/// Remove the temporary files of killed writers from `dir` (not recursive); the number removed.
/// Only safe while no other process writes there (under its DirectoryLock), and called right after
/// locking, before the holder writes. It removes all of them, not only those whose PID is dead: the
/// lock already proves that no live writer owns one, while a PID proves nothing (a killed run's PID
/// is reused, in a container often by the very next run, and a liveness check would then keep the
/// stale file for good).
int remove_stale_temp_files(const std::filesystem::path& dir);

}  // namespace cardio
