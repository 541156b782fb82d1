#pragma once
/// @file vti_reader.hpp (private)
/// VTK XML image data (.vti) through VTK's vtkXMLImageDataReader: ITK 5.2's VTKImageIO reads only
/// legacy .vtk. The voxel values are the point data's scalars (VTK's image points are the voxel
/// centres); origin, spacing and direction come from the file (an extent that does not start at 0
/// moves the origin to its first point). Uses VTK, not ITK, so it may share a unit with Eigen.
#include <filesystem>
#include <string>

#include "itk_bridge.hpp"

namespace cardio::imaging::vti {

/// The geometry and the voxel array's type (the active point scalars, or the only point array;
/// an error names the arrays if there is no such choice). Reads one voxel, not the whole file.
itk_bridge::Header read_header(const std::filesystem::path& file, const std::string& what);

/// The voxel array, as the header says (i fastest).
itk_bridge::Pixels read_pixels(const std::filesystem::path& file, const itk_bridge::Header& header,
                               const std::string& what);

}  // namespace cardio::imaging::vti
