// Deterministic parallel loops: reductions must be bit-identical at any thread count.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "cardio/core/parallel.hpp"

namespace {

using cardio::kReduceChunk;

// Restores the thread count a test changed.
class ParallelTest : public ::testing::Test {
 protected:
  void SetUp() override { m_saved = cardio::thread_count(); }
  void TearDown() override { cardio::set_thread_count(m_saved); }

 private:
  int m_saved = 1;
};

// Terms with magnitudes from 1e-16 to 1e16 and mixed signs: their floating-point sum
// depends on the summation order.
double term(std::int64_t i) {
  const int exponent = static_cast<int>((i * 7919) % 33) - 16;  // -16 .. 16
  const double sign = (i * 31) % 3 == 0 ? -1.0 : 1.0;
  return sign * (1.0 + 0.001 * static_cast<double>(i % 97)) * std::pow(10.0, exponent);
}

bool bit_equal(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

constexpr std::int64_t kN = 5 * kReduceChunk + 123;  // several chunks, last one partial

TEST_F(ParallelTest, TermsAreOrderSensitive) {
  // Guard for the determinism test below: forward and backward sums differ.
  double fwd = 0, bwd = 0;
  for (std::int64_t i = 0; i < kN; ++i) fwd += term(i);
  for (std::int64_t i = kN - 1; i >= 0; --i) bwd += term(i);
  EXPECT_FALSE(bit_equal(fwd, bwd)) << "test data does not depend on order";
}

TEST_F(ParallelTest, DeterministicSumIsBitIdenticalAcrossThreadCounts) {
  cardio::set_thread_count(1);
  const double s1 = cardio::deterministic_sum(kN, term);
  cardio::set_thread_count(2);
#ifdef CARDIO_HAVE_OPENMP
  EXPECT_EQ(cardio::thread_count(), 2);
#endif
  const double s2 = cardio::deterministic_sum(kN, term);
  EXPECT_TRUE(bit_equal(s1, s2)) << s1 << " vs " << s2;
  // Repeated runs at the same count agree too.
  EXPECT_TRUE(bit_equal(s2, cardio::deterministic_sum(kN, term)));
}

TEST_F(ParallelTest, DeterministicSumFollowsTheDocumentedChunkOrder) {
  // Reference: each chunk of kReduceChunk summed sequentially, chunk sums added in order.
  double ref = 0;
  for (std::int64_t c = 0; c * kReduceChunk < kN; ++c) {
    double s = 0;
    for (std::int64_t i = c * kReduceChunk; i < std::min(kN, (c + 1) * kReduceChunk); ++i) s += term(i);
    ref += s;
  }
  for (int threads : {1, 2}) {
    cardio::set_thread_count(threads);
    EXPECT_TRUE(bit_equal(cardio::deterministic_sum(kN, term), ref)) << threads << " thread(s)";
  }
}

TEST_F(ParallelTest, DeterministicSumSmallCases) {
  EXPECT_EQ(cardio::deterministic_sum(0, term), 0.0);
  EXPECT_EQ(cardio::deterministic_sum(1, [](std::int64_t) { return 2.5; }), 2.5);
  // Exact integer sum over several chunks.
  const std::int64_t n = 3 * kReduceChunk + 7;
  const double s = cardio::deterministic_sum(n, [](std::int64_t i) { return static_cast<double>(i); });
  EXPECT_EQ(s, static_cast<double>(n * (n - 1) / 2));
}

TEST_F(ParallelTest, ParallelFirstReturnsSmallestIndex) {
  const std::int64_t n = 4 * kReduceChunk + 10;
  // Hits in several chunks: the smallest wins whichever thread finds its chunk first.
  const std::vector<std::int64_t> hits{3 * kReduceChunk + 5, kReduceChunk + 17, 2 * kReduceChunk, kReduceChunk + 900};
  auto pred = [&](std::int64_t i) {
    for (std::int64_t h : hits)
      if (i == h) return true;
    return false;
  };
  for (int threads : {1, 2}) {
    cardio::set_thread_count(threads);
    EXPECT_EQ(cardio::parallel_first(n, pred), kReduceChunk + 17) << threads << " thread(s)";
    EXPECT_EQ(cardio::parallel_first(n, [](std::int64_t i) { return i % 1000 == 999; }), 999);
    EXPECT_EQ(cardio::parallel_first(n, [](std::int64_t i) { return i >= 0; }), 0);
    EXPECT_EQ(cardio::parallel_first(n, [&](std::int64_t i) { return i == n - 1; }), n - 1);
    EXPECT_EQ(cardio::parallel_first(n, [](std::int64_t) { return false; }), -1);
    EXPECT_EQ(cardio::parallel_first(0, [](std::int64_t) { return true; }), -1);
  }
}

TEST_F(ParallelTest, ParallelMax) {
  const std::int64_t n = 3 * kReduceChunk + 11;
  for (int threads : {1, 2}) {
    cardio::set_thread_count(threads);
    // Maximum in the middle of the second chunk, all other values smaller.
    const std::int64_t at = kReduceChunk + 1234;
    auto v = [&](std::int64_t i) { return i == at ? 1e6 : std::sin(static_cast<double>(i)); };
    EXPECT_EQ(cardio::parallel_max(n, v), 1e6) << threads << " thread(s)";
    // All negative: the max is not clamped at 0.
    EXPECT_EQ(cardio::parallel_max(n, [](std::int64_t i) { return -1.0 - static_cast<double>(i); }), -1.0);
    // Maximum in the last, partial chunk.
    EXPECT_EQ(cardio::parallel_max(n, [](std::int64_t i) { return static_cast<double>(i); }),
              static_cast<double>(n - 1));
    EXPECT_EQ(cardio::parallel_max(0, [](std::int64_t) { return 1.0; }), -std::numeric_limits<double>::infinity());
  }
}

TEST_F(ParallelTest, ParallelForVisitsEveryIndexOnce) {
  cardio::set_thread_count(2);
  const std::int64_t n = 10007;
  std::vector<int> visits(static_cast<std::size_t>(n), 0);
  cardio::parallel_for(n, [&](std::int64_t i) { visits[static_cast<std::size_t>(i)] += 1; });
  for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(visits[static_cast<std::size_t>(i)], 1) << "index " << i;
}

TEST_F(ParallelTest, SetThreadCountClampsToOne) {
  cardio::set_thread_count(0);
  EXPECT_GE(cardio::thread_count(), 1);
#ifdef CARDIO_HAVE_OPENMP
  EXPECT_EQ(cardio::thread_count(), 1);
#endif
}

}  // namespace
