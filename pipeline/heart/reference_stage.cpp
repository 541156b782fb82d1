#include "heart/reference_stage.hpp"

namespace cardio::pipeline {

ReferenceStage prepare_reference(HeartSimulation& sim, const meshing::VoxelMesh& image, std::ostream* log) {
  ReferenceStage stage;
  if (sim.passive_calibration.enabled) {
    CalibrationResult c = calibrate_passive_stiffness(sim, image, log);
    sim.material.law.C = c.C_kPa;
    stage.unloading = std::move(c.unloaded);
    c.unloaded = {};
    stage.calibration = std::move(c);
    if (log) *log << "passive calibration: Guccione C = " << sim.material.law.C << " kPa\n";
  } else if (sim.unloading.enabled) {
    stage.unloading = unload_reference(sim, image, log);
  }
  if (stage.unloading && log)
    *log << "unloading: converged after " << stage.unloading->history.back().iteration << " iterations\n";
  return stage;
}

bool write_reference_outputs(const std::filesystem::path& outdir, const ReferenceStage& stage) {
  if (stage.unloading) write_unloading_outputs(outdir, *stage.unloading);
  if (stage.calibration) write_calibration_outputs(outdir, *stage.calibration);
  return stage.calibration.has_value();
}

}  // namespace cardio::pipeline
