#pragma once
/// @file block_app.hpp
/// `cardiac run` of a block experiment (a config without `geometry`): the experiment of
/// blocks/experiments.hpp, final.vtu and summary.json.
#include <memory>
#include <string>

#include "app/args.hpp"
#include "app/run_dir.hpp"
#include "cardio/config/config.hpp"
#include "config/run_config.hpp"

namespace cardio::app {

class BlockRun {
 public:
  /// Parses `doc`: throws cardio::Error (exit 2 by the caller) before any output.
  BlockRun(const Args& args, config::Document& doc);
  /// The exit code (exit_codes.hpp); std::bad_alloc and usage errors propagate to main.
  int run(Stage& stage);

 private:
  Args m_args;
  pipeline::RunConfig m_cfg;
  std::string m_resolved;
};

}  // namespace cardio::app
