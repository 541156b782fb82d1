#pragma once
/// @file beat_run.hpp
/// The beating heart (simulation.mode: beat): Guccione myocardium with active fibre tension from
/// an activation map and a twitch, each cavity driven through filling, isovolumic contraction,
/// ejection into a Windkessel and isovolumic relaxation (Promayon's exact volume projection in the
/// isovolumic phases), explicit semi-implicit Euler time stepping (beat_loop.hpp).
/// Writes frames/frame_NNNNN.vtu + series.pvd and timeseries.csv into the run directory as it goes
/// (beat_observers.hpp), checkpoints, and the summary.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <ostream>

#include "cardio/mechanics/system.hpp"
#include "cardio/meshing/voxel_mesh.hpp"
#include "config/heart_config.hpp"
#include "heart/beat_loop.hpp"

namespace cardio::pipeline {

struct BeatRunResult {
  mechanics::NodeState state;
  Eigen::VectorXd activation_time;  ///< per element, relative to each beat's onset [ms]
  Eigen::VectorXd active_tension;   ///< per element at the end [kPa]
  nlohmann::json summary;           ///< "complete": false (with "incomplete_reason") if cut short
  /// Empty for a complete run. Otherwise why it stopped early (a beat overran its period) or why
  /// its last beat has no statistics; the frames, tables and summary hold what was computed.
  std::string incomplete_reason;
};

struct BeatRunOptions {
  std::string config_hash;    ///< identifies the config in checkpoints (a resume must match it)
  bool resume = false;        ///< continue from OUTDIR/checkpoint.bin
  bool progress_bar = false;  ///< draw a progress bar on stderr (a terminal); else log lines
};

/// The time loop. Writes OUTDIR/checkpoint.bin every sim.checkpoint_interval of simulated time and,
/// when SIGTERM/SIGINT arrives (core/interrupt.hpp), writes it and throws cardio::Interrupted. A run
/// resumed from a checkpoint continues bit for bit (same numbers as an uninterrupted run).
BeatRunResult run_heart_beat(const HeartSimulation& sim, const meshing::VoxelMesh& mesh, BeatSetup setup,
                             const std::filesystem::path& outdir, std::ostream* log, const BeatRunOptions& options);

/// prepare_heart_beat + run_heart_beat.
BeatRunResult run_heart_beat(const HeartSimulation& sim, const meshing::VoxelMesh& mesh,
                             const std::filesystem::path& outdir, std::ostream* log);

}  // namespace cardio::pipeline
