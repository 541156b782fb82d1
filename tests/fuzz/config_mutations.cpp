// Mutations of a config, each certainly invalid by construction (docs/validation.md, "Fuzz test"):
// a key renamed (no key is read under a misspelt name), a documented-required key removed, a value
// replaced by a map, a unit of another dimension, a value outside the documented range, a number
// that is not finite, and YAML that is broken or says something twice.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <functional>
#include <regex>
#include <sstream>

#include "fuzz.hpp"

namespace cardio::fuzz {

namespace {

/// A node of the tree: how to reach it, its dotted path, and the key a message must name.
struct Site {
  std::vector<std::string> parts;  ///< map keys, or "[i]" for list items
  std::string path;
  std::string name;                    ///< its key (a list item: its list's key)
  std::string shown;                   ///< the key as cardiac's messages name it (see collect)
  bool scalar = false, keyed = false;  ///< keyed: a map entry (it can be renamed or removed)
};

/// The sites below `here`. Messages name a key by its dotted path, a list item of maps with its
/// index ("probes[0]"), a value in a list by the list ("block.voxels: component 0"), and a key of a
/// manifest's `set` or `inputs` by itself (it is the path of an override).
void collect(const YAML::Node& n, Site here, bool manifest, std::vector<Site>& out) {
  if (!here.parts.empty()) {
    here.scalar = n.IsScalar();
    out.push_back(here);
  }
  const bool data_map = manifest && (here.name == "set" || here.name == "inputs");
  auto join = [](const std::string& a, const std::string& b) { return a.empty() ? b : a + "." + b; };
  if (n.IsMap()) {
    for (const auto& kv : n) {
      const std::string k = kv.first.Scalar();
      Site s{here.parts, join(here.path, k), k, data_map ? k : join(here.shown, k)};
      s.parts.push_back(k);
      s.keyed = true;
      collect(kv.second, s, manifest, out);
    }
  } else if (n.IsSequence()) {
    for (std::size_t i = 0; i < n.size(); ++i) {
      const std::string index = "[" + std::to_string(i) + "]";
      Site s{here.parts, here.path + index, here.name, n[i].IsScalar() ? here.shown : here.shown + index};
      s.parts.push_back(index);
      collect(n[i], s, manifest, out);
    }
  }
}

YAML::Node child(YAML::Node n, const std::string& part) {
  if (part.front() == '[') return n[std::stoul(part.substr(1))];
  return n[part];
}

/// The node at `parts` below `n`. (reset() moves the handle; `=` would overwrite the node it holds.)
YAML::Node at(const YAML::Node& n, const std::vector<std::string>& parts, std::size_t count) {
  YAML::Node here;
  here.reset(n);
  for (std::size_t i = 0; i < count; ++i) here.reset(child(here, parts[i]));
  return here;
}

/// A deep copy of `root` with the node at `site` passed to `edit` as (its parent, its part).
std::string edited(const YAML::Node& root, const Site& site,
                   const std::function<void(YAML::Node, const std::string&)>& edit) {
  YAML::Node copy = YAML::Clone(root);
  edit(at(copy, site.parts, site.parts.size() - 1), site.parts.back());
  YAML::Emitter em;
  em << copy;
  return std::string(em.c_str()) + "\n";
}

void replace(YAML::Node parent, const std::string& part, const YAML::Node& value) {
  if (part.front() == '[')
    parent[std::stoul(part.substr(1))] = value;
  else
    parent[part] = value;
}

/// "youngs_modulus" -> "younsg_modulus" (two neighbours swapped), or a letter appended.
std::string misspelt(const std::string& key, Rng& rng) {
  for (int attempt = 0; attempt < 8 && key.size() >= 4; ++attempt) {
    const std::size_t i = 1 + rng.below(key.size() - 2);
    if (key[i] == key[i + 1]) continue;
    std::string k = key;
    std::swap(k[i], k[i + 1]);
    return k;
  }
  return key + "x";
}

// A number with an optional unit, e.g. "2 mm", "1e-6", "40 mmHg*s/mL".
const std::regex kQuantity(R"(^\s*([-+]?[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([^\s0-9].*)?$)");

/// A unit of another dimension than `unit`, or one no dimension has.
std::string foreign_unit(const std::string& unit, Rng& rng) {
  static const std::vector<std::vector<std::string>> dims{{"mm", "cm", "m", "um"},
                                                          {"ms", "s", "us"},
                                                          {"kPa", "Pa", "MPa", "mmHg"},
                                                          {"mL", "uL", "mm^3", "L"},
                                                          {"deg", "rad"}};
  std::vector<std::string> others;
  for (const auto& d : dims)
    if (std::find(d.begin(), d.end(), unit) == d.end()) others.push_back(d.front());
  if (unit.empty() || others.size() == dims.size()) return "furlong";  // a bare number, or a unit not listed
  return rng.pick(others);
}

/// A value below (or, for a dimensionless key with a negative lower bound, above) the documented
/// range, with the value's own unit; empty if the range is not a plain interval or bound.
std::string outside(const std::vector<DocumentedKey>& rows, const std::string& unit) {
  std::string value;
  for (const DocumentedKey& row : rows) {
    const std::string r = std::regex_replace(row.range, std::regex("−"), "-");
    std::smatch m;
    std::string v;
    static const std::regex bound(R"(^(?:>|≥)\s*([-0-9.eE+]+))");
    static const std::regex interval(R"(^[\[(]\s*([-0-9.eE+]+),\s*([-0-9.eE+]+)[\])]\s*$)");
    if (std::regex_search(r, m, bound) || std::regex_search(r, m, interval)) {
      const double lo = std::stod(m[1]);
      if (lo >= 0)
        v = "-1" + (unit.empty() ? "" : " " + unit);
      else if (unit.empty() && m.size() > 2 && m[2].matched)
        v = std::to_string(std::stod(m[2]) + 1);
    }
    if (v.empty() || (!value.empty() && v != value)) return {};  // rows disagree: not certain
    value = v;
  }
  return value;
}

/// Lines of `text`, and `text` with line `i` replaced (`with` may hold several lines).
std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream ss(text);
  for (std::string l; std::getline(ss, l);) lines.push_back(l);
  return lines;
}
std::string joined(std::vector<std::string> lines, std::size_t i, const std::string& with) {
  lines[i] = with;
  std::string s;
  for (const auto& l : lines) s += l + "\n";
  return s;
}

const std::regex kKeyLine(R"(^( *)([A-Za-z_][A-Za-z0-9_.\[\]]*):( (.*))?$)");

/// An unquoted plain value, not a flow list or map ("key: 2 mm", not "key: 'x'" or "key: [1]").
bool plain_value(const std::ssub_match& v) {
  const std::string s = v;
  return !s.empty() && std::string("'\"{[").find(s.front()) == std::string::npos;
}

/// The lines a broken-YAML mutation can start from.
struct Lines {
  std::vector<std::string> all;
  std::vector<std::size_t> keys;      ///< "key: ..." lines (not list items)
  std::vector<std::size_t> values;    ///< of them, those with a plain value
  std::vector<std::size_t> siblings;  ///< indented ones below a sibling with a plain value
  explicit Lines(const std::string& text) : all(lines_of(text)) {
    for (std::size_t i = 0; i < all.size(); ++i) {
      std::smatch m, p;
      if (!std::regex_match(all[i], m, kKeyLine)) continue;
      keys.push_back(i);
      if (!plain_value(m[4])) continue;
      values.push_back(i);
      if (i > 0 && m[1].length() > 0 && std::regex_match(all[i - 1], p, kKeyLine) && p[1].length() == m[1].length() &&
          plain_value(p[4]))
        siblings.push_back(i);
    }
  }
};

/// Broken YAML, or YAML that says something twice: each a syntax or structure error.
std::vector<Mutant> broken_yaml(const std::string& text, const std::string& file, Rng& rng, int count) {
  const Lines l(text);
  const auto& lines = l.all;
  std::vector<Mutant> out;
  for (int k = 0; k < count; ++k) {
    Mutant m{"YAML structure", "", "", {file + ":"}};
    const std::size_t kind = rng.below(7);
    if ((kind == 3 || kind == 4) && l.siblings.empty()) continue;
    const std::size_t i = kind == 0                ? rng.pick(l.keys)
                          : kind == 3 || kind == 4 ? rng.pick(l.siblings)
                                                   : rng.pick(l.values);
    const std::string line = " on line " + std::to_string(i + 1);
    if (kind == 0) {  // a key twice in one map
      std::smatch km;
      std::regex_match(lines[i], km, kKeyLine);
      m = {m.category, "the key" + line + " given twice", joined(lines, i, lines[i] + "\n" + lines[i]), {km[2]}};
    } else if (kind == 1) {
      m.what = "a second document";
      m.text = text + "---\nname: second\n";
    } else if (kind == 2) {
      m.what = "an unclosed flow list" + line;
      const std::size_t value = lines[i].find(": ") + 2;
      const std::string opened = lines[i].substr(0, value) + "[" + lines[i].substr(value);
      m.text = joined(lines, i, opened);
    } else if (kind == 3) {
      m.what = "tab indentation" + line;
      m.text = joined(lines, i, "\t" + lines[i].substr(lines[i].find_first_not_of(' ')));
    } else if (kind == 4) {
      m.what = "one space more than its sibling" + line;
      m.text = joined(lines, i, " " + lines[i]);
    } else if (kind == 5) {
      m.what = "a second ': '" + line;
      m.text = joined(lines, i, lines[i] + ": x");
    } else {
      m.what = "a list instead of a map";
      m.text = "- " + lines.front() + "\n- x\n";
    }
    out.push_back(m);
  }
  return out;
}

/// The mutants of one config, by category.
class Mutator {
 public:
  Mutator(const YAML::Node& root, const KeyDocs& docs, Rng& rng)
      : m_root(root),
        m_docs(docs),
        m_rng(rng),
        m_manifest(root["base_config"].IsDefined()),
        m_experiment(root["experiment"].IsDefined()) {}

