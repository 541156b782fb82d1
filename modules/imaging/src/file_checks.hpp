#pragma once
/// @file file_checks.hpp (private)
/// Completeness checks of image files. ITK's NIfTI, MetaImage and legacy VTK readers do not fail
/// on a truncated file: they zero-fill (or leave garbage in) the missing voxels and at most print
/// to stderr. A segmentation silently cut short is worse than an error, so the readers check the
/// pixel data are all present before handing the file to ITK.
#include <cstdint>
#include <filesystem>
#include <string>

namespace cardio::imaging::file_checks {

/// Throws cardio::Error ("... is truncated ...") if `file` cannot hold its pixel data.
/// n_values (voxels x components) and bytes_per_value are as ITK reports them (used for MetaImage
/// and VTK; NIfTI is checked from its own header since ITK reports rescaled types).
/// Other formats (NRRD, DICOM) fail inside ITK.
void check_complete(const std::filesystem::path& file, std::uint64_t n_values, std::uint64_t bytes_per_value,
                    const std::string& what);

}  // namespace cardio::imaging::file_checks
