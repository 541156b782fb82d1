#pragma once
/// @file import_stage.hpp
/// The first stages of the mesh (internal to pipeline/mesh): the labels imported from a phantom,
/// box, surface or image, fibre vectors read from files, resampled to the element size, and the
/// label roles assigned.
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "cardio/imaging/volume.hpp"
#include "cardio/phantoms/phantoms.hpp"
#include "cardio/surfaces/rasterize.hpp"
#include "config/mesh_config.hpp"

namespace cardio::pipeline {

/// What the import produced: labels on their grid, optional fibre/sheet vectors on the same grid.
struct Imported {
  imaging::LabelVolume labels;
  imaging::VectorVolume fibre, sheet;                               ///< empty unless the source carries them (phantoms)
  std::optional<phantoms::PhantomSpec> phantom;                     ///< the analytic phantom, for its fibre rule
  std::map<std::string, surfaces::TriangleSurface> source_patches;  ///< surface input: the fit's surfaces
  nlohmann::json source;                                            ///< description for the report
};

/// The grid as mesh_report.json gives it (size, spacing, origin, direction).
nlohmann::json grid_json(const imaging::Grid& g);

/// The labels (and a phantom's fibres) of geometry.source.
Imported import_source(const GeometryParams& geo);
/// The source for messages: the file, "box" or "phantom KIND".
std::string source_name(const GeometryParams& geo);

/// Fibre vectors read from files (fibre [+ sheet], or angle maps) on their own grid, into `im`.
void read_fibre_vectors(const FibreParams& f, Imported& im);

/// Refuse (cardio::Error naming the source and the size) a mesh that would not fit in memory.
void check_mesh_fits(const Imported& im, const GeometryParams& geo, const std::string& source_name);

/// Labels, fibre and sheet resampled to geometry.element_size (nothing when it is auto); returns
/// the grid meshed.
imaging::Grid resample_to_element_size(Imported& im, const GeometryParams& geo);

/// Label roles (myocardium, cavities, outside) of the imported labels; errors name the source.
imaging::RoleVolume assign_roles(imaging::LabelVolume labels, const LabelRoles& roles, const std::string& source_name);

/// What derive_cavities_of_mask found: source.derived_cavities of mesh_report.json, and a run.log line.
struct DerivedCavitiesSummary {
  nlohmann::json report;
  std::string log;
};

/// Blood pools derived from a mask without them (geometry.derive_cavities, imaging/derive_cavities.hpp):
/// `roles` gets the cavities lv (and rv). Errors name the source and what the user can set.
DerivedCavitiesSummary derive_cavities_of_mask(imaging::RoleVolume& roles, const imaging::DeriveCavitiesOptions& o,
                                               const std::string& source_name);

}  // namespace cardio::pipeline
