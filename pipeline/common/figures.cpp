#include "common/figures.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#ifndef CARDIO_SCRIPTS_DIR
#define CARDIO_SCRIPTS_DIR "scripts"
#endif

namespace fs = std::filesystem;

namespace cardio::figures {

namespace {

/// Runs argv, copying its merged stdout/stderr to `log`; returns its exit status (128 + signal
/// when killed, -1 when it could not be started).
int run_capture(const std::vector<std::string>& argv, std::ostream& log) {
  int fds[2];
  if (pipe(fds) != 0) {
    log << "cardiac figures: pipe: " << std::strerror(errno) << "\n";
    return -1;
  }
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  log.flush();
  const pid_t pid = fork();
  if (pid < 0) {
    log << "cardiac figures: fork: " << std::strerror(errno) << "\n";
    close(fds[0]);
    close(fds[1]);
    return -1;
  }
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    dup2(fds[1], STDERR_FILENO);
    close(fds[0]);
    close(fds[1]);
    setenv("PYTHONUNBUFFERED", "1", 1);
    execv(cargv[0], cargv.data());
    std::fprintf(stderr, "cannot execute %s: %s\n", cargv[0], std::strerror(errno));
    _exit(127);
  }
  close(fds[1]);
  char buf[4096];
  for (;;) {
    const ssize_t n = read(fds[0], buf, sizeof buf);
    if (n > 0) {
      log.write(buf, n);
      log.flush();
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

}  // namespace

fs::path scripts_dir() {
  if (const char* env = std::getenv("CARDIAC_SCRIPTS_DIR"); env != nullptr && *env != '\0') return env;
  return CARDIO_SCRIPTS_DIR;
}

int run_figure_script(const std::string& script, const fs::path& dir, std::ostream& log) {
  if (access(kPython, X_OK) != 0) {
    log << "cardiac figures: " << kPython
        << " not found: the figures need Debian's python3 with python3-matplotlib and python3-vtk9 "
           "(scripts/setup.sh installs them)\n";
    return 1;
  }
  const fs::path path = scripts_dir() / "figures" / script;
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) {
    log << "cardiac figures: script " << path.string()
        << " not found (set CARDIAC_SCRIPTS_DIR to the project's scripts/ directory)\n";
    return 1;
  }
  std::ostringstream ignored;
  if (run_capture({kPython, "-c", "import matplotlib"}, ignored) != 0) {
    log << "cardiac figures: matplotlib is missing for " << kPython
        << ": apt-get install python3-matplotlib python3-vtk9 xvfb xauth (or run scripts/setup.sh)\n";
    return 1;
  }
  const int rc = run_capture({kPython, path.string(), dir.string()}, log);
  if (rc < 0 || rc >= 128) {
    log << "cardiac figures: " << path.filename().string()
        << (rc < 0 ? " could not be run" : " was killed by signal " + std::to_string(rc - 128)) << "\n";
    return 1;
  }
  return rc;
}

}  // namespace cardio::figures
