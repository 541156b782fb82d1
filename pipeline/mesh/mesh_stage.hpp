#pragma once
/// @file mesh_stage.hpp
/// The stages import -> fibres -> voxelize as one function of a MeshConfig, and the mesh outputs
/// (mesh.vtu, surfaces.vtp, cavity_<name>.vtp, mesh_report.json). Used by `cardiac mesh` and,
/// as its first stages, by `cardiac run`.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <ostream>

#include "cardio/meshing/voxel_mesh.hpp"
#include "config/mesh_config.hpp"

namespace cardio::pipeline {

struct MeshStageResult {
  meshing::VoxelMesh mesh;
  nlohmann::json report;  ///< the content of mesh_report.json
};

/// Run import, fibres and voxelization. Every input problem is a cardio::Error naming the file or
/// key and what was expected; nothing is written here. Progress lines go to `log` if given.
MeshStageResult run_mesh_stages(const MeshConfig& config, std::ostream* log = nullptr);

/// Write mesh.vtu, (optionally) the surface VTPs, then mesh_report.json last (its presence marks a
/// complete mesh), each atomically. Stale outputs of an earlier run are removed first.
void write_mesh_outputs(const std::filesystem::path& outdir, const MeshStageResult& result, bool surfaces);

}  // namespace cardio::pipeline
