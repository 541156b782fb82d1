#include "cardio/core/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "cardio/core/error.hpp"

extern char** environ;

namespace cardio {

namespace {

/// A file descriptor closed when it goes out of scope.
class Fd {
 public:
  explicit Fd(int fd = -1) : m_fd(fd) {}
  Fd(Fd&& other) noexcept : m_fd(other.m_fd) { other.m_fd = -1; }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  Fd& operator=(Fd&&) = delete;
  ~Fd() { reset(); }
  int get() const { return m_fd; }
  void reset() {
    if (m_fd >= 0) ::close(m_fd);
    m_fd = -1;
  }

 private:
  int m_fd;
};

struct Pipe {
  Fd read, write;
};

/// CLOEXEC on both ends: a child started meanwhile (another thread's) must not hold the write end
/// open, or the reader would never see the end of the output. dup2 onto 1 and 2 clears it.
Pipe make_pipe() {
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) CARDIO_FAIL("pipe failed: " << std::strerror(errno));
  return {Fd(p[0]), Fd(p[1])};
}

/// argv and the environment, built before fork: the child of a process with threads may call only
/// async-signal-safe functions, so it must not allocate.
class ExecImage {
 public:
  ExecImage(const std::vector<std::string>& args, const ProcessOptions& o)
      : m_args(args), m_search_path(o.search_path) {
    CARDIO_CHECK(!args.empty(), "no program to run");
    m_error = o.error_prefix + "cannot execute " + args[0] + ": ";
    std::vector<bool> used(o.env.size(), false);
    for (char** e = environ; *e != nullptr; ++e) {
      const std::string_view var(*e);
      std::size_t k = 0;
      while (k < o.env.size() && var.substr(0, var.find('=')) != o.env[k].first) ++k;
      m_env.push_back(k < o.env.size() ? o.env[k].first + "=" + o.env[k].second : std::string(var));
      if (k < o.env.size()) used[k] = true;
    }
    for (std::size_t k = 0; k < o.env.size(); ++k)
      if (!used[k]) m_env.push_back(o.env[k].first + "=" + o.env[k].second);
    for (auto& a : m_args) m_argv.push_back(a.data());
    m_argv.push_back(nullptr);
    for (auto& e : m_env) m_envp.push_back(e.data());
    m_envp.push_back(nullptr);
  }
  ExecImage(const ExecImage&) = delete;
  ExecImage& operator=(const ExecImage&) = delete;

  /// In the child: exec, or report why not on stderr and exit 127.
  [[noreturn]] void exec() const {
    if (m_search_path)
      ::execvpe(m_argv[0], m_argv.data(), m_envp.data());
    else
      ::execve(m_argv[0], m_argv.data(), m_envp.data());
    const char* why = std::strerror(errno);
    (void)!::write(STDERR_FILENO, m_error.data(), m_error.size());
    (void)!::write(STDERR_FILENO, why, std::strlen(why));
    (void)!::write(STDERR_FILENO, "\n", 1);
    ::_exit(127);
  }

 private:
  std::vector<std::string> m_args, m_env;
  std::vector<char*> m_argv, m_envp;
  std::string m_error;
  bool m_search_path;
};

/// The descriptors the child gets as its stdin, stdout and stderr (-1: inherited).
struct ChildStdio {
  int in = -1, out = -1, err = -1;
};

pid_t start(const std::vector<std::string>& argv, const ProcessOptions& o, ChildStdio io) {
  const ExecImage image(argv, o);
  const pid_t pid = ::fork();
  if (pid < 0) CARDIO_FAIL("fork failed: " << std::strerror(errno));
  if (pid > 0) {
    // Also from here, so that the group exists when we return (whichever side runs first).
    if (o.own_process_group) ::setpgid(pid, pid);
    return pid;
  }
  if (o.own_process_group) {
    ::setpgid(0, 0);
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
  }
  if (io.in >= 0) ::dup2(io.in, STDIN_FILENO);
  if (io.out >= 0) ::dup2(io.out, STDOUT_FILENO);
  if (io.err >= 0) ::dup2(io.err, STDERR_FILENO);
  image.exec();
}

ProcessStatus decode(int status) {
  if (WIFSIGNALED(status)) return {0, WTERMSIG(status)};
  return {WEXITSTATUS(status), 0};
}

/// One pipe from the child, cut into lines for its sink.
struct LineReader {
  LineReader(int fd, const LineSink& sink) : fd(fd), sink(&sink) {}
  int fd;
  const LineSink* sink;
  std::string pending;
  bool open = true;

