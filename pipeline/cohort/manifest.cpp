#include "cohort/manifest.hpp"

#include <unistd.h>

#include <cctype>
#include <cmath>
#include <map>
#include <memory>
#include <ostream>
#include <regex>

#include "cardio/config/config.hpp"
#include "cardio/core/error.hpp"
#include "cohort/batch_dir.hpp"
#include "mesh/input_check.hpp"

namespace fs = std::filesystem;

namespace cardio::pipeline::batch {

namespace {

/// A YAML single-quoted scalar (for paths given to set_override).
std::string yaml_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("''") : std::string(1, c);
  return q + "'";
}

/// "2 GB", "512 MB", "1.5 GB", "2G" -> MiB (Slurm's convention: 1 GB = 1024 MB).
std::optional<long> parse_memory_mb(const std::string& text) {
  static const std::regex re(R"(^\s*([0-9]+(?:\.[0-9]+)?)\s*([KMGT])?(?:i?B)?\s*$)", std::regex::icase);
  std::smatch m;
  if (!std::regex_match(text, m, re)) return std::nullopt;
  double v = std::stod(m[1].str());
  const char u = m[2].matched ? static_cast<char>(std::toupper(m[2].str()[0])) : 'M';
  if (u == 'K') v /= 1024;
  if (u == 'G') v *= 1024;
  if (u == 'T') v *= 1024 * 1024;
  const long mb = static_cast<long>(std::ceil(v));
  if (mb < 1) return std::nullopt;
  return mb;
}

/// Slurm time formats: MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS.
bool valid_time_limit(const std::string& t) {
  static const std::regex re(
      R"(^([0-9]+|[0-9]+:[0-5]?[0-9]|[0-9]+:[0-5]?[0-9]:[0-5]?[0-9]|[0-9]+-[0-9]+(:[0-5]?[0-9]){0,2})$)");
  return std::regex_match(t, re) && t != "0" && t != "00:00:00";
}

/// A case as read from the manifest, before its config is checked.
struct RawCase {
  std::string label;  // "cases[i]" or the name
  std::string name;
  std::vector<std::string> overrides;
  std::vector<std::string> problems;
  bool ok = true;         // no problem found yet
  bool checkable = true;  // its config can be validated (inputs present, case entry readable)
};

// Problems of the manifest itself, and of one case (which --skip-invalid can leave out).
void problem(ManifestCheck& check, const std::string& p) {
  check.problems.push_back(p);
  ++check.manifest_problems;
}

void case_problem(ManifestCheck& check, RawCase& rc, const std::string& p) {
  check.problems.push_back(rc.label + ": " + p);
  rc.problems.push_back(p);
  rc.ok = false;
}

Resources read_resources(const config::Node& res) {
  Resources r;
  r.cpus_per_task = static_cast<int>(res.integer("cpus_per_task", 1, 1, 4096));
  const std::string mem = res.text("memory", "2 GB");
  if (const auto mb = parse_memory_mb(mem))
    r.memory_mb = *mb;
  else
    res.fail("memory", "expected an amount of memory like '2 GB' or '512 MB', got '" + mem + "'");
  r.time_limit = res.text("time_limit", "01:00:00");
  if (!valid_time_limit(r.time_limit))
    res.fail("time_limit",
             "expected a Slurm time limit (HH:MM:SS, D-HH:MM:SS, MM or MM:SS), got '" + r.time_limit + "'");
  r.partition = res.text("partition", "");
  if (!r.partition.empty() && !std::regex_match(r.partition, std::regex(R"(^[A-Za-z0-9_.,-]+$)")))
    res.fail("partition", "expected a partition name");
  return r;
}

/// base_config, name and resources; throws cardio::Error.
void read_header(const config::Node& root, Manifest& m) {
  const std::string base = root.text("base_config", std::nullopt);
  m.base_config = fs::absolute(m.file.parent_path() / base).lexically_normal();
  std::string stem = m.file.stem().string();
  for (char& ch : stem)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_' && ch != '-' && ch != '.') ch = '_';
  m.name = root.text("name", stem.empty() ? std::string("cohort") : stem.substr(0, 64));
  if (!std::regex_match(m.name, std::regex(R"(^[A-Za-z0-9_.+-]{1,64}$)")))
    root.fail("name", "expected a job name of letters, digits and _ . + -");
  m.resources = read_resources(root.child_or_empty("resources"));
}

/// The case's `inputs` as overrides with absolute paths; a missing or unreadable file is a problem.
void read_inputs(const config::Node& c, const fs::path& manifest_dir, ManifestCheck& check, RawCase& rc) {
  std::error_code ec;
  for (const auto& k : c.keys("inputs")) {
    const std::string p = c.child("inputs").text(k, std::nullopt);
    const fs::path abs = fs::absolute(manifest_dir / p).lexically_normal();
    if (!fs::exists(abs, ec)) {
      case_problem(check, rc, "input " + k + ": " + abs.string() + " does not exist");
      rc.checkable = false;
    } else if (!fs::is_directory(abs, ec) && ::access(abs.c_str(), R_OK) != 0) {
      case_problem(check, rc, "input " + k + ": " + abs.string() + " is not readable");
      rc.checkable = false;
    }
    rc.overrides.push_back(k + "=" + yaml_quote(abs.string()));
  }
}

RawCase read_case(const config::Node& c, std::size_t i, const fs::path& manifest_dir, ManifestCheck& check) {
  RawCase rc;
  rc.label = "cases[" + std::to_string(i) + "]";
  try {
    rc.name = c.text("name", std::nullopt);
    rc.label = "case '" + rc.name + "'";
  } catch (const Error& e) {
    case_problem(check, rc, e.what());
    rc.checkable = false;
  }
  try {
    for (const auto& k : c.keys("set")) rc.overrides.push_back(k + "=" + c.child("set").yaml_text(k));
    read_inputs(c, manifest_dir, check, rc);
  } catch (const Error& e) {
    case_problem(check, rc, e.what());
    rc.checkable = false;
  }
  return rc;
}

/// The manifest's keys and cases into `check` and `raw`, the common `set` into `common`; false when
/// the manifest itself is unreadable (case checks would then only add noise).
bool read_manifest(const fs::path& file, ManifestCheck& check, std::vector<std::string>& common,
                   std::vector<RawCase>& raw) {
  Manifest& m = check.manifest;
  try {
    const std::shared_ptr<config::Document> doc = config::Document::load_file(file);
    const config::Node root = doc->root();
    read_header(root, m);
    for (const auto& k : root.keys("set")) common.push_back(k + "=" + root.child("set").yaml_text(k));
    const auto cases = root.list("cases");
    if (cases.empty()) root.fail("cases", "expected a non-empty list of cases ({name, set, inputs})");
    for (std::size_t i = 0; i < cases.size(); ++i) raw.push_back(read_case(cases[i], i, m.file.parent_path(), check));
    try {
      doc->check_no_unknown_keys();
    } catch (const Error& e) {
      problem(check, std::string("manifest: ") + e.what());
    }
  } catch (const Error& e) {
    problem(check, std::string("manifest: ") + e.what());
    return false;
  }
  return true;
}

/// Names: safe and unique.
void check_names(std::vector<RawCase>& raw, ManifestCheck& check) {
  std::map<std::string, std::size_t> first;
  for (std::size_t i = 0; i < raw.size(); ++i) {
    if (raw[i].name.empty() && !raw[i].ok) continue;  // already reported (no name)
    if (const std::string why = unsafe_name_reason(raw[i].name); !why.empty()) case_problem(check, raw[i], why);
    const auto [it, inserted] = first.emplace(raw[i].name, i);
    if (!inserted)
      case_problem(
          check, raw[i],
          "duplicate case name (cases[" + std::to_string(it->second) + "] and cases[" + std::to_string(i) + "])");
  }
}

/// Each case's config (base + overrides) through `validate`, as `cardiac validate` would check it.
void check_case_configs(std::vector<RawCase>& raw, const std::vector<std::string>& common, const Validator& validate,
                        ManifestCheck& check) {
  Manifest& m = check.manifest;
  for (auto& rc : raw) {
    Case c;
    c.name = rc.name;
    c.overrides = common;
    c.overrides.insert(c.overrides.end(), rc.overrides.begin(), rc.overrides.end());
    if (rc.checkable) {
      try {
        auto d = config::Document::load_file(m.base_config);
        for (const auto& o : c.overrides) d->set_override(o);
        if (validate) validate(*d);
        c.resolved = d->resolved_yaml();
      } catch (const Error& e) {
        const bool input = dynamic_cast<const InvalidInput*>(&e) != nullptr;
        case_problem(check, rc, std::string(input ? "invalid input: " : "invalid config: ") + e.what());
      }
    }
    m.cases.push_back(std::move(c));
    std::string why;
    for (const auto& p : rc.problems) why += (why.empty() ? "" : "; ") + p;
    check.case_problems.push_back(why);
  }
}

}  // namespace

