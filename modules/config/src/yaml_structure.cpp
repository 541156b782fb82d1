#include "yaml_structure.hpp"

#include <map>
#include <sstream>
#include <vector>

#include "cardio/core/error.hpp"

namespace cardio::config::detail {

std::string location(const std::string& file, const YAML::Mark& m) {
  std::ostringstream os;
  os << file;
  if (m.line >= 0) os << ":" << m.line + 1 << ":" << m.column + 1;
  return os.str();
}

namespace {

std::string join(const std::string& parent, const std::string& key) {
  return parent.empty() ? key : parent + "." + key;
}

/// 1-based line of the last `---` marker at or before 0-based `line` (the start of the document
/// whose content begins there), or line + 1 if there is none.
int marker_line(const std::string& text, int line) {
  std::istringstream in(text);
  int found = line + 1;
  std::string s;
  for (int i = 0; i <= line && std::getline(in, s); ++i)
    if (s.rfind("---", 0) == 0) found = i + 1;
  return found;
}

// Depth bound: aliases may point back into their own ancestors; real configs nest a few levels.
constexpr int kMaxDepth = 64;

void check_unique_keys(const YAML::Node& n, const std::string& path, const std::string& file, int depth) {
  if (depth > kMaxDepth) return;
  if (n.IsMap()) {
    std::map<std::string, YAML::Mark> seen;
    for (const auto& kv : n) {
      if (!kv.first.IsScalar()) continue;  // complex keys are rejected later as unknown keys
      const std::string& key = kv.first.Scalar();
      const auto [first, fresh] = seen.emplace(key, kv.first.Mark());
      if (!fresh)
        CARDIO_FAIL(location(file, kv.first.Mark())
                    << ": " << join(path, key) << ": key given twice in the same map, at line "
                    << first->second.line + 1 << " and again at line " << kv.first.Mark().line + 1
                    << "; YAML would keep the first and silently ignore the second: remove one or merge them");
      check_unique_keys(kv.second, join(path, key), file, depth + 1);
    }
  } else if (n.IsSequence()) {
    for (std::size_t i = 0; i < n.size(); ++i)
      check_unique_keys(n[i], path + "[" + std::to_string(i) + "]", file, depth + 1);
  }
}

}  // namespace

YAML::Node load_single_document(const std::string& text, const std::string& name) {
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(text);
  } catch (const YAML::Exception& e) {
    CARDIO_FAIL(location(name, e.mark) << ": YAML syntax error: " << e.msg);
  }
  // An empty document (a trailing `---`, or one of comments only) loses nothing; content does.
  for (std::size_t i = 1; i < docs.size(); ++i) {
    if (docs[i].IsNull()) continue;
    const int first = docs[0].Mark().line >= 0 ? docs[0].Mark().line + 1 : 1;
    const int second = marker_line(text, docs[i].Mark().line);
    CARDIO_FAIL(name << ":" << second << ": a second YAML document starts at line " << second
                     << " (`---`), after the one at line " << first
                     << "; a config is one document and the rest would be silently ignored: remove the `---` "
                        "line and merge the two");
  }
  if (docs.empty()) return YAML::Node(YAML::NodeType::Null);
  check_unique_keys(docs[0], "", name, 0);
  return docs[0];
}

}  // namespace cardio::config::detail
