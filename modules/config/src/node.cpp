#include "cardio/config/config.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "cardio/core/error.hpp"
#include "document_impl.hpp"
#include "node_values.hpp"
#include "yaml_structure.hpp"

namespace cardio::config {

using detail::a_quantity;
using detail::edit_distance;
using detail::example;
using detail::fmt;
using detail::got;
using detail::join;
using detail::location;
using detail::misspelling_hint;
using detail::parse_integer;
using detail::scalar_text;
using detail::trim_view;
using detail::yaml_quoted;

// ----------------------------------------------------------------------------- Node
Node::Node(std::shared_ptr<Document> doc, const YAML::Node& yaml, std::string path)
    : m_doc(std::move(doc)), m_yaml(std::make_shared<YAML::Node>(yaml)), m_path(std::move(path)) {}

std::string Node::key_path(const std::string& key) const { return join(m_path, key); }

std::string Node::where() const {
  if (const auto o = m_doc->m_impl->override_of(m_path)) return *o;
  return location(m_doc->m_file, m_yaml->Mark());
}

std::string Node::where_of(const std::string& key) const {
  if (const auto o = m_doc->m_impl->override_of(key_path(key))) return *o;
  if (m_yaml->IsMap()) {
    for (const auto& kv : *m_yaml)
      if (kv.first.as<std::string>() == key) return location(m_doc->m_file, kv.second.Mark());
  }
  return where();
}

void Node::fail(const std::string& key, const std::string& message) const {
  // An error of the whole map ("give exactly one of ...") may come from a misspelt key in it.
  CARDIO_FAIL(where_of(key) << ": " << (key.empty() ? m_path : key_path(key)) << ": " << message
                            << (key.empty() ? unread_misspelling() : std::string()));
}

std::shared_ptr<YAML::Node> Node::lookup(const std::string& key) const {
  m_doc->m_impl->known[m_path].insert(key);
  if (!m_yaml->IsMap()) return nullptr;
  const YAML::Node v = (*m_yaml)[key];
  if (!v.IsDefined() || v.IsNull()) return nullptr;
  return std::make_shared<YAML::Node>(v);
}

void Node::record(const std::string& key, const std::string& resolved) const {
  m_doc->m_impl->resolved.emplace_back(key_path(key), resolved);
}

void Node::fail_missing(const std::string& key, const std::string& message) const {
  static const std::set<std::string> none;
  const auto it = m_doc->m_impl->known.find(m_path);
  const std::set<std::string>& known = it == m_doc->m_impl->known.end() ? none : it->second;
  const std::string hint = misspelling_hint(*m_yaml, key, m_doc->m_file, known);
  fail(key, message + (hint.empty() ? unread_misspelling() : hint));
}

std::string Node::unread_misspelling() const {
  const auto it = m_doc->m_impl->known.find(m_path);
  if (it == m_doc->m_impl->known.end() || !m_yaml->IsMap()) return {};
  for (const auto& kv : *m_yaml) {
    if (!kv.first.IsScalar() || it->second.count(kv.first.Scalar())) continue;
    for (const std::string& known : it->second)
      if (std::string hint = misspelling_hint(*m_yaml, known, m_doc->m_file, it->second); !hint.empty()) return hint;
  }
  return {};
}

bool Node::has(const std::string& key) const { return lookup(key) != nullptr; }

void Node::reject_if_present(const std::string& key, const std::string& why) const {
  // A misspelt deciding key (`soruce: uniform`) leaves its default: say so, not only that this does not apply.
  if (lookup(key)) fail(key, "does not apply here: " + why + unread_misspelling());
}

Node Node::child(const std::string& key) const {
  auto v = lookup(key);
  if (!v) fail_missing(key, "required section is missing");
  if (!v->IsMap()) fail(key, "expected a map of keys");
  return Node(m_doc, *v, key_path(key));
}

Node Node::child_or_empty(const std::string& key) const {
  auto v = lookup(key);
  if (!v) return Node(m_doc, YAML::Node(YAML::NodeType::Map), key_path(key));
  if (!v->IsMap()) fail(key, "expected a map of keys");
  return Node(m_doc, *v, key_path(key));
}

std::vector<Node> Node::list(const std::string& key) const {
  auto v = lookup(key);
  std::vector<Node> out;
  if (!v) return out;
  if (!v->IsSequence()) fail(key, "expected a list");
  for (std::size_t i = 0; i < v->size(); ++i) {
    const YAML::Node item = (*v)[i];
    const std::string p = key_path(key) + "[" + std::to_string(i) + "]";
    if (!item.IsMap()) CARDIO_FAIL(location(m_doc->m_file, item.Mark()) << ": " << p << ": expected a map of keys");
    out.push_back(Node(m_doc, item, p));
  }
  return out;
}

std::optional<double> Node::quantity_or_auto(const std::string& key, units::Dimension dim, Range range) const {
  const auto v = lookup(key);
  if (!v || (v->IsScalar() && trim_view(v->Scalar()) == "auto")) {
    record(key, "auto");
    return std::nullopt;
  }
  return quantity(key, dim, std::nullopt, range);
}

double Node::quantity(const std::string& key, units::Dimension dim, std::optional<double> fallback, Range range) const {
  auto v = lookup(key);
  double value = 0.0;
  if (!v) {
    if (!fallback) fail_missing(key, "required key is missing (expected " + a_quantity(dim) + ")");
    value = *fallback;
  } else {
    if (!v->IsScalar()) fail(key, "expected " + a_quantity(dim) + " such as " + example(dim) + ", " + got(*v));
    std::string why;
    const auto q = units::parse_quantity(v->Scalar(), dim, &why);
    if (!q) fail(key, "expected " + a_quantity(dim) + ", " + got(*v) + ": " + why);
    value = *q;
  }
  const bool plain = dim == units::Dimension::dimensionless;
  if (!range.contains(value)) {
    // No unit suffix for plain numbers ("value 0.5 is out of range", not "value 0.5 1").
    const std::string unit = plain ? std::string() : " " + std::string(units::internal_unit(dim));
    std::ostringstream os;
    os << "value ";
    // A value given in other units is quoted as written, then in the internal unit of the range.
    const std::string written = v ? std::string(trim_view(v->Scalar())) : std::string();
    std::ostringstream internal;
    internal << value << unit;
    if (!written.empty() && written != internal.str())
      os << "'" << written << "' (= " << internal.str() << ")";
    else
      os << internal.str();
    os << " is out of range; expected " << range.describe() << unit;
    fail(key, os.str());
  }
  record(key, plain ? fmt(value) : fmt(value) + " " + std::string(units::internal_unit(dim)));
  return value;
}

double Node::number(const std::string& key, std::optional<double> fallback, Range range) const {
  return quantity(key, units::Dimension::dimensionless, fallback, range);
}

long Node::integer(const std::string& key, std::optional<long> fallback, long lo, long hi) const {
  auto v = lookup(key);
  long value = 0;
  if (!v) {
    if (!fallback) fail_missing(key, "required key is missing (expected an integer)");
    value = *fallback;
  } else {
    if (!parse_integer(scalar_text(*v), value)) fail(key, "expected an integer, " + got(*v));
  }
  if (value < lo || value > hi)
    fail(key, "value " + std::to_string(value) + " is out of range; expected an integer in [" + std::to_string(lo) +
                  ", " + std::to_string(hi) + "]");
  record(key, std::to_string(value));
  return value;
}

bool Node::boolean(const std::string& key, std::optional<bool> fallback) const {
  auto v = lookup(key);
  bool value = false;
  if (!v) {
    if (!fallback) fail_missing(key, "required key is missing (expected true or false)");
    value = *fallback;
  } else {
    const std::string s = scalar_text(*v);
    if (s == "true" || s == "True" || s == "yes" || s == "on")
      value = true;
    else if (s == "false" || s == "False" || s == "no" || s == "off")
      value = false;
    else
      fail(key, "expected true or false, " + got(*v));
  }
  record(key, value ? "true" : "false");
  return value;
}

std::string Node::choice(const std::string& key, const std::vector<std::string>& options,
                         std::optional<std::string> fallback) const {
  auto v = lookup(key);
  std::string value;
  if (!v) {
    if (!fallback) {
      std::string all;
      for (const auto& o : options) all += (all.empty() ? "" : ", ") + o;
      fail_missing(key, "required key is missing (expected one of: " + all + ")");
    }
    value = *fallback;
  } else {
    value = scalar_text(*v);
  }
  if (v && !v->IsScalar()) {
    std::string all;
    for (const auto& o : options) all += (all.empty() ? "" : ", ") + o;
    fail(key, "expected one of: " + all + ", " + got(*v));
  }
  if (std::find(options.begin(), options.end(), value) == options.end()) {
    std::string all, best;
    std::size_t best_d = 1000;
    for (const auto& o : options) {
      all += (all.empty() ? "" : ", ") + o;
      const std::size_t d = edit_distance(value, o);
      if (d < best_d) best_d = d, best = o;
    }
    std::string msg = "'" + value + "' is not one of: " + all;
    if (best_d <= std::max<std::size_t>(2, value.size() / 3)) msg += "; did you mean '" + best + "'?";
    fail(key, msg);
  }
  record(key, value);
  return value;
}

std::vector<std::string> Node::keys(const std::string& key) const {
  auto v = lookup(key);
  std::vector<std::string> out;
  if (!v) return out;
  if (!v->IsMap()) fail(key, "expected a map of keys");
  const std::string sub = key_path(key);
  auto& known = m_doc->m_impl->known[sub];
  for (const auto& kv : *v) {
    const std::string k = kv.first.as<std::string>();
    known.insert(k);
    out.push_back(k);
  }
  return out;
}

std::string Node::yaml_text(const std::string& key) const {
  auto v = lookup(key);
  if (!v) fail_missing(key, "required key is missing");
  if (v->IsMap()) fail(key, "expected a value or a list, not a map (write nested keys as one dotted key)");
  YAML::Emitter em;
  em << YAML::Flow << *v;
  return em.c_str();
}

std::string Node::text(const std::string& key, std::optional<std::string> fallback) const {
  auto v = lookup(key);
  std::string value;
  if (!v) {
    if (!fallback) fail_missing(key, "required key is missing (expected a string)");
    value = *fallback;
  } else {
    if (!v->IsScalar()) fail(key, "expected a string, " + got(*v));
    value = v->Scalar();
  }
  record(key, yaml_quoted(value));
  return value;
}

Eigen::Vector3d Node::vec3(const std::string& key, units::Dimension dim,
                           std::optional<Eigen::Vector3d> fallback) const {
  auto v = lookup(key);
  Eigen::Vector3d out;
  if (!v) {
    if (!fallback) fail_missing(key, "required key is missing (expected [x, y, z])");
    out = *fallback;
  } else {
    const std::string what =
        dim == units::Dimension::dimensionless ? "numbers" : std::string(units::dimension_name(dim)) + " values";
    if (!v->IsSequence() || v->size() != 3) fail(key, "expected a list of 3 " + what + " [x, y, z], " + got(*v));
    for (int i = 0; i < 3; ++i) {
      std::string why = "not a value";
      const auto q = (*v)[i].IsScalar() ? units::parse_quantity((*v)[i].Scalar(), dim, &why) : std::nullopt;
      if (!q)
        fail(key,
             "component " + std::to_string(i) + ": expected " + a_quantity(dim) + ", " + got((*v)[i]) + ": " + why);
      out[i] = *q;
    }
  }
  const std::string u = dim == units::Dimension::dimensionless ? "" : " " + std::string(units::internal_unit(dim));
  if (u.empty())
    record(key, "[" + fmt(out[0]) + ", " + fmt(out[1]) + ", " + fmt(out[2]) + "]");
  else
    record(key, "[\"" + fmt(out[0]) + u + "\", \"" + fmt(out[1]) + u + "\", \"" + fmt(out[2]) + u + "\"]");
  return out;
}

Eigen::Vector3i Node::int3(const std::string& key, std::optional<Eigen::Vector3i> fallback, long lo, long hi) const {
  auto v = lookup(key);
  Eigen::Vector3i out;
  if (!v) {
    if (!fallback) fail_missing(key, "required key is missing (expected [i, j, k])");
    out = *fallback;
  } else {
    if (!v->IsSequence() || v->size() != 3) fail(key, "expected a list of 3 integers [i, j, k], " + got(*v));
    for (int i = 0; i < 3; ++i) {
      const std::string s = scalar_text((*v)[i]);
      long x = 0;
      if (!parse_integer(s, x)) fail(key, "component " + std::to_string(i) + ": expected an integer, " + got((*v)[i]));
      // Range-check before narrowing to int, so that 2^32 + 2 cannot wrap around to 2.
      if (x < lo || x > hi)
        fail(key, "component " + std::to_string(i) + " = " + s + " is out of range; expected [" + std::to_string(lo) +
                      ", " + std::to_string(hi) + "]");
      out[i] = static_cast<int>(x);
    }
  }
  for (int i = 0; i < 3; ++i)
    if (out[i] < lo || out[i] > hi)
      fail(key, "component " + std::to_string(i) + " = " + std::to_string(out[i]) + " is out of range; expected [" +
                    std::to_string(lo) + ", " + std::to_string(hi) + "]");
  record(key, "[" + std::to_string(out[0]) + ", " + std::to_string(out[1]) + ", " + std::to_string(out[2]) + "]");
  return out;
}

std::vector<long> Node::integers(const std::string& key, std::optional<std::vector<long>> fallback, long lo,
                                 long hi) const {
  auto v = lookup(key);
  std::vector<long> out;
  if (!v) {
    if (!fallback) fail_missing(key, "required key is missing (expected a list of integers [a, b, ...])");
    out = *fallback;
  } else {
    std::vector<YAML::Node> items;
    if (v->IsScalar()) {
      items.push_back(*v);
    } else if (v->IsSequence()) {
      for (std::size_t i = 0; i < v->size(); ++i) items.push_back((*v)[i]);
    } else {
      fail(key, "expected a list of integers [a, b, ...], " + got(*v));
    }
    for (std::size_t i = 0; i < items.size(); ++i) {
      long x = 0;
      if (!parse_integer(scalar_text(items[i]), x))
        fail(key, "item " + std::to_string(i) + ": expected an integer, " + got(items[i]));
      out.push_back(x);
    }
  }
  std::string resolved = "[";
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out[i] < lo || out[i] > hi)
      fail(key, "item " + std::to_string(i) + " = " + std::to_string(out[i]) + " is out of range; expected [" +
                    std::to_string(lo) + ", " + std::to_string(hi) + "]");
    resolved += (i ? ", " : "") + std::to_string(out[i]);
  }
  record(key, resolved + "]");
  return out;
}

}  // namespace cardio::config
