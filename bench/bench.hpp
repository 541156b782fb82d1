#pragma once
/// @file bench.hpp
/// Benchmark of the element kernels: one full step (force evaluation of every element with all
/// terms, damping on, random fibre frames, plus the Verlet update) on cubic voxel blocks, per
/// element type and thread count. Reports element updates per second and memory.
/// Element types: bourguignon_cani (linear springs, the block experiments), guccione_one_point
/// (centre axes + hourglass control) and guccione_sampled_axes (the heart default), the Guccione
/// ones with active tension 60 kPa and activation 0.5 so that every term is exercised.
#include <iosfwd>
#include <string>
#include <vector>

namespace cardio::bench {

struct BenchOptions {
  std::vector<long> sizes{1000, 10000, 100000, 1000000};  ///< target element counts
  std::vector<int> threads{1, 2};
  std::vector<std::string> elements{"bourguignon_cani", "guccione_one_point", "guccione_sampled_axes"};
  double seconds = 1.0;      ///< minimum timed duration per case
  std::string json_path;     ///< write results here if not empty
};

/// True for an element type the benchmark knows.
bool is_bench_element(const std::string& name);

void run_bench(const BenchOptions& options, std::ostream& out);

}  // namespace cardio::bench
