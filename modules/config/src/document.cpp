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
#include "yaml_structure.hpp"

namespace cardio::config {

// ----------------------------------------------------------------------------- Range
bool Range::contains(double v) const {
  if (std::isnan(v)) return false;
  const bool lo_ok = lo_open ? v > lo : v >= lo;
  const bool hi_ok = hi_open ? v < hi : v <= hi;
  return lo_ok && hi_ok;
}

std::string Range::describe() const {
  std::ostringstream os;
  auto num = [&](double x) {
    if (std::isinf(x)) return std::string(x > 0 ? "inf" : "-inf");
    std::ostringstream n;
    n << x;
    return n.str();
  };
  // An infinite end is never attained: print it open ("(0, inf)"), whatever the flags.
  os << (lo_open || std::isinf(lo) ? "(" : "[") << num(lo) << ", " << num(hi)
     << (hi_open || std::isinf(hi) ? ")" : "]");
  return os.str();
}

// ----------------------------------------------------------------------------- Document
Document::Document() : m_impl(std::make_unique<Impl>()) {}
Document::~Document() = default;

namespace detail {

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1])});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string join(const std::string& parent, const std::string& key) {
  return parent.empty() ? key : parent + "." + key;
}

// For a missing required `key`: a key of `map` that looks like a misspelling of it, so that
// "youngs_modulos: 10 kPa" is not just reported as a missing youngs_modulus (the unknown-key
// check, which would suggest the fix, only runs after all reads).
// Keys already read at this level (`known`) are not candidates.
std::string misspelling_hint(const YAML::Node& map, const std::string& key, const std::string& file,
                             const std::set<std::string>& known) {
  if (!map.IsMap()) return {};
  std::string best;
  std::size_t best_d = 1000;
  YAML::Mark mark;
  for (const auto& kv : map) {
    if (!kv.first.IsScalar()) continue;
    const std::string k = kv.first.Scalar();
    if (known.count(k)) continue;
    const std::size_t d = edit_distance(key, k);
    if (d > 0 && d < best_d) best_d = d, best = k, mark = kv.first.Mark();
  }
  if (best.empty() || best_d > std::max<std::size_t>(2, key.size() / 3)) return {};
  return "; found '" + best + "' at " + location(file, mark) + ", did you mean '" + key + "'?";
}
}  // namespace detail

using detail::edit_distance;
using detail::join;
using detail::location;

std::shared_ptr<Document> Document::load_file(const std::filesystem::path& file) {
  // A directory opens as an empty stream, which would read as an empty config ("experiment:
  // required section is missing"); say what the path is instead.
  std::error_code ec;
  if (std::filesystem::is_directory(file, ec))
    CARDIO_FAIL(file.string() << ": is a directory; expected a YAML config file");
  if (!std::filesystem::exists(file, ec)) CARDIO_FAIL(file.string() << ": cannot open config file: it does not exist");
  std::ifstream in(file);
  if (!in) CARDIO_FAIL(file.string() << ": cannot open config file: " << std::strerror(errno));
  std::stringstream ss;
  ss << in.rdbuf();
  return load_string(ss.str(), file.string());
}

std::shared_ptr<Document> Document::load_string(const std::string& yaml, const std::string& name) {
  std::shared_ptr<Document> doc(new Document());
  doc->m_file = name;
  doc->m_impl->root = detail::load_single_document(yaml, name);
  if (doc->m_impl->root.IsNull()) doc->m_impl->root = YAML::Node(YAML::NodeType::Map);
  if (!doc->m_impl->root.IsMap())
    CARDIO_FAIL(location(name, doc->m_impl->root.Mark()) << ": the config must be a map of keys");
  return doc;
}

Node Document::root() { return Node(shared_from_this(), m_impl->root, ""); }

