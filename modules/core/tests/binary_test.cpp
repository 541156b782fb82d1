// Framed binary snapshots: exact round trip, and every kind of damage is an error naming the file.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include "cardio/core/binary.hpp"
#include "cardio/core/error.hpp"

namespace fs = std::filesystem;

namespace cardio {
namespace {

TEST(BinaryTest, Fnv1aMatchesPublishedVectors) {
  // Test vectors of the FNV-1a 64-bit hash (Fowler, Noll, Vo; IETF draft-eastlake-fnv).
  EXPECT_EQ(fnv1a64(""), 0xcbf29ce484222325ULL);
  EXPECT_EQ(fnv1a64("a"), 0xaf63dc4c8601ec8cULL);
  EXPECT_EQ(fnv1a64("foobar"), 0x85944171f73967e8ULL);
  EXPECT_EQ(hex16(0xaf63dc4c8601ec8cULL), "af63dc4c8601ec8c");
}

TEST(BinaryTest, RoundTripIsExactAndDamageIsReported) {
  const fs::path dir = fs::temp_directory_path() / ("cardio_binary_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path f = dir / "snap.bin";
  const double values[4] = {0.1, -0.0, std::numeric_limits<double>::denorm_min(), 1e308};
  BinaryWriter w;
  w.u64(42);
  w.i64(-7);
  w.f64(std::nextafter(1.0, 2.0));
  w.str("lv");
  w.f64s(values, 4);
  w.ints(std::vector<std::int32_t>{3, -1, 5});
  write_framed_file(f, "CARDTEST", 3, w.bytes());

  BinaryReader r(read_framed_file(f, "CARDTEST", 3), f.string());
  EXPECT_EQ(r.u64(), 42u);
  EXPECT_EQ(r.i64(), -7);
  EXPECT_EQ(r.f64(), std::nextafter(1.0, 2.0));
  EXPECT_EQ(r.str(), "lv");
  double back[4];
  r.f64s(back, 4);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(std::memcmp(&back[i], &values[i], sizeof(double)), 0) << i;
  EXPECT_EQ(r.ints<std::int32_t>(), (std::vector<std::int32_t>{3, -1, 5}));
  EXPECT_NO_THROW(r.expect_end());
  EXPECT_THROW(r.u64(), Error);  // past the end

  const auto message = [&](const fs::path& p, std::string_view magic, std::uint32_t v) {
    try {
      read_framed_file(p, magic, v);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message(f, "CARDTEST", 4).find("format version 3"), std::string::npos);
  EXPECT_NE(message(f, "OTHERMAG", 3).find("not a OTHERMAG file"), std::string::npos);
  EXPECT_NE(message(dir / "missing.bin", "CARDTEST", 3).find("cannot open"), std::string::npos);
  std::string bytes;
  {
    std::ifstream in(f, std::ios::binary);
    bytes.assign((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
  std::ofstream(dir / "short.bin", std::ios::binary) << bytes.substr(0, bytes.size() - 5);
  EXPECT_NE(message(dir / "short.bin", "CARDTEST", 3).find("truncated"), std::string::npos);
  std::string flipped = bytes;
  flipped[flipped.size() - 9] ^= 0x10;
  std::ofstream(dir / "flip.bin", std::ios::binary) << flipped;
  EXPECT_NE(message(dir / "flip.bin", "CARDTEST", 3).find("checksum"), std::string::npos);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace cardio