std::string unsafe_name_reason(const std::string& name) {
  static const std::regex safe(R"(^[A-Za-z0-9][A-Za-z0-9_-]*$)");
  if (name.empty()) return "the name is empty";
  if (name.size() > 64) return "the name is longer than 64 characters";
  if (!std::regex_match(name, safe))
    return "not a safe directory name (use letters, digits, '_' and '-', starting with a letter or digit)";
  if (kReserved.count(name)) return "'" + name + "' is reserved (a folder of BATCH_DIR that is not a case)";
  return {};
}

ManifestCheck load_manifest(const fs::path& file, const Validator& validate) {
  ManifestCheck check;
  std::error_code ec;
  check.manifest.file = fs::absolute(file, ec);
  std::vector<std::string> common;
  std::vector<RawCase> raw;
  if (!read_manifest(file, check, common, raw)) return check;
  check_names(raw, check);
  // The base config must at least load before each case is validated.
  try {
    (void)config::Document::load_file(check.manifest.base_config);
  } catch (const Error& e) {
    problem(check, std::string("base_config: ") + e.what());
    return check;
  }
  check_case_configs(raw, common, validate, check);
  return check;
}

std::optional<Manifest> without_invalid_cases(const ManifestCheck& check) {
  if (check.manifest_problems > 0 || check.case_problems.size() != check.manifest.cases.size()) return std::nullopt;
  Manifest m = check.manifest;
  m.cases.clear();
  for (std::size_t i = 0; i < check.manifest.cases.size(); ++i) {
    const Case& c = check.manifest.cases[i];
    if (check.case_problems[i].empty())
      m.cases.push_back(c);
    else
      m.skipped.push_back({c.name, check.case_problems[i]});
  }
  if (m.cases.empty()) return std::nullopt;
  return m;
}

void report_skipped(const Manifest& m, const std::string& header, std::ostream& err) {
  if (m.skipped.empty()) return;
  err << header;
  for (const SkippedCase& s : m.skipped)
    err << "  " << (s.name.empty() ? "(no name)" : s.name) << ": invalid: " << s.reason << "\n";
}

}  // namespace cardio::pipeline::batch
