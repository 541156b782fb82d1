#include "cardio/analysis/wall.hpp"

#include <algorithm>
#include <bit>
#include <map>
#include <vector>

#include "cardio/core/error.hpp"
#include "cardio/meshing/boundary.hpp"
#include "cardio/surfaces/projection.hpp"

namespace cardio::analysis {
namespace {

using meshing::SurfaceTag;

/// The quads of the wall tags other than `tag` (and other than the base), as triangles at x.
surfaces::TriangleSurface opposite_wall(const meshing::VoxelMesh& m, const Eigen::Matrix3Xd& x, std::uint8_t tag) {
  surfaces::TriangleSurface s;
  s.points.resize(std::size_t(x.cols()));
  for (Eigen::Index i = 0; i < x.cols(); ++i) s.points[std::size_t(i)] = x.col(i);
  for (std::size_t q = 0; q < m.surface_quads.size(); ++q) {
    const std::uint8_t t = m.surface_tag[q];
    const bool opposite =
        tag == SurfaceTag::kEpicardium ? t >= SurfaceTag::kFirstEndocardium : t != tag && t != SurfaceTag::kBase;
    if (!opposite) continue;
    const auto& v = m.surface_quads[q];
    s.triangles.push_back({v[0], v[1], v[2]});
    s.triangles.push_back({v[0], v[2], v[3]});
  }
  return s;
}

}  // namespace

double mean_wall_thickness(const meshing::VoxelMesh& m, const Eigen::Matrix3Xd& x) {
  // Wall tags of every node; base nodes are marked to be left out.
  std::vector<std::uint32_t> tags(std::size_t(x.cols()), 0);
  for (std::size_t q = 0; q < m.surface_quads.size(); ++q)
    for (std::int32_t n : m.surface_quads[q]) tags[std::size_t(n)] |= 1u << m.surface_tag[q];
  const std::uint32_t base_bit = 1u << SurfaceTag::kBase;
  std::map<std::uint8_t, std::vector<std::int64_t>> nodes_of;  // wall tag -> its nodes on that wall only
  for (std::size_t i = 0; i < tags.size(); ++i) {
    const std::uint32_t t = tags[i];
    if (t == 0 || (t & base_bit) || (t & (t - 1)) != 0) continue;
    nodes_of[std::uint8_t(std::countr_zero(t))].push_back(std::int64_t(i));
  }
  const bool has_endo = std::any_of(nodes_of.begin(), nodes_of.end(),
                                    [](const auto& kv) { return kv.first >= SurfaceTag::kFirstEndocardium; });
  CARDIO_CHECK(nodes_of.count(SurfaceTag::kEpicardium) && has_endo,
               "wall thickness: the mesh needs epicardial and endocardial nodes off the base");
  double sum = 0;
  std::int64_t count = 0;
  for (const auto& [tag, nodes] : nodes_of) {
    const auto project = surfaces::closest_point_projector(opposite_wall(m, x, tag));
    for (std::int64_t i : nodes) sum += (project(x.col(i)) - x.col(i)).norm();
    count += std::int64_t(nodes.size());
  }
  return sum / double(count);
}

}  // namespace cardio::analysis
