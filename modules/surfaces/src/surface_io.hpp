#pragma once
/// @file surface_io.hpp
/// Reading surface files into classified triangle meshes (internal to surfaces): VTK reads, splits
/// polygons into triangles and merges points; errors name the file.
#include <vtkPolyData.h>
#include <vtkSmartPointer.h>

#include <filesystem>
#include <string>
#include <vector>

#include "triangle_mesh.hpp"

namespace cardio::surfaces::detail {

/// The surface of `file` (.vtp, legacy .vtk polydata, .stl, .ply by extension) with its polygons and
/// strips split into triangles (vertices and lines dropped). Throws cardio::Error naming the file
/// for a missing, empty, unreadable or triangle-less file.
vtkSmartPointer<vtkPolyData> read_triangles(const std::filesystem::path& file);

/// Per-triangle class from the point or cell array `array` (cell data preferred; a triangle whose
/// three point classes differ gets kNoPatch), or an empty vector if the array is absent. Throws
/// for a multi-component array or a non-integer value.
std::vector<int> triangle_classes(vtkPolyData* tri, const std::string& array, const std::filesystem::path& file);

/// "point arrays: a, b; cell arrays: none", for messages.
std::string array_names(vtkPolyData* pd);

std::string lower(std::string s);

/// The triangles of `tri` with class `cls[t]` each, on all of its points.
TriangleMesh to_mesh(vtkPolyData* tri, const std::vector<int>& cls);

/// `m` with points closer than `tolerance` [mm] merged (vtkCleanPolyData, absolute tolerance; exact
/// duplicates always merge) and unused points dropped; triangles that collapse are dropped. Adds the
/// number of used points removed to `merged_points`.
TriangleMesh merge_points(const TriangleMesh& m, double tolerance, std::int64_t& merged_points);

}  // namespace cardio::surfaces::detail
