#include "cardio/fibres/sampling.hpp"

#include <Eigen/Eigenvalues>
#include <cmath>
#include <vector>

#include "cardio/core/error.hpp"
#include "cardio/core/parallel.hpp"

namespace cardio::fibres {
namespace {

Eigen::Vector3d leading_eigenvector(const Eigen::Matrix3d& T) {
  const Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> es(T);
  return es.eigenvectors().col(2);  // eigenvalues ascending
}

// Voxel -> index into `voxels` (ascending linear indices of the myocardium), -1 elsewhere.
std::vector<std::int32_t> slots_of(const imaging::Grid& grid, const std::vector<std::int64_t>& voxels) {
  std::vector<std::int32_t> slot(std::size_t(grid.n_voxels()), -1);
  for (std::size_t k = 0; k < voxels.size(); ++k) slot[std::size_t(voxels[k])] = std::int32_t(k);
  return slot;
}

// visit(k, w) for the myocardium voxels k among the 8 voxel centres around `point`, with their
// trilinear weights w > 0; returns the sum of those weights (0: none around).
template <class Visit>
double visit_corners(const imaging::Grid& grid, const std::vector<std::int32_t>& slot, const Eigen::Vector3d& point,
                     Visit&& visit) {
  const Eigen::Vector3d c = grid.continuous_index(point);
  const Eigen::Vector3d lo = c.array().floor();
  double total = 0;
  for (int corner = 0; corner < 8; ++corner) {
    std::int64_t idx[3];
    double w = 1;
    bool inside = true;
    for (int a = 0; a < 3; ++a) {
      const int bit = (corner >> a) & 1;
      idx[a] = std::int64_t(lo[a]) + bit;
      const double t = c[a] - lo[a];
      w *= bit ? t : 1 - t;
      inside = inside && idx[a] >= 0 && idx[a] < grid.size[std::size_t(a)];
    }
    if (!inside || w <= 0) continue;
    const std::int32_t k = slot[std::size_t(idx[0] + grid.size[0] * (idx[1] + grid.size[1] * idx[2]))];
    if (k < 0) continue;
    visit(k, w);
    total += w;
  }
  return total;
}

}  // namespace

PointFrames interpolate_frames(const imaging::Grid& grid, const imaging::VoxelFrames& frames,
                               const Eigen::Matrix3Xd& points, const std::vector<std::int64_t>& fallback_voxel) {
  CARDIO_CHECK(fallback_voxel.size() == std::size_t(points.cols()), "one fallback voxel per point is needed");
  const std::vector<std::int32_t> slot = slots_of(grid, frames.voxels);
  PointFrames out{Eigen::Matrix3Xd(3, points.cols()), Eigen::Matrix3Xd(3, points.cols())};
  parallel_for(points.cols(), [&](std::int64_t p) {
    Eigen::Matrix3d Tf = Eigen::Matrix3d::Zero(), Ts = Eigen::Matrix3d::Zero();
    const Eigen::Vector3d f_ref = frames.fibre.col(fallback_voxel[std::size_t(p)]);
    const double total = visit_corners(grid, slot, points.col(p), [&](std::int32_t k, double w) {
      const Eigen::Vector3d f = frames.fibre.col(k), s = frames.sheet.col(k);
      Tf += w * f * f.transpose();
      Ts += w * s * s.transpose();
    });
    Eigen::Vector3d f = f_ref, s = frames.sheet.col(fallback_voxel[std::size_t(p)]);
    if (total > 0) {
      f = leading_eigenvector(Tf);
      if (f.dot(f_ref) < 0) f = -f;  // keep the voxel's orientation (the law does not depend on it)
      const Eigen::Matrix3d P = Eigen::Matrix3d::Identity() - f * f.transpose();
      const Eigen::Vector3d s_ref = s;
      s = leading_eigenvector(P * Ts * P);
      s = (s - s.dot(f) * f).normalized();
      if (s.dot(s_ref) < 0) s = -s;
    }
    out.fibre.col(p) = f.normalized();
    out.sheet.col(p) = s;
  });
  return out;
}

PointFrames rule_frames_at(const imaging::Grid& grid, const LdrbFields& fields, const RuleAngles& angles,
                           const Eigen::Matrix3Xd& points, const std::vector<std::int64_t>& fallback_voxel) {
  CARDIO_CHECK(fallback_voxel.size() == std::size_t(points.cols()), "one fallback voxel per point is needed");
  const std::vector<std::int32_t> slot = slots_of(grid, fields.voxels);
  PointFrames out{Eigen::Matrix3Xd(3, points.cols()), Eigen::Matrix3Xd(3, points.cols())};
  parallel_for(points.cols(), [&](std::int64_t p) {
    // The rule's inputs interpolated to the point (weights renormalised over the myocardium
    // voxels around it), then the rule itself: Bayer et al. 2012 evaluated at the point.
    LdrbPoint at;
    const double total = visit_corners(grid, slot, points.col(p), [&](std::int32_t k, double w) {
      const LdrbPoint& v = fields.points[std::size_t(k)];
      at.phi_epi += w * v.phi_epi, at.phi_lv += w * v.phi_lv, at.phi_rv += w * v.phi_rv;
      at.g_ab += w * v.g_ab, at.g_epi += w * v.g_epi, at.g_lv += w * v.g_lv, at.g_rv += w * v.g_rv;
    });
    if (total > 0) {
      at.phi_epi /= total, at.phi_lv /= total, at.phi_rv /= total;
      at.g_ab /= total, at.g_epi /= total, at.g_lv /= total, at.g_rv /= total;
    } else {
      at = fields.points[std::size_t(fallback_voxel[std::size_t(p)])];
    }
    at.position = points.col(p);
    bool degenerate = false;
    const Eigen::Matrix3d frame = ldrb_frame(at, fields, angles, degenerate);
    out.fibre.col(p) = frame.col(0);
    out.sheet.col(p) = frame.col(2);
  });
  return out;
}

}  // namespace cardio::fibres
