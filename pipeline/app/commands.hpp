#pragma once
/// @file commands.hpp
/// The commands of `cardiac` (README, "Using it"): each takes the parsed arguments and returns the
/// exit code (exit_codes.hpp). run and mesh build a HeartRun or a BlockRun.
#include <exception>

#include "app/args.hpp"
#include "app/run_dir.hpp"

namespace cardio::app {

/// run | mesh CONFIG (or run --resume OUTDIR): a HeartRun for a config with `geometry`, else a BlockRun.
int run(const Args& args, Stage& stage);
/// validate CONFIG: the config and its input files, nothing meshed or written.
int validate(const Args& args, Stage& stage);
/// batch MANIFEST -o BATCH_DIR (docs/cohorts.md).
int batch(const Args& args);
/// collect BATCH_DIR.
int collect(const Args& args);
/// figures RUN_DIR: the figure script's exit status (1 when python/matplotlib is missing).
int figures(const Args& args);
/// phantom lv|biv -o OUTDIR.
int phantom(const Args& args, Stage& stage);
/// bench: element updates per second (bench/).
int bench(const Args& args);

/// A failed allocation (std::bad_alloc, or std::length_error from a container asked for more than
/// it can hold) anywhere: what was being built and how large, instead of a crash. Exit 1.
int out_of_memory(const Stage& stage, const std::exception& e);

}  // namespace cardio::app
