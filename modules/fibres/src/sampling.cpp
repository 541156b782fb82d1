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

}  // namespace

PointFrames interpolate_frames(const imaging::Grid& grid, const imaging::VoxelFrames& frames,
                               const Eigen::Matrix3Xd& points, const std::vector<std::int64_t>& fallback_voxel) {
  CARDIO_CHECK(fallback_voxel.size() == std::size_t(points.cols()), "one fallback voxel per point is needed");
  // Voxel -> frame index (-1: not myocardium).
  std::vector<std::int32_t> slot(std::size_t(grid.n_voxels()), -1);
  for (std::size_t k = 0; k < frames.voxels.size(); ++k) slot[std::size_t(frames.voxels[k])] = std::int32_t(k);
  PointFrames out{Eigen::Matrix3Xd(3, points.cols()), Eigen::Matrix3Xd(3, points.cols())};
  parallel_for(points.cols(), [&](std::int64_t p) {
    const Eigen::Vector3d c = grid.continuous_index(points.col(p));
    const Eigen::Vector3d lo = c.array().floor();
    Eigen::Matrix3d Tf = Eigen::Matrix3d::Zero(), Ts = Eigen::Matrix3d::Zero();
    double total = 0;
    Eigen::Vector3d f_ref = frames.fibre.col(fallback_voxel[std::size_t(p)]);
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
      const Eigen::Vector3d f = frames.fibre.col(k), s = frames.sheet.col(k);
      Tf += w * f * f.transpose();
      Ts += w * s * s.transpose();
      total += w;
    }
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

}  // namespace cardio::fibres
