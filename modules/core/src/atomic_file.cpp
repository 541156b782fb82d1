#include "cardio/core/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <system_error>

#include "cardio/core/error.hpp"

namespace cardio {
namespace fs = std::filesystem;

namespace {
fs::path temp_path_for(const fs::path& path) {
  // Appended piece by piece: GCC 12 warns (-Wrestrict, a false positive) on "." + std::string.
  std::string name = ".";
  name += path.filename().string();
  name += ".tmp";
  name += std::to_string(::getpid());
  return path.parent_path() / name;
}

bool all_digits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

// fsync reports write-back errors (ENOSPC, EIO) that write() did not on some file systems.
void sync_file(const fs::path& path, const fs::path& tmp) {
  const int fd = ::open(tmp.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) CARDIO_FAIL("cannot write " << path.string() << ": " << tmp.string() << ": " << std::strerror(errno));
  const int rc = ::fsync(fd), e = errno;
  ::close(fd);
  if (rc != 0) CARDIO_FAIL("cannot write " << path.string() << ": " << std::strerror(e));
}
}  // namespace

void write_file_atomic(const fs::path& path, std::string_view content) {
  write_via_temp(path, [&](const fs::path& tmp) {
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) CARDIO_FAIL("cannot write " << path.string() << ": " << std::strerror(errno));
    std::size_t done = 0;
    while (done < content.size()) {
      const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
      if (n < 0) {
        if (errno == EINTR) continue;
        const int e = errno;
        ::close(fd);
        CARDIO_FAIL("cannot write " << path.string() << ": " << std::strerror(e) << " (after " << done << " of "
                                    << content.size() << " bytes)");
      }
      done += static_cast<std::size_t>(n);
    }
    if (::close(fd) != 0) CARDIO_FAIL("cannot write " << path.string() << ": " << std::strerror(errno));
  });
}

void write_via_temp(const fs::path& path, const std::function<void(const fs::path&)>& writer) {
  const fs::path tmp = temp_path_for(path);
  try {
    writer(tmp);
    sync_file(path, tmp);
  } catch (...) {
    std::error_code ec;
    fs::remove(tmp, ec);
    throw;
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    const std::string reason = ec.message();
    fs::remove(tmp, ec);
    CARDIO_FAIL("cannot write " << path.string() << ": renaming " << tmp.string() << " failed: " << reason);
  }
}

bool is_temp_file_name(const std::string& name) {
  if (name.size() < 2 || name[0] != '.') return false;
  const auto tmp = name.rfind(".tmp");
  if (tmp != std::string::npos && tmp > 0 && all_digits(name.substr(tmp + 4))) return true;  // .NAME.tmpPID
  if (name.rfind(".tmp", 0) != 0) return false;                                              // .tmpPID-N-NAME
  const auto dash1 = name.find('-', 4), dash2 = dash1 == std::string::npos ? dash1 : name.find('-', dash1 + 1);
  return dash2 != std::string::npos && all_digits(name.substr(4, dash1 - 4)) &&
         all_digits(name.substr(dash1 + 1, dash2 - dash1 - 1)) && dash2 + 1 < name.size();
}

int remove_stale_temp_files(const fs::path& dir) {
  int removed = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::error_code ec2;
    if (e.is_regular_file(ec2) && is_temp_file_name(e.path().filename().string()) && fs::remove(e.path(), ec2))
      ++removed;
  }
  return removed;
}

}  // namespace cardio
