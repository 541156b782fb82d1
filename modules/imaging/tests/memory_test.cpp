// Memory guard: a petabyte request fails with a readable message; the estimate is bounded by
// MemAvailable read independently here.
#include "cardio/imaging/memory.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "test_util.hpp"

namespace cardio::imaging {
namespace {

TEST(Memory, AvailableIsPositiveAndAtMostMemAvailable) {
  std::ifstream in("/proc/meminfo");
  std::string key, unit;
  std::uint64_t kb = 0, mem_available = 0;
  while (in >> key >> kb >> unit)
    if (key == "MemAvailable:") mem_available = kb * 1024;
  const std::uint64_t available = available_memory_bytes();
  EXPECT_GT(available, 0u);
  if (mem_available > 0) {
    EXPECT_LE(available, mem_available + (std::uint64_t{256} << 20));  // a moving target
  }
}

TEST(Memory, HugeRequestThrowsInGigabytes) {
  test::expect_error([] { check_fits_in_memory(1000000000000000ull, "the test volume"); },
                     {"the test volume needs about", "GB", "are available"});
  EXPECT_NO_THROW(check_fits_in_memory(1024, "a tiny volume"));
}

// ulimit -v makes allocations fail with std::bad_alloc long before MemAvailable runs out: the guard
// must see it (issue 14, item 5). In a child, so that the limit does not outlive the test.
TEST(Memory, AddressSpaceLimitCapsTheAvailableMemory) {
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::ifstream statm("/proc/self/statm");
    std::uint64_t pages = 0;
    statm >> pages;
    const std::uint64_t used = pages * std::uint64_t(::sysconf(_SC_PAGESIZE)), headroom = 200ull << 20;
    const rlimit lim{used + headroom, used + headroom};
    if (::setrlimit(RLIMIT_AS, &lim) != 0) ::_exit(2);
    ::_exit(available_memory_bytes() <= headroom ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "available_memory_bytes() ignores RLIMIT_AS";
}

TEST(Memory, FormatBytes) {
  EXPECT_EQ(format_bytes(1500000000ull), "1.50 GB");
  EXPECT_EQ(format_bytes(1000000000000000ull), "1000000 GB");
  EXPECT_EQ(format_bytes(12000000ull), "12.0 MB");
  EXPECT_EQ(format_bytes(2000ull), "2.00 kB");
}

}  // namespace
}  // namespace cardio::imaging
