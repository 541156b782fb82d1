#pragma once
/// @file vtu.hpp
/// Hexahedral meshes as VTK XML unstructured grids (.vtu) for ParaView, written atomically.
/// write_vtu writes a simulation state: points are the rest positions [mm], point data
/// `displacement` [mm] (ParaView's "Warp By Vector" shows the deformed shape), cell data `fibre`,
/// `sheet`, `material`, plus any extra fields. write_mesh_vtu writes a mesh with given fields only.
#include <Eigen/Core>
#include <filesystem>
#include <string>
#include <vector>

#include "cardio/mechanics/mesh.hpp"

namespace cardio::io {

/// A named array: one column per point or cell, one row per component (1 = scalar, 3 = vector,
/// 9 = tensor). Integer-valued fields may set `integer` to be stored as Int32. The unit belongs in
/// the name where there is one (e.g. "velocity_mm_per_ms"), or in a `units` field-data entry.
struct Field {
  std::string name;
  Eigen::MatrixXd values;
  bool integer = false;
};
using PointField = Field;

/// How a file stores its arrays. `full`: points and fields in double precision, zlib-compressed
/// (meshes, final states). `frame`: a frame of a time series, for viewing: single precision (7
/// significant digits, half the bytes) and LZ4, which compresses several times faster than zlib;
/// frames are written beside the time loop and compete with it for the cores.
enum class Storage { full, frame };

void write_vtu(const std::filesystem::path& file, const mechanics::HexMesh& mesh, const Eigen::Matrix3Xd& x,
               const std::vector<Field>& extra_point_fields = {}, const std::vector<Field>& extra_cell_fields = {},
               Storage storage = Storage::full);

/// Strings stored as VTK field data (whole-dataset metadata: tag names, units of the fields).
struct FieldStrings {
  std::string name;
  std::vector<std::string> values;
};

/// The mesh at its rest positions with exactly the given point and cell fields.
void write_mesh_vtu(const std::filesystem::path& file, const mechanics::HexMesh& mesh,
                    const std::vector<Field>& point_fields, const std::vector<Field>& cell_fields,
                    const std::vector<FieldStrings>& field_data = {});

/// A polygonal surface (.vtp): points [mm] (3 x n), polygons as point-index lists (triangles or
/// quads), cell fields, and string field data (e.g. the names of tag values).
void write_vtp(const std::filesystem::path& file, const Eigen::Matrix3Xd& points,
               const std::vector<std::vector<std::int64_t>>& polygons, const std::vector<Field>& cell_fields,
               const std::vector<FieldStrings>& field_data = {});

}  // namespace cardio::io
