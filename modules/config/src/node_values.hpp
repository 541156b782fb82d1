#pragma once
/// @file node_values.hpp
/// (private) The texts of values for Node's messages and for the resolved config: what a YAML value
/// is ("got '2 mm'"), what a dimension expects, integers read strictly, numbers written exactly.
#include <yaml-cpp/yaml.h>

#include <string>
#include <string_view>

#include "cardio/core/units.hpp"

namespace cardio::config::detail {

/// The scalar text of n, or "" for a map, a list or no value.
std::string scalar_text(const YAML::Node& n);
/// What a value is, for messages: "got '2 mm'", or "found a map ({a: 1})" where a value was expected.
std::string got(const YAML::Node& n);
/// "a number" for dimensionless values, else "a length [mm]".
std::string a_quantity(units::Dimension dim);
/// "'1'" or "'1 mm'": an example value of the dimension.
std::string example(units::Dimension dim);
/// The whole of s as a base-10 integer (digits only: "1e6" and "2.0" are not integers).
bool parse_integer(const std::string& s, long& value);
/// Shortest text that reads back to exactly v (0.3, not 0.29999999999999999).
std::string fmt(double v);
/// s without leading and trailing white space.
std::string_view trim_view(std::string_view s);
/// A string as a double-quoted YAML scalar (quotes, backslashes and control characters escaped).
std::string yaml_quoted(const std::string& s);

}  // namespace cardio::config::detail
