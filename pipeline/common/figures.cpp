#include "common/figures.hpp"

#include <unistd.h>

#include <cstdlib>
#include <string>

#include "cardio/core/error.hpp"

#ifndef CARDIO_SCRIPTS_DIR
#define CARDIO_SCRIPTS_DIR "scripts"
#endif

namespace fs = std::filesystem;

namespace cardio::figures {

namespace {

/// Whether kPython imports matplotlib (a python that cannot be started has none).
bool has_matplotlib() {
  try {
    return capture_process({kPython, "-c", "import matplotlib"}).status.code() == 0;
  } catch (const Error&) {
    return false;
  }
}

}  // namespace

fs::path scripts_dir() {
  if (const char* env = std::getenv("CARDIAC_SCRIPTS_DIR"); env != nullptr && *env != '\0') return env;
  return CARDIO_SCRIPTS_DIR;
}

fs::path script_path(const std::string& script) { return scripts_dir() / "figures" / script; }

ProcessStatus launch_figure_script(const std::string& script, const fs::path& dir, const LineSink& on_out,
                                   const LineSink& on_err) {
  ProcessOptions o;
  o.env = {{"PYTHONUNBUFFERED", "1"}};  // its lines as they come, not when a buffer fills
  return run_process({kPython, script_path(script).string(), dir.string()}, on_out, on_err, o);
}

int run_figure_script(const std::string& script, const fs::path& dir, std::ostream& log) {
  if (access(kPython, X_OK) != 0) {
    log << "cardiac figures: " << kPython
        << " not found: the figures need Debian's python3 with python3-matplotlib and python3-vtk9 "
           "(scripts/setup.sh installs them)\n";
    return 1;
  }
  const fs::path path = script_path(script);
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) {
    log << "cardiac figures: script " << path.string()
        << " not found (set CARDIAC_SCRIPTS_DIR to the project's scripts/ directory)\n";
    return 1;
  }
  if (!has_matplotlib()) {
    log << "cardiac figures: matplotlib is missing for " << kPython
        << ": apt-get install python3-matplotlib python3-vtk9 xvfb xauth (or run scripts/setup.sh)\n";
    return 1;
  }
  int rc = -1;
  log.flush();
  try {
    rc = launch_figure_script(script, dir, [&](std::string_view line) { log << line << std::flush; }).code();
  } catch (const Error& e) {
    log << "cardiac figures: " << e.what() << "\n";
  }
  if (rc < 0 || rc >= 128) {
    log << "cardiac figures: " << path.filename().string()
        << (rc < 0 ? " could not be run" : " was killed by signal " + std::to_string(rc - 128)) << "\n";
    return 1;
  }
  return rc;
}

}  // namespace cardio::figures
