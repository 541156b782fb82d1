#pragma once
/// @file json.hpp
/// JSON outputs (summary.json, bench results) through nlohmann_json, written atomically.
#include <filesystem>
#include <nlohmann/json.hpp>

namespace cardio::io {

/// Pretty-print `j` to `file` atomically.
void write_json(const std::filesystem::path& file, const nlohmann::json& j);

}  // namespace cardio::io
