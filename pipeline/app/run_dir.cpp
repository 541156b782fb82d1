#include "app/run_dir.hpp"

#include <iostream>
#include <sstream>

#include "cardio/core/atomic_file.hpp"
#include "cardio/core/binary.hpp"
#include "cardio/core/parallel.hpp"
#include "common/exit_codes.hpp"
#include "mesh/input_check.hpp"

namespace cardio::app {
namespace {

namespace fs = std::filesystem;

/// Lock OUTDIR for the whole run: a second run, resume or mesh into it is refused (DirectoryBusy,
/// exit 2) before it deletes anything. Under the lock, the temp files of a killed run can go.
DirectoryLock lock_outdir(const fs::path& out, const Args& a) {
  pipeline::make_writable_directory(out);  // a read-only OUTDIR is named as such, before the lock file fails
  DirectoryLock lock(out, "cardiac " + a.command + (a.resume ? " --resume " + a.outdir : " " + a.config));
  for (const fs::path& d : {out, out / "frames", out / "cache"}) remove_stale_temp_files(d);
  return lock;
}

}  // namespace

std::string config_hash(const std::string& resolved) { return hex16(fnv1a64(resolved)); }

int invalid(const Error& e) {
  const bool input = dynamic_cast<const pipeline::InvalidInput*>(&e) != nullptr;
  std::cerr << "cardiac: " << (input ? "invalid input: " : "invalid config: ") << e.what() << "\n";
  return pipeline::kExitUsage;
}

RunDir::RunDir(const Args& a, fs::path path, std::string resolved)
    : m_path(std::move(path)), m_config(a.config), m_resolved(std::move(resolved)), m_resume(a.resume) {
  m_lock.emplace(lock_outdir(m_path, a));
}

RunDir RunDir::create(const Args& a, const std::string& name, const std::string& resolved,
                      const std::vector<std::string>& stale) {
  RunDir dir(a, a.outdir.empty() ? fs::path("results") / name : fs::path(a.outdir), resolved);
  const fs::path& out = dir.m_path;
  // A re-run into an old directory must not leave old results that look finished.
  for (const auto& f : stale) fs::remove(out / f);
  for (const auto& entry : fs::directory_iterator(out))
    if (entry.path().filename().string().rfind("cavity_", 0) == 0 && entry.path().extension() == ".vtp")
      fs::remove(entry.path());
  std::ostringstream header;
  header << "# cardiac " << CARDIO_VERSION << ", resolved config of " << a.config << "\n# written "
         << pipeline::utc_now() << ", threads " << thread_count() << "\n";
  write_file_atomic(out / "config.resolved.yaml", header.str() + resolved);
  return dir;
}

RunDir RunDir::reopen(const Args& a, const std::string& resolved) { return RunDir(a, a.outdir, resolved); }

pipeline::RunLog& RunDir::log() {
  if (!m_log) m_log = std::make_unique<pipeline::RunLog>(m_path / "run.log", m_resume);
  return *m_log;
}

void RunDir::stamp(nlohmann::json& j) const {
  j["version"] = CARDIO_VERSION;
  j["config"] = m_config;
  j["config_hash_fnv1a"] = config_hash(m_resolved);
  j["threads"] = thread_count();
  j["finished_utc"] = pipeline::utc_now();
}

}  // namespace cardio::app
