#pragma once
/// @file bench.hpp
/// Benchmark of the element kernels: one full step (force evaluation of every element with all
/// terms, damping on, random fibre frames, plus the Verlet update) on cubic voxel blocks, per
/// element type and thread count. Reports element updates per second and memory.
/// Element types: sampled_axes (the Guccione law at 8 samples with F-bar: the element hearts use
/// by default, also called `heart`), one_point (the Guccione law on the centre axes + hourglass
/// control), bourguignon_cani (linear axis springs, the block experiments) and baudet (Baudet et
/// al. 2007 cube springs with corrective forces). The Guccione ones run with active tension
/// 60 kPa and activation 0.5 so that every term is exercised.
#include <iosfwd>
#include <string>
#include <vector>

namespace cardio::bench {

struct BenchOptions {
  std::vector<long> sizes{1000, 10000, 100000, 1000000};  ///< target element counts
  std::vector<int> threads{1, 2};
  std::vector<std::string> elements{"heart", "sampled_axes", "one_point", "bourguignon_cani", "baudet"};
  double seconds = 1.0;   ///< minimum timed duration per case
  bool all_isas = false;  ///< the sampled-axes rows once per SIMD build the CPU runs (default: the widest)
  std::string json_path;  ///< write results here if not empty
};

/// The element types, in report order.
const std::vector<std::string>& bench_elements();

/// `name` if it is a bench element type, else "". "heart" is the sampled-axes element (the heart's
/// default) with the law as a beat runs it; "sampled_axes" the same element with every term on.
std::string bench_element(const std::string& name);

void run_bench(const BenchOptions& options, std::ostream& out);

}  // namespace cardio::bench
