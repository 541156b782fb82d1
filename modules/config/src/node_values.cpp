#include "node_values.hpp"

#include <cctype>
#include <charconv>

namespace cardio::config::detail {

std::string scalar_text(const YAML::Node& n) { return n.IsScalar() ? n.Scalar() : std::string(); }

std::string got(const YAML::Node& n) {
  if (n.IsScalar()) return "got '" + n.Scalar() + "'";
  YAML::Emitter em;
  em << YAML::Flow << n;
  std::string text = em.c_str();
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  return std::string("found ") + (n.IsMap() ? "a map" : n.IsSequence() ? "a list" : "no value") + " (" + text + ")";
}

std::string a_quantity(units::Dimension dim) {
  if (dim == units::Dimension::dimensionless) return "a number";
  return "a " + std::string(units::dimension_name(dim)) + " [" + std::string(units::internal_unit(dim)) + "]";
}

std::string example(units::Dimension dim) {
  if (dim == units::Dimension::dimensionless) return "'1'";
  return "'1 " + std::string(units::internal_unit(dim)) + "'";
}

bool parse_integer(const std::string& s, long& value) {
  std::size_t used = 0;
  try {
    value = std::stol(s, &used);
  } catch (...) {
    return false;
  }
  return !s.empty() && used == s.size();
}

std::string fmt(double v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}
std::string_view trim_view(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string yaml_quoted(const std::string& s) {
  YAML::Emitter em;
  em << YAML::DoubleQuoted << s;
  return em.c_str();
}

}  // namespace cardio::config::detail
