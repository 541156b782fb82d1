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

/// A 3-D int16 image written by ITK's own writer for the file's extension (e.g. the detached-header
/// formats .mhd and .nhdr, which cardio::imaging does not write); direction identity.
void write_3d_image(const std::filesystem::path& file, std::array<unsigned, 3> size, std::array<double, 3> spacing,
                    std::array<double, 3> origin, const std::vector<std::int16_t>& values);

/// One 2-D slice (.tif/.tiff or .png, any case; the IO is chosen by the extension): values row by
/// row, i fastest. 8 or 16 bits unsigned, or float (TIFF only).
void write_slice(const std::filesystem::path& file, std::array<unsigned, 2> size,
                 const std::vector<std::uint8_t>& values);
void write_slice(const std::filesystem::path& file, std::array<unsigned, 2> size,
                 const std::vector<std::uint16_t>& values);
void write_slice(const std::filesystem::path& file, std::array<unsigned, 2> size, const std::vector<float>& values);
/// A palette (indexed-colour) PNG slice: `indices` into a palette of 4 colours.
void write_palette_png(const std::filesystem::path& file, std::array<unsigned, 2> size,
                       const std::vector<std::uint8_t>& indices);
/// An RGB slice (3 components per pixel), every pixel (1, 2, 3).
void write_rgb_slice(const std::filesystem::path& file, std::array<unsigned, 2> size);
/// A multi-page TIFF (a 3-D image in one file), uint8.
void write_multipage_tiff(const std::filesystem::path& file, std::array<unsigned, 3> size);

/// A 4 x 3 uint8 2-D MetaImage.
void write_2d_mha(const std::filesystem::path& file);

/// 4-D float NRRD of size (nx, ny, nz, 3), spacing 1.5, values i + nx*(j + ny*k) + 100*c.
void write_4d_nrrd(const std::filesystem::path& file, std::array<unsigned, 3> size);

}  // namespace cardio::imaging::test
