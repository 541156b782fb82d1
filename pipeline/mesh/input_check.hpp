#pragma once
/// @file input_check.hpp
/// The input files of a heart config, checked before anything is meshed or written (issue 14:
/// `validate` passed configs that `mesh` then rejected, and a missing file exited 2 from `validate`
/// but 1 from `run`). `validate`, `run`, `mesh` and `batch` make the same checks, so an invalid
/// input is exit 2 from every command. Nothing here meshes: the label image is read and its labels
/// counted, a surface is read and its patch classes matched, fibre images are read whole.
#include "cardio/config/config.hpp"
#include "cardio/core/error.hpp"
#include "config/mesh_config.hpp"

namespace cardio::pipeline {

/// An input file that is missing, unreadable, not in the expected format, or whose content does not
/// fit the config (a role whose labels are in no voxel, a surface class that is not configured).
/// what() is "FILE:LINE:COL: KEY: ..." naming the config key and the input file.
class InvalidInput : public Error {
 public:
  using Error::Error;
};

/// Cheap checks first, before the memory estimate (which reads headers): every input file exists, is
/// a readable, non-empty file (or a DICOM folder), and its header reads as an image or a surface.
void check_input_files(const MeshConfig& cfg, config::Document& doc);

/// Then the content: the label image read whole and the roles' labels found in it (for phantoms
/// and boxes, in the labels they are built with), a surface's patch classes matched to the config,
/// fibre and angle images read whole. Throws InvalidInput.
void check_input_contents(const MeshConfig& cfg, config::Document& doc);

}  // namespace cardio::pipeline
