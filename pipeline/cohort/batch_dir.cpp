#include "cohort/batch_dir.hpp"

#include <ostream>
#include <sstream>

#include "cardio/core/atomic_file.hpp"
#include "cohort/text.hpp"
#include "common/run_log.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace cardio::pipeline::batch {

namespace {

/// The body of config.resolved.yaml without the header comment lines `cardiac run` puts first.
std::string resolved_body(const fs::path& file) {
  std::istringstream in(slurp(file));
  std::string line, body;
  bool header = true;
  while (std::getline(in, line)) {
    if (header && !line.empty() && line[0] == '#') continue;
    header = false;
    body += line + "\n";
  }
  return body;
}

}  // namespace

CaseState case_state(const fs::path& outdir, const Case& c, std::ostream& out) {
  std::error_code ec;
  const fs::path cfg = outdir / "config.resolved.yaml";
  const bool has_summary = fs::exists(outdir / "summary.json", ec);
  const bool has_checkpoint = fs::exists(outdir / "checkpoint.bin", ec);
  if (!has_summary && !has_checkpoint) return CaseState::fresh;
  if (fs::exists(cfg, ec) && resolved_body(cfg) != c.resolved) {
    out << "case " << c.name << ": output in " << outdir.string()
        << " is of another config (the manifest changed): running it again from the start\n";
    fs::remove(outdir / "summary.json", ec);
    fs::remove(outdir / "checkpoint.bin", ec);
    return CaseState::fresh;
  }
  return has_summary ? CaseState::done : CaseState::resumable;
}

std::vector<std::string> run_args(const Manifest& m, const Case& c, const fs::path& outdir) {
  std::vector<std::string> a{"run", m.base_config.string(), "-o", outdir.string()};
  for (const auto& o : c.overrides) a.insert(a.end(), {"--set", o});
  return a;
}

std::vector<std::string> resume_args(const fs::path& outdir) { return {"run", "--resume", outdir.string()}; }

void write_case_scripts(const Manifest& m, const fs::path& dir, const fs::path& exe, int threads) {
  fs::create_directories(dir / "cases");
  for (const auto& c : m.cases) {
    std::ostringstream s;
    s << "#!/bin/sh\n# Case '" << c.name << "' of " << m.file.string() << ", written by cardiac batch " << utc_now()
      << ".\n# Rerun it by hand: sh " << (dir / "cases" / (c.name + ".sh")).string()
      << " [--threads N]   (a later --threads wins)\n"
      << "# Resume an interrupted run instead: " << shell_quote(exe.string()) << " run --resume "
      << shell_quote((dir / c.name).string()) << "\n"
      << "exec " << shell_quote(exe.string()) << " " << join_quoted(run_args(m, c, dir / c.name));
    if (threads > 0) s << " --threads " << threads;
    s << " \"$@\"\n";
    const fs::path f = dir / "cases" / (c.name + ".sh");
    write_file_atomic(f, s.str());
    fs::permissions(f, fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec, fs::perm_options::add);
  }
}

void write_batch_json(const fs::path& dir, const Manifest& m, const std::string& executor, const json& extra,
                      const std::vector<CaseResult>& results) {
  json j = {{"manifest", m.file.string()},
            {"base_config", m.base_config.string()},
            {"executor", executor},
            {"written_utc", utc_now()}};
  for (auto it = extra.begin(); it != extra.end(); ++it) j[it.key()] = it.value();
  json cases = json::array();
  for (std::size_t i = 0; i < m.cases.size(); ++i) {
    const auto& r = results[i];
    cases.push_back({{"name", m.cases[i].name},
                     {"status", r.status},
                     {"exit_code", r.exit_code ? json(*r.exit_code) : json(nullptr)},
                     {"reason", r.reason},
                     {"runtime_s", r.runtime_s},
                     {"reused", r.reused},
                     {"resumed", r.resumed},
                     {"outdir", (dir / m.cases[i].name).string()},
                     {"overrides", m.cases[i].overrides}});
  }
  for (const SkippedCase& c : m.skipped)  // --skip-invalid: not run, no directory
    cases.push_back({{"name", c.name},
                     {"status", "invalid"},
                     {"exit_code", nullptr},
                     {"reason", c.reason},
                     {"runtime_s", 0},
                     {"reused", false},
                     {"resumed", false},
                     {"outdir", nullptr}});
  j["cases"] = cases;
  write_file_atomic(dir / "batch.json", j.dump(2) + "\n");
}

int report_unsuccessful(const Manifest& m, const std::vector<CaseResult>& results, std::ostream& err) {
  int bad = 0;
  for (std::size_t i = 0; i < m.cases.size(); ++i)
    if (results[i].status != "ok") {
      if (!bad) err << "cardiac batch: case(s) not successful:\n";
      ++bad;
      err << "  " << m.cases[i].name << ": " << results[i].status << ": " << results[i].reason << "\n";
    }
  return bad;
}

}  // namespace cardio::pipeline::batch
