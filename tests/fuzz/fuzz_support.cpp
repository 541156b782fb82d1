// The fuzz test's support: the key tables of docs/config.md, absolute input paths, and running
// `cardiac` without a shell (several at a time, each in its own folder).
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <iterator>
#include <regex>
#include <sstream>

#include "fuzz.hpp"

extern char** environ;

namespace cardio::fuzz {

namespace fs = std::filesystem;

namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

/// "a.b[0].c[12]" -> "a.b.c"
std::string without_indices(const std::string& path) { return std::regex_replace(path, std::regex(R"(\[\d+\])"), ""); }

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

KeyDocs::KeyDocs(const fs::path& config_md) {
  std::ifstream in(config_md);
  static const std::regex token("`([^`]+)`");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("| `", 0) != 0) continue;
    std::vector<std::string> cells;
    std::stringstream ss(line);
    for (std::string c; std::getline(ss, c, '|');) cells.push_back(trim(c));
    if (cells.size() < 6) continue;  // cells[0] is the empty text before the first '|'
    const DocumentedKey key{cells[3].rfind("required", 0) == 0, cells[4]};
    std::string first;
    for (auto it = std::sregex_iterator(cells[1].begin(), cells[1].end(), token); it != std::sregex_iterator(); ++it) {
      std::string path = (*it)[1];
      if (first.empty()) {
        first = path;
      } else if (path.find('.') == std::string::npos && path.rfind("…", 0) != 0) {
        path = first.substr(0, first.rfind('.') + 1) + path;  // "`material.b_f`, `b_t`": a sibling
      }
      m_rows.emplace(path, key);
    }
  }
}

std::vector<DocumentedKey> KeyDocs::lookup(const std::string& full_path) const {
  const std::string path = without_indices(full_path);
  std::vector<DocumentedKey> out;
  auto add = [&](const std::string& p) {
    for (auto [it, end] = m_rows.equal_range(p); it != end; ++it) out.push_back(it->second);
  };
  add(path);
  if (!out.empty()) return out;
  // "…windkessel.compliance": a suffix of at least two parts.
  for (std::size_t dot = path.find('.'); dot != std::string::npos; dot = path.find('.', dot + 1)) {
    const std::string suffix = path.substr(dot + 1);
    if (suffix.find('.') != std::string::npos) add("…" + suffix);
  }
  return out;
}

std::string with_absolute_paths(const fs::path& config) {
  YAML::Node root = YAML::LoadFile(config.string());
  const fs::path dir = config.parent_path();
  std::function<void(YAML::Node)> walk = [&](YAML::Node n) {
    if (n.IsMap()) {
      for (auto kv : n) {
        YAML::Node v = kv.second;
        if (v.IsScalar()) {
          const std::string s = v.Scalar();
          std::error_code ec;
          if (!s.empty() && s.find_first_of("./") != std::string::npos && !fs::path(s).is_absolute() &&
              fs::exists(dir / s, ec))
            v = fs::absolute(dir / s).lexically_normal().string();
        } else {
          walk(v);
        }
      }
    } else if (n.IsSequence()) {
      for (auto item : n) walk(item);
    }
  };
  walk(root);
  YAML::Emitter em;
  em << root;
  return std::string(em.c_str()) + "\n";
}

Outcome run_in(const fs::path& dir, const std::vector<std::string>& args) {
  Outcome o;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addchdir_np(&fa, dir.c_str());
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, (dir / "stdout.txt").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, (dir / "stderr.txt").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const auto t0 = std::chrono::steady_clock::now();
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return o;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  o.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  o.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  o.out = slurp(dir / "stdout.txt");
  o.err = slurp(dir / "stderr.txt");
  return o;
}

}  // namespace cardio::fuzz
