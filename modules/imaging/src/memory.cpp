#include "cardio/imaging/memory.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <vector>

#include "cardio/core/error.hpp"

namespace cardio::imaging {
namespace fs = std::filesystem;

namespace {

constexpr std::uint64_t kUnlimited = std::numeric_limits<std::uint64_t>::max();

/// First unsigned number in a file, or nothing ("max", missing, unreadable).
bool read_number(const fs::path& file, std::uint64_t& out) {
  std::ifstream in(file);
  if (!in) return false;
  std::string word;
  if (!(in >> word) || word.empty() || word.find_first_not_of("0123456789") != std::string::npos) return false;
  try {
    out = std::stoull(word);
  } catch (...) {
    return false;
  }
  return true;
}

/// Remaining headroom of one cgroup folder: limit - usage, or kUnlimited if no (finite) limit.
std::uint64_t cgroup_headroom(const fs::path& dir, const char* limit_file, const char* usage_file) {
  std::uint64_t limit = 0, usage = 0;
  // v1 reports "no limit" as a huge page-aligned number (e.g. 0x7FFFFFFFFFFFF000).
  if (!read_number(dir / limit_file, limit) || limit >= (std::uint64_t{1} << 60)) return kUnlimited;
  if (!read_number(dir / usage_file, usage)) usage = 0;
  return limit > usage ? limit - usage : 0;
}

/// Smallest headroom along the cgroup path and its ancestors below `root`.
std::uint64_t cgroup_chain_headroom(const fs::path& root, const std::string& rel, const char* limit_file,
                                    const char* usage_file) {
  std::uint64_t best = kUnlimited;
  if (!fs::is_directory(root)) return best;
  fs::path p = root / fs::path(rel).relative_path();
  for (;;) {
    if (fs::is_directory(p)) best = std::min(best, cgroup_headroom(p, limit_file, usage_file));
    if (p == root || !p.has_parent_path() || p.parent_path() == p) break;
    const fs::path parent = p.parent_path();
    if (parent.string().size() < root.string().size()) break;
    p = parent;
  }
  return best;
}

std::uint64_t cgroup_limit() {
  std::uint64_t best = kUnlimited;
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    // "hierarchy-id:controllers:path"; v2 is "0::path", v1 memory is "N:memory:path".
    const auto a = line.find(':');
    const auto b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1);
    const std::string rel = line.substr(b + 1);
    if (controllers.empty()) {
      best = std::min(best, cgroup_chain_headroom("/sys/fs/cgroup", rel, "memory.max", "memory.current"));
      best = std::min(best, cgroup_chain_headroom("/sys/fs/cgroup/unified", rel, "memory.max", "memory.current"));
    } else {
      std::stringstream ss(controllers);
      std::string c;
      while (std::getline(ss, c, ','))
        if (c == "memory")
          best = std::min(best, cgroup_chain_headroom("/sys/fs/cgroup/memory", rel, "memory.limit_in_bytes",
                                                      "memory.usage_in_bytes"));
    }
  }
  return best;
}

std::uint64_t meminfo_available() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::uint64_t kb = 0;
  std::string unit;
  while (in >> key >> kb) {
    std::getline(in, unit);
    if (key == "MemAvailable:") return kb * 1024;
  }
  // Very old kernels: free physical pages.
  const long pages = ::sysconf(_SC_AVPHYS_PAGES);
  const long page = ::sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0) return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page);
  return kUnlimited;
}

/// Address space left under RLIMIT_AS (ulimit -v): the limit minus this process's virtual size.
std::uint64_t address_space_headroom() {
  rlimit lim{};
  if (::getrlimit(RLIMIT_AS, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY) return kUnlimited;
  std::ifstream in("/proc/self/statm");
  std::uint64_t pages = 0;
  if (!(in >> pages)) return kUnlimited;
  const std::uint64_t used = pages * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  return lim.rlim_cur > used ? lim.rlim_cur - used : 0;
}

}  // namespace

std::uint64_t available_memory_bytes() {
  return std::min({meminfo_available(), cgroup_limit(), address_space_headroom()});
}

std::string format_bytes(std::uint64_t bytes) {
  const double b = static_cast<double>(bytes);
  const char* unit = "GB";
  double v = b / 1e9;
  if (v < 0.1) {
    unit = "MB";
    v = b / 1e6;
    if (v < 0.1) {
      unit = "kB";
      v = b / 1e3;
    }
  }
  char buf[64];
  const int decimals = v >= 100 ? 0 : (v >= 10 ? 1 : 2);
  std::snprintf(buf, sizeof buf, "%.*f %s", decimals, v, unit);
  return buf;
}

void check_fits_in_memory(std::uint64_t needed_bytes, const std::string& what) {
  const std::uint64_t available = available_memory_bytes();
  if (needed_bytes > available)
    CARDIO_FAIL(what << " needs about " << format_bytes(needed_bytes) << " but only " << format_bytes(available)
                     << " are available");
}

}  // namespace cardio::imaging
