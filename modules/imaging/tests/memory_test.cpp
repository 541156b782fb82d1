// Memory guard: a petabyte request fails with a readable message; the estimate is bounded by
// MemAvailable read independently here.
#include "cardio/imaging/memory.hpp"

#include <gtest/gtest.h>

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

TEST(Memory, FormatBytes) {
  EXPECT_EQ(format_bytes(1500000000ull), "1.50 GB");
  EXPECT_EQ(format_bytes(1000000000000000ull), "1000000 GB");
  EXPECT_EQ(format_bytes(12000000ull), "12.0 MB");
  EXPECT_EQ(format_bytes(2000ull), "2.00 kB");
}

}  // namespace
}  // namespace cardio::imaging
