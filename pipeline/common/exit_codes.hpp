#pragma once
/// @file exit_codes.hpp
/// The exit codes of `cardiac` (README, "Exit codes"), the one definition for the program and the
/// cohort tools that read its children's codes.
namespace cardio::pipeline {

inline constexpr int kExitOk = 0;
/// The run failed: a simulation error, an unstable or unconverged solve, a non-physical state.
inline constexpr int kExitFailed = 1;
/// Bad usage, an invalid config or input file: nothing was computed.
inline constexpr int kExitUsage = 2;
/// Stopped by SIGTERM or SIGINT after writing OUTDIR/checkpoint.bin (BSD's EX_TEMPFAIL).
inline constexpr int kExitInterrupted = 75;

}  // namespace cardio::pipeline
