#pragma once
/// @file heart_app.hpp
/// `cardiac run | mesh` of a heart config (deal.II's application shape: a constructor that takes the
/// input, and run()): the checks before OUTDIR is touched, the mesh stage, then the beat or the
/// quasi-static solve, final.vtu and summary.json, and the figures.
#include <memory>
#include <string>

#include "app/args.hpp"
#include "app/run_dir.hpp"
#include "cardio/config/config.hpp"
#include "config/heart_config.hpp"
#include "heart/beat_loop.hpp"
#include "mesh/memory_estimate.hpp"
#include "mesh/mesh_stage.hpp"

namespace cardio::app {

/// The checks of a heart config before OUTDIR is touched, the same for validate, run and mesh (an
/// invalid input is exit 2 from each): the input files, the memory estimate, then their content.
/// Throws pipeline::InvalidInput or cardio::Error.
pipeline::MemoryEstimate check_heart_config(const pipeline::HeartConfig& cfg, config::Document& doc);

class HeartRun {
 public:
  /// Parses `doc` and checks its inputs: throws cardio::Error (exit 2 by the caller) before any output.
  HeartRun(const Args& args, std::shared_ptr<config::Document> doc);
  /// The exit code (exit_codes.hpp); std::bad_alloc and usage errors propagate to main.
  int run(Stage& stage);

 private:
  int run_stages(RunDir& dir, Stage& stage);
  /// The simulation on `mesh`: the imaged mesh, or its unloaded reference (reference_stage.hpp).
  int finish_beat(RunDir& dir, const meshing::VoxelMesh& mesh, pipeline::BeatSetup setup);
  void finish_quasi_static(RunDir& dir, const meshing::VoxelMesh& mesh);
  /// Run scripts/figures/<script> on the run directory (run_figures.py: the beat's figures).
  void draw_figures(RunDir& dir, const std::string& script = "run_figures.py") const;

  Args m_args;
  std::shared_ptr<config::Document> m_doc;
  pipeline::HeartConfig m_cfg;
  pipeline::MemoryEstimate m_memory;
  std::string m_resolved;
  bool m_simulate = false;
};

}  // namespace cardio::app
