#pragma once
/// @file file_checks.hpp (private)
/// Completeness and voxel-size checks of image files. ITK's NIfTI, MetaImage and legacy VTK readers do not fail
/// on a truncated file: they zero-fill (or leave garbage in) the missing voxels and at most print
/// to stderr. A segmentation silently cut short is worse than an error, so the readers check the
/// pixel data are all present before handing the file to ITK.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace cardio::imaging::file_checks {

/// Throws cardio::Error ("... is truncated ...") if `file` cannot hold its pixel data.
/// n_values (voxels x components) and bytes_per_value are as ITK reports them (used for MetaImage
/// and VTK; NIfTI is checked from its own header since ITK reports rescaled types).
/// Other formats (NRRD, DICOM) fail inside ITK.
void check_complete(const std::filesystem::path& file, std::uint64_t n_values, std::uint64_t bytes_per_value,
                    const std::string& what);

/// Throws cardio::Error naming `file` if its header leaves the voxel size unknown. NIfTI: a pixdim
/// of a spatial axis that is 0, negative or not finite (the NIfTI library, and so ITK, silently
/// reads it as 1 mm, and scales the qform and the sform by that). Other formats: their readers
/// report what they read, which validate_geometry checks.
void check_spacing(const std::filesystem::path& file, const std::string& what);

/// The indices of the values that are NaN or infinite in the data of a float32/float64 NIfTI file
/// (empty for other files and types): the NIfTI library replaces them by 0 as it reads, so they are
/// found in the file itself. Meant for 1-component images (value index = voxel index).
std::vector<std::uint64_t> non_finite_values(const std::filesystem::path& file);

}  // namespace cardio::imaging::file_checks
