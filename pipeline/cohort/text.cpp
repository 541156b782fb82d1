#include "cohort/text.hpp"

#include <fstream>
#include <regex>
#include <sstream>

namespace cardio::pipeline::batch {

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string trim(std::string s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return {};
  const auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

std::string shell_quote(const std::string& s) {
  static const std::regex plain(R"(^[A-Za-z0-9_./=:,+@%-]+$)");
  if (!s.empty() && std::regex_match(s, plain)) return s;
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string join_quoted(const std::vector<std::string>& words) {
  std::string s;
  for (const auto& x : words) {
    if (!s.empty()) s += ' ';
    s += shell_quote(x);
  }
  return s;
}

}  // namespace cardio::pipeline::batch