  void add_all() {
    std::vector<Site> sites;
    collect(m_root, {}, m_manifest, sites);
    for (const Site& s : sites) {
      if (s.keyed) key_mutants(s);
      const bool map = at(m_root, s.parts, s.parts.size()).IsMap();
      const std::string value = map ? "7" : "{a: 1}";
      add("wrong type", s, (map ? "a map replaced by " : "replaced by the map ") + value, YAML::Load(value));
      if (s.scalar) value_mutants(s);
    }
  }

  /// `per_category` of each category, drawn without repetition.
  std::vector<Mutant> draw(int per_category) {
    std::vector<Mutant> out;
    for (auto& [category, all] : m_by)
      for (int k = 0; k < per_category && !all.empty(); ++k) {
        const std::size_t i = m_rng.below(all.size());
        out.push_back(all[i]);
        all.erase(all.begin() + static_cast<std::ptrdiff_t>(i));
      }
    return out;
  }

 private:
  void add(const std::string& category, const Site& s, const std::string& what, const YAML::Node& value) {
    add(category, s, what, edited(m_root, s, [&](YAML::Node p, const std::string& k) { replace(p, k, value); }));
  }
  void add(const std::string& category, const Site& s, const std::string& what, std::string text,
           std::vector<std::string> needles = {}) {
    if (needles.empty()) needles = {s.shown};
    m_by[category].push_back({category, s.path + ": " + what, std::move(text), std::move(needles)});
  }

