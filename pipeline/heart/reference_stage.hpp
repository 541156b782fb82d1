#pragma once
/// @file reference_stage.hpp
/// The reference configuration a simulation starts from: the imaged mesh as it is, or, with
/// `unloading` enabled, its unloaded reference (unloading.hpp), with Guccione C fitted to the
/// Klotz EDPVR first when `passive_calibration` is enabled (passive_calibration.hpp).
#include <filesystem>
#include <optional>
#include <ostream>

#include "cardio/meshing/voxel_mesh.hpp"
#include "config/heart_config.hpp"
#include "heart/passive_calibration.hpp"
#include "heart/unloading.hpp"

namespace cardio::pipeline {

struct ReferenceStage {
  std::optional<UnloadingResult> unloading;
  std::optional<CalibrationResult> calibration;
  /// The mesh to simulate: the unloaded one if any, else `image`.
  const meshing::VoxelMesh& mesh(const meshing::VoxelMesh& image) const { return unloading ? unloading->mesh : image; }
};

/// Run the stages sim asks for on `image`. A calibration sets sim.material.law.C to the fitted C.
ReferenceStage prepare_reference(HeartSimulation& sim, const meshing::VoxelMesh& image, std::ostream* log);

/// unloaded_mesh.vtu, unloading.json, and with a calibration klotz_fit.csv and
/// passive_calibration.json. Returns whether there was a calibration (it has a figure to draw).
bool write_reference_outputs(const std::filesystem::path& outdir, const ReferenceStage& stage);

}  // namespace cardio::pipeline
