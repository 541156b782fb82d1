#include "cardio/mechanics/block.hpp"

#include <Eigen/Geometry>
#include <random>

#include "cardio/core/error.hpp"

namespace cardio::mechanics {
namespace {

// Unit sheet orthogonal to f, closest to the hint (or any orthogonal if the hint is parallel).
Eigen::Vector3d orthogonal_sheet(const Eigen::Vector3d& f, const Eigen::Vector3d& hint) {
  Eigen::Vector3d s = hint - hint.dot(f) * f;
  if (s.norm() < 1e-8) {
    const Eigen::Vector3d alt = std::abs(f.x()) < 0.9 ? Eigen::Vector3d::UnitX() : Eigen::Vector3d::UnitY();
    s = alt - alt.dot(f) * f;
  }
  return s.normalized();
}

}  // namespace

HexMesh make_block(const BlockSpec& b, const FibreField& ff) {
  CARDIO_CHECK(b.nx >= 1 && b.ny >= 1 && b.nz >= 1, "block needs at least one voxel per direction");
  CARDIO_CHECK(b.h > 0, "voxel size must be positive");
  HexMesh m;
  const int nnx = b.nx + 1, nny = b.ny + 1, nnz = b.nz + 1;
  m.rest.resize(3, static_cast<Eigen::Index>(nnx) * nny * nnz);
  for (int k = 0; k < nnz; ++k)
    for (int j = 0; j < nny; ++j)
      for (int i = 0; i < nnx; ++i) m.rest.col(block_node(b, i, j, k)) = b.origin + b.h * Eigen::Vector3d(i, j, k);

  const std::int64_t ne = static_cast<std::int64_t>(b.nx) * b.ny * b.nz;
  m.hexes.resize(static_cast<std::size_t>(ne));
  m.fibre.resize(3, ne);
  m.sheet.resize(3, ne);
  m.material.assign(static_cast<std::size_t>(ne), 0);

  std::mt19937_64 rng(ff.seed);
  std::normal_distribution<double> gauss(0.0, 1.0);
  const Eigen::Vector3d axis = ff.axis.normalized();
  const Eigen::Vector3d extent = b.h * Eigen::Vector3d(b.nx, b.ny, b.nz);
  for (int k = 0; k < b.nz; ++k)
    for (int j = 0; j < b.ny; ++j)
      for (int i = 0; i < b.nx; ++i) {
        const std::int64_t e = i + static_cast<std::int64_t>(b.nx) * (j + static_cast<std::int64_t>(b.ny) * k);
        m.hexes[static_cast<std::size_t>(e)] = {block_node(b, i, j, k),
                                                block_node(b, i + 1, j, k),
                                                block_node(b, i + 1, j + 1, k),
                                                block_node(b, i, j + 1, k),
                                                block_node(b, i, j, k + 1),
                                                block_node(b, i + 1, j, k + 1),
                                                block_node(b, i + 1, j + 1, k + 1),
                                                block_node(b, i, j + 1, k + 1)};
        Eigen::Vector3d f = Eigen::Vector3d::UnitX(), s = Eigen::Vector3d::UnitY();
        switch (ff.kind) {
          case FibreField::Kind::uniform:
            f = ff.direction.normalized();
            s = orthogonal_sheet(f, ff.sheet);
            break;
          case FibreField::Kind::rotating: {
            // Position of the voxel centre along the axis, normalised over the block.
            const Eigen::Vector3d c = b.h * Eigen::Vector3d(i + 0.5, j + 0.5, k + 0.5);
            const double t = c.dot(axis.cwiseAbs()) / extent.dot(axis.cwiseAbs());
            const double angle = ff.angle_start + t * (ff.angle_end - ff.angle_start);
            f = (Eigen::AngleAxisd(angle, axis) * ff.direction.normalized()).normalized();
            s = orthogonal_sheet(f, axis);
            break;
          }
          case FibreField::Kind::random: {
            // Uniform random rotation from a normalised Gaussian quaternion.
            Eigen::Quaterniond q(gauss(rng), gauss(rng), gauss(rng), gauss(rng));
            q.normalize();
            const Eigen::Matrix3d R = q.toRotationMatrix();
            f = R.col(0);
            s = R.col(1);
            break;
          }
        }
        m.fibre.col(e) = f;
        m.sheet.col(e) = s;
      }
  return m;
}

}  // namespace cardio::mechanics