  /// docs/config.md's "required" (no default), the required sections of an experiment, and the
  /// manifest's own (docs/cohorts.md; the keys of its `set` are overrides, none required).
  bool required(const Site& s) const {
    if (m_manifest)
      return s.path == "base_config" || s.path == "cases" ||
             std::regex_match(s.path, std::regex(R"(cases\[\d+\]\.name)"));
    const auto rows = m_docs.lookup(s.path);
    const auto is_required = [](const DocumentedKey& d) { return d.required; };
    return (!rows.empty() && std::all_of(rows.begin(), rows.end(), is_required)) ||
           (m_experiment && (s.path == "experiment" || s.path == "block" || s.path == "material"));
  }

  void key_mutants(const Site& s) {
    const std::string typo = misspelt(s.name, m_rng);
    auto rename = [&](YAML::Node p, const std::string& k) {
      YAML::Node renamed(YAML::NodeType::Map);
      for (const auto& kv : p) renamed[kv.first.Scalar() == k ? typo : kv.first.Scalar()] = kv.second;
      p = renamed;  // (assigning to the handle replaces the map's content in the tree)
    };
    add("key renamed", s, "renamed to " + typo, edited(m_root, s, rename), {s.shown, typo});
    if (required(s))
      add("required key removed", s, "removed",
          edited(m_root, s, [](YAML::Node p, const std::string& k) { p.remove(k); }));
  }

  void value_mutants(const Site& s) {
    const std::string text = at(m_root, s.parts, s.parts.size()).Scalar();
    std::smatch q;
    if (!std::regex_match(text, q, kQuantity)) return;
    const std::string number = q[1], unit = q[2].matched ? std::string(q[2]) : std::string();
    const std::string with_unit = unit.empty() ? "" : " " + unit;
    const std::string swapped = number + " " + foreign_unit(unit, m_rng);
    add("wrong unit", s, text + " -> " + swapped, YAML::Node(swapped));
    const std::string nonfinite = std::vector<std::string>{"nan", "inf", "-inf", "1e999"}[m_rng.below(4)] + with_unit;
    add("not a finite number", s, text + " -> " + nonfinite, YAML::Node(nonfinite));
    const std::string out_of_range = s.keyed ? outside(m_docs.lookup(s.path), unit) : std::string();
    if (!out_of_range.empty())
      add("out of documented range", s, text + " -> " + out_of_range, YAML::Node(out_of_range));
  }

  const YAML::Node& m_root;
  const KeyDocs& m_docs;
  Rng& m_rng;
  bool m_manifest, m_experiment;
  std::map<std::string, std::vector<Mutant>> m_by;
};

}  // namespace

std::vector<Mutant> mutate_config(const std::string& yaml, const std::string& file_name, const KeyDocs& docs, Rng& rng,
                                  int per_category) {
  const YAML::Node root = YAML::Load(yaml);
  Mutator mutator(root, docs, rng);
  mutator.add_all();
  std::vector<Mutant> out = mutator.draw(per_category);
  const std::vector<Mutant> broken = broken_yaml(YAML::Dump(root) + "\n", file_name, rng, 2 * per_category);
  out.insert(out.end(), broken.begin(), broken.end());
  return out;
}

}  // namespace cardio::fuzz