void Document::set_override(const std::string& assignment) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) CARDIO_FAIL("--set '" << assignment << "': expected KEY.PATH=VALUE");
  const std::string path = assignment.substr(0, eq);
  YAML::Node value;
  try {
    value = YAML::Load(assignment.substr(eq + 1));
  } catch (const YAML::Exception& e) {
    CARDIO_FAIL("--set '" << assignment << "': cannot parse value: " << e.msg);
  }
  std::vector<std::string> parts;
  std::stringstream ss(path);
  for (std::string p; std::getline(ss, p, '.');) parts.push_back(p);
  // A part may address an existing list item: "cavities[0]" (the item must exist; lists are
  // not extended by overrides).
  auto split_index = [&](const std::string& part, std::string& key) -> std::optional<std::size_t> {
    key = part;
    const auto lb = part.find('[');
    if (lb == std::string::npos) return std::nullopt;
    const std::string digits = part.substr(lb + 1, part.size() - lb - 2);
    if (lb == 0 || part.back() != ']' || digits.empty() ||
        !std::all_of(digits.begin(), digits.end(), [](unsigned char c) { return std::isdigit(c); }) ||
        digits.size() > 6)
      CARDIO_FAIL("--set '" << assignment << "': '" << part << "': expected KEY or KEY[INDEX]");
    key = part.substr(0, lb);
    return std::stoul(digits);
  };
  // getline drops a trailing empty part ("material." -> {"material"}): check the dots themselves.
  if (path.front() == '.' || path.back() == '.' || path.find("..") != std::string::npos)
    CARDIO_FAIL("--set '" << assignment << "': empty key in '" << path << "' (expected KEY.PATH=VALUE)");
  // yaml-cpp nodes are handles: walk with copies that alias the tree, then assign the leaf.
  std::vector<YAML::Node> chain{m_impl->root};
  auto item = [&](const std::string& key, std::size_t idx) {
    YAML::Node seq = chain.back()[key];
    if (!seq.IsSequence()) CARDIO_FAIL("--set '" << assignment << "': '" << key << "' is not a list");
    if (idx >= seq.size())
      CARDIO_FAIL("--set '" << assignment << "': '" << key << "' has " << seq.size() << " item(s), no item " << idx);
    return seq;
  };
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    std::string key;
    const auto idx = split_index(parts[i], key);
    YAML::Node next;
    if (idx) {
      next = item(key, *idx)[*idx];
    } else {
      next = chain.back()[key];
      if (!next.IsDefined() || next.IsNull()) {
        chain.back()[key] = YAML::Node(YAML::NodeType::Map);
        next = chain.back()[key];
      }
    }
    if (!next.IsMap()) CARDIO_FAIL("--set '" << assignment << "': '" << parts[i] << "' is not a map");
    chain.push_back(next);
  }
  std::string leaf;
  if (const auto idx = split_index(parts.back(), leaf)) {
    YAML::Node seq = item(leaf, *idx);
    seq[*idx] = value;
  } else {
    chain.back()[leaf] = value;
  }
  m_impl->overrides[path] = assignment;
}

void Document::check_no_unknown_keys() const {
  // Walk the file's maps; any key no read asked for is an error.
  std::function<void(const YAML::Node&, const std::string&)> walk = [&](const YAML::Node& n, const std::string& path) {
    if (n.IsMap()) {
      for (const auto& kv : n) {
        const std::string key = kv.first.as<std::string>();
        const auto it = m_impl->known.find(path);
        const bool known = it != m_impl->known.end() && it->second.count(key);
        if (!known) {
          std::ostringstream os;
          // A key without a position in the file was made by an override (of it or of a key below it).
          const auto from_override = kv.first.Mark().line < 0 ? m_impl->override_creating(join(path, key))
                                                              : m_impl->override_of(join(path, key));
          os << (from_override ? *from_override : location(m_file, kv.first.Mark())) << ": unknown key '"
             << join(path, key) << "'";
          if (it != m_impl->known.end() && !it->second.empty()) {
            std::string best;
            std::size_t best_d = 1000;
            for (const auto& k : it->second) {
              const std::size_t d = edit_distance(key, k);
              if (d < best_d) best_d = d, best = k;
            }
            if (best_d <= std::max<std::size_t>(2, key.size() / 3))
              os << "; did you mean '" << best << "'?";
            else {
              os << "; known keys here:";
              for (const auto& k : it->second) os << " " << k;
            }
          } else if (it == m_impl->known.end()) {
            os << "; '" << (path.empty() ? std::string("(top level)") : path) << "' takes no further keys here";
          }
          CARDIO_FAIL(os.str());
        }
        walk(kv.second, join(path, key));
      }
    } else if (n.IsSequence()) {
      for (std::size_t i = 0; i < n.size(); ++i) walk(n[i], path + "[" + std::to_string(i) + "]");
    }
  };
  walk(m_impl->root, "");
}

std::string Document::resolved_yaml() const {
  // Rebuild a nested map from the dotted paths of the values read.
  YAML::Node out(YAML::NodeType::Map);
  for (const auto& [path, value] : m_impl->resolved) {
    std::vector<std::string> parts;
    std::string cur;
    for (char c : path) {
      if (c == '.') {
        parts.push_back(cur);
        cur.clear();
      } else {
        cur += c;
      }
    }
    parts.push_back(cur);
    std::vector<YAML::Node> chain{out};
    for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
      const std::string& p = parts[i];
      const auto lb = p.find('[');
      if (lb != std::string::npos) {  // list item "key[i]"
        const std::string key = p.substr(0, lb);
        const std::size_t idx = std::stoul(p.substr(lb + 1));
        YAML::Node seq = chain.back()[key];
        if (!seq.IsSequence()) {
          chain.back()[key] = YAML::Node(YAML::NodeType::Sequence);
          seq = chain.back()[key];
        }
        while (seq.size() <= idx) seq.push_back(YAML::Node(YAML::NodeType::Map));
        chain.push_back(seq[idx]);
      } else {
        YAML::Node next = chain.back()[p];
        if (!next.IsMap()) {
          chain.back()[p] = YAML::Node(YAML::NodeType::Map);
          next = chain.back()[p];
        }
        chain.push_back(next);
      }
    }
    chain.back()[parts.back()] = YAML::Load(value);
  }
  YAML::Emitter em;
  em << out;
  return std::string(em.c_str()) + "\n";
}

}  // namespace cardio::config
