#pragma once
/// @file image_stack.hpp
/// Stacks of 2-D slices (TIFF, PNG) read as one 3-D label volume: read_label_image and
/// read_image_info (image_io.hpp) take a stack wherever they take a label image file.
/// No Eigen here: the ITK sources include this header (see itk_bridge.hpp).
///
/// A stack is named by a folder that holds .tif, .tiff or .png files (any letter case; hidden
/// files and sub-folders are ignored), or by a glob pattern on the file name (`masks/*.tif`:
/// `*`, `?` and `[...]` as in the shell, in the last path component only; a leading `.` is not
/// matched by a wildcard). All slices are TIFF (.tif/.tiff) or all PNG.
///
/// Slice order: natural order of the file names (natural_less): runs of digits compare as
/// numbers, so slice_2 comes before slice_10. Slice k (from 0) is index k of the third axis; pixel
/// (i, j) of a slice is ITK's index (i along a row, j over the rows, row 0 first in the file).
/// The files carry no reliable 3-D geometry, so the caller gives spacing and origin
/// (StackGeometry) and the direction is the identity.
#include <array>
#include <filesystem>
#include <string>
#include <vector>

namespace cardio::imaging {

/// The 3-D geometry of a stack of slices.
struct StackGeometry {
  std::array<double, 3> spacing_mm{1, 1, 1};  ///< voxel edges along i (in a row), j (over rows), k (over slices)
  std::array<double, 3> origin_mm{0, 0, 0};   ///< centre of pixel (0, 0) of the first slice
};

/// True if `path` names a stack: a folder holding a .tif, .tiff or .png file, or a glob pattern
/// (a path that does not exist and has a wildcard in its file name). False for a file (whatever
/// its name) and for any other folder (e.g. a DICOM series).
bool is_slice_stack(const std::filesystem::path& path);

/// The slice files of a stack, in natural order. cardio::Error naming the stack if it has no
/// slice (an empty folder, a glob that matches nothing), if a wildcard is in a folder name, or if
/// the files are not all TIFF or all PNG (the message names two files of different kinds).
std::vector<std::filesystem::path> stack_slice_files(const std::filesystem::path& folder_or_glob);

/// Natural order of file names: digit runs compare by value ("2" < "10"), other characters by
/// code; names equal that way (e.g. "s01" and "s1") fall back to plain string order.
bool natural_less(const std::string& a, const std::string& b);

}  // namespace cardio::imaging
