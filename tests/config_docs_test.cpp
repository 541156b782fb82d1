// docs/config.md documents every key (issue 6): every key of the resolved config of every shipped
// config (defaults filled in, so keys a config does not set are included too) must appear in the
// key tables, as `full.path`, as a `…suffix` of at least two components, or as `leaf` on the same
// line as a documented sibling `parent.other` (rows such as "`material.b_f`, `b_t`, `b_fs`").
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "cardio/config/config.hpp"
#include "config/heart_config.hpp"
#include "config/mesh_config.hpp"
#include "config/run_config.hpp"

namespace fs = std::filesystem;
using namespace cardio;

namespace {

/// Leaf key paths of a YAML tree; list indices become [] ("a.b[].c").
void flatten(const YAML::Node& n, const std::string& path, std::set<std::string>& out) {
  if (n.IsMap()) {
    for (const auto& kv : n)
      flatten(kv.second, path.empty() ? kv.first.as<std::string>() : path + "." + kv.first.as<std::string>(), out);
  } else if (n.IsSequence() && n.size() > 0 && n[0].IsMap()) {
    for (const auto& item : n) flatten(item, path + "[]", out);
  } else {
    out.insert(path);
  }
}

std::vector<std::string> doc_lines() {
  std::ifstream in(fs::path(CARDIO_SOURCE_DIR) / "docs" / "config.md");
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

bool documented(const std::string& key, const std::vector<std::string>& lines) {
  std::string plain = std::regex_replace(key, std::regex("\\[\\]"), "");
  std::vector<std::string> parts;
  std::stringstream ss(plain);
  for (std::string p; std::getline(ss, p, '.');) parts.push_back(p);
  const std::string leaf = parts.back();
  const std::string parent = plain.size() > leaf.size() ? plain.substr(0, plain.size() - leaf.size()) : "";
  for (const std::string& l : lines) {
    if (l.rfind("|", 0) != 0) continue;  // table rows only
    if (l.find("`" + plain + "`") != std::string::npos) return true;
    for (std::size_t k = parts.size() - 2; k + 1 > 0 && k < parts.size(); --k) {  // suffixes of >= 2 parts
      std::string suffix;
      for (std::size_t i = k; i < parts.size(); ++i) suffix += (suffix.empty() ? "" : ".") + parts[i];
      if (l.find("`…" + suffix + "`") != std::string::npos || l.find("`..." + suffix + "`") != std::string::npos)
        return true;
    }
    if (!parent.empty() && l.find("`" + leaf + "`") != std::string::npos && l.find("`" + parent) != std::string::npos)
      return true;
    // A list item's key: `…rest` (rest = the path after the list), or its first component named on
    // the list's own row ("`probes` | list of {`name`, `point`, ...}").
    const auto at = key.rfind("[]");
    if (at != std::string::npos) {
      const std::string list = std::regex_replace(key.substr(0, at), std::regex("\\[\\]"), "");
      const std::string rest = key.substr(at + 3);
      const std::string first = rest.substr(0, rest.find('.'));
      if (l.find("`…" + rest + "`") != std::string::npos) return true;
      if (l.find("`" + list + "`") != std::string::npos && l.find("`" + first + "`") != std::string::npos) return true;
    }
  }
  return false;
}

}  // namespace

TEST(ConfigDocs, EveryKeyOfEveryShippedConfigIsDocumented) {
  const auto lines = doc_lines();
  ASSERT_GT(lines.size(), 100u) << "docs/config.md missing";
  std::set<std::string> missing;
  int configs = 0;
  for (const char* dir : {"configs", "configs/experiments", "configs/benchmarks", "configs/inputs"}) {
    for (const auto& e : fs::directory_iterator(fs::path(CARDIO_SOURCE_DIR) / dir)) {
      if (e.path().extension() != ".yaml") continue;
      if (YAML::LoadFile(e.path().string())["cases"]) continue;  // a cohort manifest (docs/cohorts.md)
      auto doc = config::Document::load_file(e.path());
      if (pipeline::is_heart_config(*doc))
        pipeline::parse_heart_config(*doc);
      else
        pipeline::parse_run_config(*doc);
      std::set<std::string> keys;
      flatten(YAML::Load(doc->resolved_yaml()), "", keys);
      ASSERT_GT(keys.size(), 5u) << e.path();
      for (const auto& k : keys)
        if (!documented(k, lines)) missing.insert(k + "  (" + e.path().filename().string() + ")");
      ++configs;
    }
  }
  EXPECT_GE(configs, 10);
  std::string list;
  for (const auto& m : missing) list += "  " + m + "\n";
  EXPECT_TRUE(missing.empty()) << "keys not documented in docs/config.md:\n" << list;
}

// The check itself: a key that is not in the docs is reported.
TEST(ConfigDocs, AnUndocumentedKeyIsFound) {
  const auto lines = doc_lines();
  EXPECT_TRUE(documented("material.b_t", lines));
  EXPECT_TRUE(documented("circulation.cavities[].windkessel.compliance", lines));
  EXPECT_FALSE(documented("simulation.no_such_key", lines));
  EXPECT_FALSE(documented("circulation.cavities[].windkessel.no_such_key", lines));
  EXPECT_TRUE(documented("probes[].reference_z", lines));
  EXPECT_FALSE(documented("probes[].no_such_key", lines));
}