  void take(const char* data, std::size_t n) {
    pending.append(data, n);
    std::size_t begin = 0;
    for (std::size_t nl; (nl = pending.find('\n', begin)) != std::string::npos; begin = nl + 1)
      (*sink)(std::string_view(pending).substr(begin, nl + 1 - begin));
    pending.erase(0, begin);
  }
  void finish() {
    if (!pending.empty()) (*sink)(pending);
    pending.clear();
    open = false;
  }
};

/// Reads the pipes as they fill until the child has closed them all (reading one to its end first
/// could block the child on the other, full one).
void read_lines(std::vector<LineReader>& readers) {
  char buf[4096];
  for (;;) {
    std::vector<pollfd> fds;
    std::vector<LineReader*> of;
    for (auto& r : readers)
      if (r.open) {
        fds.push_back({r.fd, POLLIN, 0});
        of.push_back(&r);
      }
    if (fds.empty()) return;
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      CARDIO_FAIL("poll: " << std::strerror(errno));
    }
    for (std::size_t k = 0; k < fds.size(); ++k) {
      if (fds[k].revents == 0) continue;
      const ssize_t n = ::read(fds[k].fd, buf, sizeof buf);
      if (n > 0)
        of[k]->take(buf, static_cast<std::size_t>(n));
      else if (n == 0 || errno != EINTR)
        of[k]->finish();
    }
  }
}

}  // namespace

pid_t spawn_process(const std::vector<std::string>& argv, const std::filesystem::path& log, const ProcessOptions& o) {
  const Fd out(::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644));
  if (out.get() < 0) CARDIO_FAIL("cannot open " << log.string() << ": " << std::strerror(errno));
  const Fd in(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  return start(argv, o, {in.get(), out.get(), out.get()});
}

ProcessStatus wait_process(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) CARDIO_FAIL("waitpid: " << std::strerror(errno));
  return decode(status);
}

std::optional<EndedChild> reap_ended_child() {
  int status = 0;
  const pid_t pid = ::waitpid(-1, &status, WNOHANG);
  if (pid == 0 || (pid < 0 && errno == EINTR)) return std::nullopt;
  if (pid < 0) CARDIO_FAIL("waitpid: " << std::strerror(errno));
  return EndedChild{pid, decode(status)};
}

ProcessStatus run_process(const std::vector<std::string>& argv, const LineSink& on_out, const LineSink& on_err,
                          const ProcessOptions& o) {
  Pipe out = make_pipe();
  std::optional<Pipe> err;
  if (on_err) err.emplace(make_pipe());
  const pid_t pid = start(argv, o, {-1, out.write.get(), err ? err->write.get() : out.write.get()});
  // Only the child may hold the write ends now: its exit then ends the output.
  out.write.reset();
  std::vector<LineReader> readers{{out.read.get(), on_out}};
  if (err) {
    err->write.reset();
    readers.emplace_back(err->read.get(), on_err);
  }
  try {
    read_lines(readers);
  } catch (...) {  // a sink threw: no zombie left behind (closed pipes end a child that writes)
    out.read.reset();
    if (err) err->read.reset();
    wait_process(pid);
    throw;
  }
  return wait_process(pid);
}

ProcessOutput capture_process(const std::vector<std::string>& argv, const ProcessOptions& o) {
  ProcessOutput r;
  r.status = run_process(
      argv, [&](std::string_view line) { r.out += line; }, [&](std::string_view line) { r.err += line; }, o);
  return r;
}

}  // namespace cardio
