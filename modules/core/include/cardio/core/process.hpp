#pragma once
/// @file process.hpp
/// Child processes: the one fork/exec of the project. A figure script or `sbatch` is run to its end
/// with its output streamed or captured; the cases of a local batch are started side by side,
/// each writing into its own log, and reaped as they end.
#include <sys/types.h>

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cardio {

/// How a child ended.
struct ProcessStatus {
  int exit_code = 0;  ///< its exit code (0 when killed)
  int signal = 0;     ///< the signal that killed it, else 0
  /// The shell's number for it: the exit code, or 128 + the signal.
  int code() const { return signal != 0 ? 128 + signal : exit_code; }
};

/// How a child is started. A program that cannot be executed writes "<error_prefix>cannot execute
/// ARGV0: REASON" to its stderr and exits 127, as a shell's command would: its caller reports it as
/// any other failure.
struct ProcessOptions {
  bool search_path = false;  ///< look argv[0] up in PATH (else it is a path)
  /// Variables set (or replaced) in the child's environment.
  std::vector<std::pair<std::string, std::string>> env;
  /// Own process group, SIGINT and SIGTERM at their defaults: a Ctrl-C on the terminal reaches the
  /// parent only, which decides when to pass a stop on.
  bool own_process_group = false;
  std::string error_prefix;  ///< names the parent in the exec-failure message, e.g. "cardiac batch: "
};

/// Starts argv without waiting, its stdout and stderr appended to `log` and its stdin /dev/null;
/// the caller reaps it (wait_process, reap_ended_child). Throws cardio::Error when `log` cannot be
/// opened or fork fails.
pid_t spawn_process(const std::vector<std::string>& argv, const std::filesystem::path& log,
                    const ProcessOptions& o = {});

/// Waits for the child `pid` to end.
ProcessStatus wait_process(pid_t pid);

/// A child of this process that has ended, reaped without blocking: std::nullopt while none has
/// (or a signal interrupted the wait). Throws cardio::Error "waitpid: REASON" (e.g. no child left).
struct EndedChild {
  pid_t pid;
  ProcessStatus status;
};
std::optional<EndedChild> reap_ended_child();

/// Receives what a child writes, a line at a time as it comes, with its '\n' (a last line may lack it).
using LineSink = std::function<void(std::string_view line)>;

/// Runs argv to its end: its stdout goes to `on_out` and its stderr to `on_err`, or, when `on_err`
/// is empty, both to `on_out` in the order written. stdin is inherited. Throws cardio::Error when
/// no process can be started (pipe, fork); returns or throws only once the child has ended.
ProcessStatus run_process(const std::vector<std::string>& argv, const LineSink& on_out, const LineSink& on_err,
                          const ProcessOptions& o = {});

/// run_process with stdout and stderr kept apart in strings.
struct ProcessOutput {
  ProcessStatus status;
  std::string out, err;
};
ProcessOutput capture_process(const std::vector<std::string>& argv, const ProcessOptions& o = {});

}  // namespace cardio
