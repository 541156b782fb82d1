#pragma once
// Document's state, shared by document.cpp (loading, overrides, the unknown-key check, the resolved
// config) and node.cpp (the typed reads). Private to the config module.
#include <yaml-cpp/yaml.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "cardio/config/config.hpp"

namespace cardio::config {

struct Document::Impl {
  YAML::Node root;
  // Keys a read asked for, per parent path: the schema known at each level.
  std::map<std::string, std::set<std::string>> known;
  // Resolved values by full path, in read order.
  std::vector<std::pair<std::string, std::string>> resolved;
  // Paths set by set_override -> the assignment. Their YAML marks are positions in the
  // assignment text, not in the file, so errors there name the override instead.
  std::map<std::string, std::string> overrides;
  // "--set 'a.b=1'" if `path` or one of its parents was set by an override.
  std::optional<std::string> override_of(const std::string& path) const {
    for (std::string p = path;;) {
      const auto it = overrides.find(p);
      if (it != overrides.end()) return "--set '" + it->second + "'";
      // Parent of "a.b" is "a", of "a[3]" is "a".
      const auto cut = !p.empty() && p.back() == ']' ? p.find_last_of('[') : p.find_last_of('.');
      if (cut == std::string::npos) return std::nullopt;
      p.resize(cut);
    }
  }
  // Also an override of a key below `path`: "--set 'simulationb.eats=1'" created `simulationb`.
  std::optional<std::string> override_creating(const std::string& path) const {
    if (auto o = override_of(path)) return o;
    for (const auto& [p, assignment] : overrides)
      if (p.rfind(path + ".", 0) == 0) return "--set '" + assignment + "'";
    return std::nullopt;
  }
};

namespace detail {
/// "parent.key", or "key" at the root.
std::string join(const std::string& parent, const std::string& key);
/// Levenshtein distance of a and b.
std::size_t edit_distance(const std::string& a, const std::string& b);
/// For a missing required `key`: "; found 'k' at FILE:LINE, did you mean 'key'?" for a key of `map`
/// that looks like a misspelling of it (none of `known`), or empty.
std::string misspelling_hint(const YAML::Node& map, const std::string& key, const std::string& file,
                             const std::set<std::string>& known);
}  // namespace detail

}  // namespace cardio::config
