#pragma once
// Test inputs written directly with ITK, independently of cardio::imaging's writers. No Eigen
// here: ITK 5.2's bundled Eigen and the system Eigen cannot share a translation unit.
#include <array>
#include <cstdint>
#include <filesystem>
#include <vector>

namespace cardio::imaging::test {

/// 3-D short image as a DICOM series (one file per k slice) via GDCMImageIO + ImageSeriesWriter.
/// direction: row-major, column a = index axis a.
void write_dicom_series(const std::filesystem::path& dir, std::array<unsigned, 3> size, std::array<double, 3> spacing,
                        std::array<double, 3> origin, std::array<double, 9> direction,
                        const std::vector<std::int16_t>& values);

/// A 4 x 3 uint8 2-D MetaImage.
void write_2d_mha(const std::filesystem::path& file);

/// 4-D float NRRD of size (nx, ny, nz, 3), spacing 1.5, values i + nx*(j + ny*k) + 100*c.
void write_4d_nrrd(const std::filesystem::path& file, std::array<unsigned, 3> size);

}  // namespace cardio::imaging::test
