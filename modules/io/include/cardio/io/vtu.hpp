#pragma once
/// @file vtu.hpp
/// Write a hexahedral mesh state as a VTK XML unstructured grid (.vtu) for ParaView.
/// Points are the rest positions [mm]; point data `displacement` [mm] (use ParaView's
/// "Warp By Vector" to see the deformed shape), optional `velocity` [mm/ms]; cell data
/// `fibre`, `sheet`, `material`. Written atomically.
#include <Eigen/Core>
#include <filesystem>
#include <string>
#include <vector>

#include "cardio/mechanics/mesh.hpp"

namespace cardio::io {

struct PointField {
  std::string name;           ///< e.g. "velocity_mm_per_ms"
  Eigen::Matrix3Xd values;    ///< 3 x n_nodes
};

void write_vtu(const std::filesystem::path& file, const mechanics::HexMesh& mesh, const Eigen::Matrix3Xd& x,
               const std::vector<PointField>& extra_point_fields = {});

}  // namespace cardio::io
