#include "cardio/core/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include "cardio/core/error.hpp"

namespace cardio {
namespace fs = std::filesystem;

namespace {
fs::path temp_path_for(const fs::path& path) {
  return path.parent_path() / ("." + path.filename().string() + ".tmp" + std::to_string(::getpid()));
}
}  // namespace

void write_file_atomic(const fs::path& path, std::string_view content) {
  write_via_temp(path, [&](const fs::path& tmp) {
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) CARDIO_FAIL("cannot create " << tmp.string() << ": " << std::strerror(errno));
    std::size_t done = 0;
    while (done < content.size()) {
      const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
      if (n < 0) {
        if (errno == EINTR) continue;
        const int e = errno;
        ::close(fd);
        CARDIO_FAIL("cannot write " << tmp.string() << ": " << std::strerror(e));
      }
      done += static_cast<std::size_t>(n);
    }
    ::fsync(fd);
    ::close(fd);
  });
}

void write_via_temp(const fs::path& path, const std::function<void(const fs::path&)>& writer) {
  const fs::path tmp = temp_path_for(path);
  try {
    writer(tmp);
  } catch (...) {
    std::error_code ec;
    fs::remove(tmp, ec);
    throw;
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    CARDIO_FAIL("cannot move " << tmp.string() << " to " << path.string() << ": " << ec.message());
  }
}

}  // namespace cardio
