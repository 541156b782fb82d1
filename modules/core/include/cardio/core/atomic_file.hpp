#pragma once
/// @file atomic_file.hpp
/// Outputs are written to a temporary file in the target directory and renamed into place,
/// so a reader (or a killed run) never sees a partial file under the final name.
#include <filesystem>
#include <functional>
#include <string_view>

namespace cardio {

/// Write `content` to `path` atomically (temp file + fsync + rename).
void write_file_atomic(const std::filesystem::path& path, std::string_view content);

/// Let `writer` produce a file at the given temporary path, then rename it to `path`.
/// Used for writers that insist on a file name (e.g. VTK). The temp file is removed on error.
void write_via_temp(const std::filesystem::path& path,
                    const std::function<void(const std::filesystem::path& tmp)>& writer);

}  // namespace cardio
