#pragma once
/// @file image_io.hpp
/// Image files <-> voxel volumes, through ITK (which stays inside the sources).
///
/// Physical space is ITK's: for the medical formats (NIfTI, NRRD with a `space`, DICOM, MetaImage)
/// it is patient LPS in mm, whatever the file stores (ITK converts NIfTI's RAS to LPS).
/// Grid::origin / spacing / direction are exactly ITK's GetOrigin / GetSpacing / GetDirection,
/// so a voxel centre is origin + direction * diag(spacing) * index, as in volume.hpp.
///
/// Readers: NIfTI (.nii, .nii.gz), MetaImage (.mha, .mhd), NRRD (.nrrd, .nhdr), legacy VTK
/// structured points (.vtk), VTK XML image data (.vti, point data scalars), single DICOM files;
/// a folder is read as a DICOM series (its first series, slices sorted by position), unless it
/// holds TIFF or PNG files: label images may also be stacks of 2-D slices, a folder or a glob
/// pattern (image_stack.hpp), whose spacing and origin the caller gives. Every failure is a
/// cardio::Error whose message names the file and the problem (missing, not an image, truncated,
/// wrong dimension or components, ...). Truncated NIfTI/MetaImage/VTK files are detected before
/// ITK reads them (ITK would zero-fill). Large reads are checked against available memory first
/// (memory.hpp).
#include <Eigen/Core>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "cardio/imaging/image_stack.hpp"
#include "cardio/imaging/volume.hpp"

namespace cardio::imaging {

/// What an image file holds, read from its header only (no pixels): for validation and for
/// memory estimates before a large read.
struct ImageInfo {
  Grid grid;                         ///< first three axes (2-D images: size 1 along k)
  unsigned dimension = 0;            ///< number of image axes as stored (2, 3, 4, ...)
  std::vector<std::uint64_t> sizes;  ///< size along every stored axis
  unsigned components = 1;           ///< values per voxel
  std::string component_type;        ///< ITK's name, e.g. "short", "float", "unsigned_char"
  std::string pixel_type;            ///< ITK's name, e.g. "scalar", "vector"
  std::uint64_t bytes_per_component = 0;

  /// Bytes of the pixel data as stored (all axes, all components).
  std::uint64_t pixel_bytes() const;
};

/// Header of an image file, of the first DICOM series in a folder, or of a stack of 2-D slices
/// (3-D: the slices' size and their count; the grid from `stack`, required for a stack).
ImageInfo read_image_info(const std::filesystem::path& path, const std::optional<StackGeometry>& stack = std::nullopt);

/// A 3-D, one-component image of integer labels (any integer or float storage type, but every
/// value must be an integer that fits in int32; the first offending voxel is reported).
/// A 4-D image whose extra axes all have size 1 is accepted as 3-D. `path`: a file, a DICOM folder
/// or a stack of 2-D slices; a stack's slices must store integers, and its grid is `stack`'s
/// (required for a stack, ignored otherwise).
LabelVolume read_label_image(const std::filesystem::path& path,
                             const std::optional<StackGeometry>& stack = std::nullopt);

/// A 3-D, one-component image, converted to float.
ScalarVolume read_scalar_image(const std::filesystem::path& file);

/// Axes along which the three stored components of a vector image are expressed.
enum class VectorAxes {
  physical,  ///< components along the physical x, y, z (ITK's convention; LPS for medical images)
  index,     ///< components along the image's index axes i, j, k: converted with v_phys = D v
};

/// A 3-D image of 3-vectors, returned in physical axes. Accepted layouts: 3 components per voxel,
/// or a 4-D scalar image whose last axis has size 3 (component axis).
VectorVolume read_vector_image(const std::filesystem::path& file, VectorAxes axes);

enum class AngleUnit { degrees, radians };

/// Fibre directions from two angle maps on the same grid:
///   f = cos(e) cos(a) X + cos(e) sin(a) Y + sin(e) Z,
/// with X, Y, Z the columns of `axes` (the maps' stated reference axes, physical coordinates).
/// Voxels where either angle is NaN/inf get a zero vector ("no fibre", ignored by resample_axes).
/// The names are used in error messages (e.g. the file names of the maps).
VectorVolume fibres_from_angles(const ScalarVolume& azimuth, const ScalarVolume& elevation, AngleUnit unit,
                                const Eigen::Matrix3d& axes, const std::string& azimuth_name = "azimuth map",
                                const std::string& elevation_name = "elevation map");

/// Writers: the format follows the extension; single-file formats only (.nii, .nii.gz, .mha,
/// .nrrd, and .vtk for axis-aligned grids since legacy VTK has no direction matrix).
/// Written to a temporary name with the same extension in the same folder, then renamed,
/// so a killed run never leaves a partial file under the final name. Origin, spacing and
/// direction are preserved (NIfTI stores them in float32: about 1e-7 relative precision).
/// Labels are stored in the smallest of uint8 / int16 / int32 that holds their range.
void write_label_image(const LabelVolume& labels, const std::filesystem::path& file);
void write_scalar_image(const ScalarVolume& values, const std::filesystem::path& file);
/// Vectors are written as stored (physical axes), 3 float components per voxel.
void write_vector_image(const VectorVolume& vectors, const std::filesystem::path& file);

/// Labels as a stack of 2-D slices, `folder`/slice_0000<extension> ... (extension ".tif" or
/// ".png"; uint8 if the labels fit, else uint16), which read_label_image reads back given
/// StackGeometry{spacing, origin} of the grid: slices store neither, nor a direction, so the grid's
/// direction must be the identity and labels within 0..65535. Written into a temporary folder
/// that then replaces `folder` (a killed run leaves no partial stack under the final name); an
/// existing `folder` is replaced only if it holds nothing but slice_* slices.
void write_label_stack(const LabelVolume& labels, const std::filesystem::path& folder, const std::string& extension);

}  // namespace cardio::imaging
