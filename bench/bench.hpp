#pragma once
/// @file bench.hpp
/// Benchmark of the Bourguignon-Cani engine: one full step (force evaluation of every element
/// with all terms, damping on, random fibre frames, plus the Verlet update) on cubic voxel
/// blocks, timed at several thread counts. Reports element updates per second and memory.
#include <iosfwd>
#include <string>
#include <vector>

namespace cardio::bench {

struct BenchOptions {
  std::vector<long> sizes{1000, 10000, 100000, 1000000};  ///< target element counts
  std::vector<int> threads{1, 2};
  double seconds = 1.0;      ///< minimum timed duration per case
  std::string json_path;     ///< write results here if not empty
};

void run_bench(const BenchOptions& options, std::ostream& out);

}  // namespace cardio::bench
