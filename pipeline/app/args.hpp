#pragma once
/// @file args.hpp
/// The command line of `cardiac`: parsed and checked in one place (bad usage exits 2 here, before
/// anything is read or written).
#include <string>
#include <vector>

namespace cardio::app {

/// The parsed command line; fields apply to the commands named in their comments.
struct Args {
  std::string command;
  bool resume = false;  ///< run --resume OUTDIR
  std::string config;
  std::string outdir;
  int threads = 0;
  std::vector<std::string> overrides;
  std::vector<long> sizes;
  std::vector<std::string> elements;
  std::vector<int> thread_list;
  double seconds = 1.0;
  bool all_isas = false;
  std::string json;
  // phantom
  double voxel_size = 1.0;
  std::string fibres = "land_benchmark";
  std::vector<double> rotate;
  std::string format = "nii.gz";
  // batch, collect
  std::string executor = "local";
  int jobs = 1;
  bool jobs_given = false;
  bool submit = false, wait = false, figures = true, skip_invalid = false;
};

/// Parse argv (prints the help or the version and exits 0 for --help, --version; exits 2 with a
/// message on stderr for bad usage).
Args parse_args(int argc, char** argv);

/// Report bad usage on stderr and exit 2.
[[noreturn]] void usage_error(const std::string& msg);

}  // namespace cardio::app
