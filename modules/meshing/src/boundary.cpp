#include "cardio/meshing/boundary.hpp"

#include <Eigen/Eigenvalues>
#include <cmath>
#include <limits>

#include "cardio/core/error.hpp"

namespace cardio::meshing {
namespace {

using imaging::Grid;
using imaging::RoleVolume;

/// Role of the neighbour across `side`, outside if beyond the grid border.
std::uint8_t neighbour_role(const RoleVolume& roles, const imaging::Index3& ijk, VoxelSide side) {
  imaging::Index3 n = ijk;
  n[side / 2] += (side % 2) ? 1 : -1;
  const Grid& g = roles.role.grid;
  if (!g.contains(n[0], n[1], n[2])) return RoleVolume::kOutside;
  return roles.role.at(n[0], n[1], n[2]);
}

Eigen::Vector3d face_centre(const Grid& g, const imaging::Index3& ijk, VoxelSide side) {
  Eigen::Vector3d c{double(ijk[0]), double(ijk[1]), double(ijk[2])};
  c[side / 2] += (side % 2) ? 0.5 : -0.5;
  return g.point(c);
}

bool is_cavity(std::uint8_t role) { return role >= RoleVolume::kFirstCavity; }

/// Automatic base plane: the cavities' openings (cavity faces that touch the outside).
bool base_from_openings(const RoleVolume& roles, Eigen::Vector3d& point, Eigen::Vector3d& normal) {
  const Grid& g = roles.role.grid;
  Eigen::Vector3d sum_point = Eigen::Vector3d::Zero(), sum_normal = Eigen::Vector3d::Zero();
  std::int64_t n = 0;
  for (std::int64_t v = 0; v < g.n_voxels(); ++v) {
    if (!is_cavity(roles.role.values[static_cast<std::size_t>(v)])) continue;
    const imaging::Index3 ijk = g.index(v);
    for (VoxelSide s = 0; s < 6; ++s) {
      if (neighbour_role(roles, ijk, s) != RoleVolume::kOutside) continue;
      sum_point += face_centre(g, ijk, s);
      sum_normal += side_normal(g, s);
      ++n;
    }
  }
  if (n == 0 || sum_normal.norm() < 1e-9 * double(n)) return false;
  point = sum_point / double(n);
  normal = sum_normal.normalized();
  return true;
}

/// Fallback long axis when there is no base: the principal axis of the myocardium (largest
/// spread), oriented arbitrarily but deterministically (positive largest component).
void principal_axis(const RoleVolume& roles, Eigen::Vector3d& point, Eigen::Vector3d& normal) {
  const Grid& g = roles.role.grid;
  Eigen::Vector3d mean = Eigen::Vector3d::Zero();
  Eigen::Matrix3d second = Eigen::Matrix3d::Zero();
  std::int64_t n = 0;
  for (std::int64_t v = 0; v < g.n_voxels(); ++v) {
    if (roles.role.values[static_cast<std::size_t>(v)] != RoleVolume::kMyocardium) continue;
    const imaging::Index3 ijk = g.index(v);
    const Eigen::Vector3d x = g.point(ijk[0], ijk[1], ijk[2]);
    mean += x;
    second += x * x.transpose();
    ++n;
  }
  mean /= double(n);
  const Eigen::Matrix3d cov = second / double(n) - mean * mean.transpose();
  Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> eig(cov);
  normal = eig.eigenvectors().col(2);
  Eigen::Index largest;
  normal.cwiseAbs().maxCoeff(&largest);
  if (normal[largest] < 0) normal = -normal;
  point = mean;
}

}  // namespace

Eigen::Vector3d side_normal(const Grid& grid, VoxelSide side) {
  const Eigen::Vector3d axis = grid.direction.col(side / 2);
  return (side % 2) ? axis : Eigen::Vector3d(-axis);
}

BoundaryClassification classify_boundary(const RoleVolume& roles, const BaseSpec& base) {
  const Grid& g = roles.role.grid;
  CARDIO_CHECK(static_cast<std::int64_t>(roles.role.values.size()) == g.n_voxels(), "role volume size mismatch");

  BoundaryClassification out;
  out.tag_names = {"epicardium", "base"};
  for (const auto& name : roles.cavity_names) out.tag_names.push_back("endocardium_" + name);

  bool has_base = false;
  LongAxis& axis = out.axis;
  if (base.mode == BaseSpec::Mode::plane) {
    CARDIO_CHECK(base.normal.norm() > 0, "base plane normal must be non-zero");
    axis.base_point = base.point;
    axis.base_normal = base.normal.normalized();
    has_base = true;
  } else if (base.mode == BaseSpec::Mode::automatic) {
    has_base = base_from_openings(roles, axis.base_point, axis.base_normal);
  }

  // Default 3/4 of a voxel: faces on the plane's staircase are at most ~h/2 away for a plane oblique
  // to the grid, while epicardial faces one voxel layer below a grid-aligned plane (exactly h) stay out.
  const double tolerance = base.tolerance > 0 ? base.tolerance : 0.75 * g.spacing.maxCoeff();
  std::int64_t n_myocardium = 0;
  for (std::int64_t v = 0; v < g.n_voxels(); ++v) {
    if (roles.role.values[static_cast<std::size_t>(v)] != RoleVolume::kMyocardium) continue;
    ++n_myocardium;
    const imaging::Index3 ijk = g.index(v);
    for (VoxelSide s = 0; s < 6; ++s) {
      const std::uint8_t r = neighbour_role(roles, ijk, s);
      if (r == RoleVolume::kMyocardium) continue;
      std::uint8_t tag = SurfaceTag::kEpicardium;
      if (is_cavity(r)) {
        tag = SurfaceTag::endocardium(r - RoleVolume::kFirstCavity);
      } else if (has_base) {
        const double distance = std::abs((face_centre(g, ijk, s) - axis.base_point).dot(axis.base_normal));
        if (distance <= tolerance && side_normal(g, s).dot(axis.base_normal) > 1e-9) tag = SurfaceTag::kBase;
      }
      out.faces.push_back({v, s, tag});
    }
  }
  if (n_myocardium == 0) CARDIO_FAIL("no myocardium voxel: the label image has no voxel with a myocardium label");

  if (!has_base) principal_axis(roles, axis.base_point, axis.base_normal);

  // Apex: the myocardium voxel farthest below the base plane; ties (within 1e-6 of a voxel) go to
  // the one nearest the axis line through the base point, then to the lowest index.
  const double tie = 1e-6 * g.spacing.minCoeff();
  double best_height = std::numeric_limits<double>::infinity(), best_radius = 0;
  for (std::int64_t v = 0; v < g.n_voxels(); ++v) {
    if (roles.role.values[static_cast<std::size_t>(v)] != RoleVolume::kMyocardium) continue;
    const imaging::Index3 ijk = g.index(v);
    const Eigen::Vector3d d = g.point(ijk[0], ijk[1], ijk[2]) - axis.base_point;
    const double height = d.dot(axis.base_normal);
    const double radius = (d - height * axis.base_normal).norm();
    if (height < best_height - tie || (height <= best_height + tie && radius < best_radius - tie)) {
      best_height = height;
      best_radius = radius;
      axis.apex_voxel = v;
    }
  }
  const imaging::Index3 a = g.index(axis.apex_voxel);
  axis.apex = g.point(a[0], a[1], a[2]);
  return out;
}

}  // namespace cardio::meshing
