#pragma once
/// @file mesh_warnings.hpp
/// Honest mesh reports (issue 15): what the mesh lost or changed against its source, as the
/// `warnings` of mesh_report.json (objects {kind, message, numbers}) and lines of run.log.
/// Kinds: volume_mismatch, islands_dropped, thin_wall, unmapped_labels (docs/meshing.md, "Warnings").
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cardio/meshing/mesh_checks.hpp"
#include "cardio/meshing/voxel_mesh.hpp"
#include "config/mesh_config.hpp"
#include "mesh/import_stage.hpp"

namespace cardio::pipeline {

/// What the source holds, taken before resampling and island removal.
struct SourceCensus {
  std::optional<double> tissue_mL;          ///< the source's myocardium volume, if known
  std::map<std::string, double> cavity_mL;  ///< by cavity name
  std::string volume_basis;                 ///< where the volumes come from, for the messages
  double voxel_volume_mm3 = 0;              ///< of the source grid
  std::vector<std::pair<std::int32_t, std::int64_t>> unmapped_labels;  ///< (label, voxels), label != 0
};

/// The source's volumes: the surface's enclosed volumes, the analytic LV phantom's, or else the
/// labelled voxels of each role; and the non-zero labels that have no role.
SourceCensus take_source_census(const Imported& im, const GeometryParams& geo);

/// Everything the warnings are computed from.
struct MeshFacts {
  const SourceCensus& source;
  const meshing::VoxelMesh& mesh;
  const meshing::IslandReport& islands;
  const meshing::ThinWalls& thin_walls;
  const GeometryParams& geometry;
};

/// The warnings (a JSON array, empty when there is nothing to say).
nlohmann::json mesh_warnings(const MeshFacts& facts);

/// The report's `long_axis`: null when the mesh has no base faces and no base plane was given (the
/// axis is then only the myocardium's principal axis), with the reason as second.
std::pair<nlohmann::json, std::string> long_axis_json(const meshing::VoxelMesh& m, const meshing::BaseSpec& base);

/// Sets `warnings`, `long_axis` (and `long_axis_reason` when it is null) in `report`; returns the
/// lines for run.log.
std::vector<std::string> add_warnings(nlohmann::json& report, const MeshFacts& facts);

/// The run.log lines of the warnings in a report ("warning: ..."), e.g. of a cached mesh.
std::vector<std::string> warning_lines(const nlohmann::json& report);

}  // namespace cardio::pipeline
