#pragma once
/// @file yaml_structure.hpp
/// (private) Loading a config's YAML text as exactly one document with unique keys. yaml-cpp
/// silently keeps the first of two equal keys in a map and YAML::Load reads only the first
/// document, so a second `material:` section, a repeated `C:` or everything after a `---` would
/// be ignored without a word; these are errors naming the file and both lines instead.
#include <yaml-cpp/yaml.h>

#include <string>

namespace cardio::config::detail {

/// "file:line:column" of a YAML mark (just "file" for a mark without a position).
std::string location(const std::string& file, const YAML::Mark& m);

/// Parse `text` (named `name` in messages). Throws cardio::Error on a syntax error, on a second
/// document with content, and on a key given twice in one map (at any depth, in lists too).
YAML::Node load_single_document(const std::string& text, const std::string& name);

}  // namespace cardio::config::detail
