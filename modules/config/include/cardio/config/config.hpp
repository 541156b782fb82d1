#pragma once
/// @file config.hpp
/// Strict, typed reading of a YAML config. Every read names its key, default,
/// range and dimension; unknown keys are errors with a "did you mean" suggestion; every
/// error names file:line:column and the dotted key path. All values read (defaults included)
/// are recorded, so the resolved config can be written back out.
#include <Eigen/Core>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "cardio/core/units.hpp"

namespace YAML {
class Node;
}

namespace cardio::config {

/// Closed/open numeric interval for range checks.
struct Range {
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
  bool lo_open = false;
  bool hi_open = false;
  static Range positive() { return {0.0, std::numeric_limits<double>::infinity(), true, false}; }
  static Range non_negative() { return {0.0, std::numeric_limits<double>::infinity(), false, false}; }
  static Range open(double a, double b) { return {a, b, true, true}; }
  static Range closed(double a, double b) { return {a, b, false, false}; }
  bool contains(double v) const;
  std::string describe() const;
};

class Document;

/// The names of an enum's values in a config: one table for parsing (Node::choice_of) and reports.
template <class Enum>
using Choices = std::vector<std::pair<std::string, Enum>>;

/// The name of `value` in `options` ("" if it has none).
template <class Enum>
std::string_view name_in(const Choices<Enum>& options, Enum value) {
  for (const auto& [name, v] : options)
    if (v == value) return name;
  return {};
}

/// A view of one map in the config. Cheap to copy; all views share their Document.
class Node {
 public:
  /// Dotted path of this node ("" for the root), e.g. "material".
  const std::string& path() const { return m_path; }
  /// "file:line:column" of this node.
  std::string where() const;
  /// "file:line:column" of the value of `key` (of this node if the key is absent).
  std::string where_of(const std::string& key) const;
  /// Dotted path of `key` under this node.
  std::string key_path(const std::string& key) const;

  bool has(const std::string& key) const;
  /// A required sub-map.
  Node child(const std::string& key) const;
  /// A sub-map, or an empty map if absent (its keys then take their defaults).
  Node child_or_empty(const std::string& key) const;
  /// Items of a list of maps (empty if absent).
  std::vector<Node> list(const std::string& key) const;

  double quantity(const std::string& key, units::Dimension dim, std::optional<double> fallback, Range range = {}) const;
  /// A quantity that may be `auto` (the default when absent): std::nullopt for auto, which the
  /// resolved config shows as `auto` (a value the program chooses, e.g. the stable time step).
  std::optional<double> quantity_or_auto(const std::string& key, units::Dimension dim, Range range = {}) const;
  double number(const std::string& key, std::optional<double> fallback, Range range = {}) const;
  long integer(const std::string& key, std::optional<long> fallback, long lo, long hi) const;
  bool boolean(const std::string& key, std::optional<bool> fallback) const;
  std::string choice(const std::string& key, const std::vector<std::string>& options,
                     std::optional<std::string> fallback) const;
  /// A choice parsed straight into an enum: `options` pairs each accepted name with its value
  /// (config::Choices; config::name_in gives a value's name back, for reports).
  template <class Enum>
  Enum choice_of(const std::string& key, const std::vector<std::pair<std::string, Enum>>& options,
                 std::type_identity_t<std::optional<Enum>> fallback) const {
    std::vector<std::string> names;
    std::optional<std::string> fallback_name;
    for (const auto& [name, value] : options) {
      names.push_back(name);
      if (fallback && value == *fallback) fallback_name = name;
    }
    const std::string chosen = choice(key, names, fallback_name);
    for (const auto& [name, value] : options)
      if (name == chosen) return value;
    fail(key, "no value for '" + chosen + "'");  // unreachable: choice() accepts only the names
  }
  std::string text(const std::string& key, std::optional<std::string> fallback) const;
  /// Keys of the sub-map `key` in file order (none if absent), all accepted as known; for maps
  /// whose keys are data (e.g. a cohort manifest's `set: {key.path: value}`).
  std::vector<std::string> keys(const std::string& key) const;
  /// The value of `key` (a scalar or a list) as YAML flow text, e.g. `2 mm` or `[1, 2, 3]`,
  /// such that Document::set_override("path=" + text) reproduces it. Maps are rejected.
  std::string yaml_text(const std::string& key) const;
  /// A 3-vector [x, y, z] of quantities of one dimension.
  Eigen::Vector3d vec3(const std::string& key, units::Dimension dim, std::optional<Eigen::Vector3d> fallback) const;
  /// A list of integers [a, b, ...] (a single integer counts as a one-element list).
  std::vector<long> integers(const std::string& key, std::optional<std::vector<long>> fallback, long lo, long hi) const;
  /// Integer triple [i, j, k].
  Eigen::Vector3i int3(const std::string& key, std::optional<Eigen::Vector3i> fallback, long lo, long hi) const;

  /// A key of the schema that does not apply in this configuration: an error naming `why` if
  /// it is present (instead of a generic "unknown key").
  void reject_if_present(const std::string& key, const std::string& why) const;

  /// Throw cardio::Error "FILE:LINE:COL: KEY: MESSAGE" located at `key` (or this node).
  [[noreturn]] void fail(const std::string& key, const std::string& message) const;

 private:
  friend class Document;
  Node(std::shared_ptr<Document> doc, const YAML::Node& yaml, std::string path);
  /// The scalar/sequence at `key`, recording the key as known; nullptr if absent.
  std::shared_ptr<YAML::Node> lookup(const std::string& key) const;
  void record(const std::string& key, const std::string& resolved) const;
  /// fail() for a missing required key, with a hint if a misspelt key is present.
  [[noreturn]] void fail_missing(const std::string& key, const std::string& message) const;
  /// "; found 'soruce' at FILE:L:C, did you mean 'source'?" for a key of this map that no read asked
  /// for and that looks like one a read asked for; "" if there is none.
  std::string unread_misspelling() const;

  std::shared_ptr<Document> m_doc;
  std::shared_ptr<YAML::Node> m_yaml;  // forward-declared to keep yaml-cpp out of this header
  std::string m_path;
};

/// A parsed config file with the bookkeeping for unknown keys and the resolved values.
class Document : public std::enable_shared_from_this<Document> {
 public:
  /// Parse a YAML file; syntax errors name the file and line.
  static std::shared_ptr<Document> load_file(const std::filesystem::path& file);
  /// Parse YAML text (file name used in messages only).
  static std::shared_ptr<Document> load_string(const std::string& yaml, const std::string& name);

  Node root();
  const std::string& file_name() const { return m_file; }

  /// Apply "a.b.c=value" overrides before reading (values are YAML scalars or flow lists).
  /// A part may name an existing list item: "circulation.cavities[0].name=lv", "a.b[2]=5".
  void set_override(const std::string& assignment);

  /// After all reads: throw on any key in the file that no read asked for, with a
  /// "did you mean" suggestion among the keys known at that level.
  void check_no_unknown_keys() const;

  /// The resolved config (every value read, defaults filled in) as YAML text.
  std::string resolved_yaml() const;

  ~Document();

 private:
  friend class Node;
  struct Impl;
  Document();
  std::unique_ptr<Impl> m_impl;
  std::string m_file;
};

}  // namespace cardio::config
