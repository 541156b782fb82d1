// Mesh utilities: boundary faces, enclosed volume, lumped masses, the parallel schedule.
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "cardio/mechanics/trilinear.hpp"
#include "test_support.hpp"

namespace cardio::mechanics {
namespace {

TEST(MeshTest, BlockBoundaryVolumeAndMass) {
  const HexMesh m = make_block({3, 4, 5, 0.5, Eigen::Vector3d(1, -2, 0.5)}, FibreField{});
  EXPECT_EQ(m.n_elements(), 60);
  EXPECT_EQ(m.n_nodes(), 4 * 5 * 6);
  const auto b = boundary_faces(m);
  EXPECT_EQ(b.size(), 2u * (3 * 4 + 4 * 5 + 3 * 5));
  const double V = 1.5 * 2.0 * 2.5;
  EXPECT_NEAR(enclosed_volume(b, m.rest), V, 1e-12);
  EXPECT_NEAR(element_volumes(m, m.rest).sum(), V, 1e-12);
  EXPECT_NEAR(lumped_masses(m, {1.06}).sum(), 1.06 * V, 1e-12);
  // Enclosed volume of an affinely deformed block scales with det F.
  Eigen::Matrix3d F;
  F << 1.1, 0.2, 0, 0, 0.9, 0.1, 0.05, 0, 1.2;
  EXPECT_NEAR(enclosed_volume(b, F * m.rest), F.determinant() * V, 1e-12);
}

// The beat's tissue_volume_mL column takes the boundary's enclosed volume for the sum of the
// element volumes: the interior faces' terms cancel pairwise (each is traversed once each way).
// Checked on warped, non-planar faces, against the exact trilinear volume by 2x2x2 Gauss
// quadrature of det J (exact: det J has degree <= 2 in each natural coordinate).
TEST(MeshTest, BoundaryEnclosedVolumeIsTheSumOfWarpedElementVolumes) {
  const HexMesh m = make_block({4, 3, 5, 1.0, Eigen::Vector3d(40, -60, 25)}, FibreField{});
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> jitter(-0.2, 0.2);
  Eigen::Matrix3Xd x = m.rest;
  for (Eigen::Index i = 0; i < x.cols(); ++i)
    for (int d = 0; d < 3; ++d) x(d, i) += jitter(rng);
  double gauss = 0;
  for (const Hex& h : m.hexes)
    for (int g = 0; g < 8; ++g) gauss += (gather(x, h) * hex_shape_derivatives(hex_gauss_xi(g))).determinant();
  const double by_elements = element_volumes(m, x).sum(), by_boundary = enclosed_volume(boundary_faces(m), x);
  EXPECT_NEAR(by_elements, gauss, 1e-11 * gauss);  // the Gauss weights are 1 on [-1, 1]^3
  EXPECT_NEAR(by_boundary, by_elements, 1e-11 * by_elements);
  EXPECT_GT(std::abs(by_boundary - 60.0), 1e-3);  // the warp did change the volume
}

TEST(MeshTest, ScheduleCoversEveryElementOnceWithoutSharedNodesInAColour) {
  const HexMesh m = make_block({17, 9, 11, 1.0, Eigen::Vector3d::Zero()}, FibreField{});
  const ElementSchedule s = schedule_elements(m);
  std::vector<int> seen(static_cast<std::size_t>(m.n_elements()), 0);
  for (const auto& colour : s.colours) {
    std::set<std::int32_t> nodes;
    for (std::int32_t c : colour) {
      std::set<std::int32_t> chunk_nodes;
      for (std::int32_t e = s.chunk_begin[c]; e < s.chunk_begin[c + 1]; ++e) {
        ++seen[e];
        chunk_nodes.insert(m.hexes[e].begin(), m.hexes[e].end());
      }
      for (std::int32_t n : chunk_nodes)
        EXPECT_TRUE(nodes.insert(n).second) << "node " << n << " in two chunks of a colour";
    }
  }
  for (int k : seen) EXPECT_EQ(k, 1);
  EXPECT_GT(s.chunk_begin.size(), 4u);
}

TEST(MeshTest, FibreFields) {
  FibreField rot;
  rot.kind = FibreField::Kind::rotating;
  rot.axis = Eigen::Vector3d::UnitZ();
  rot.angle_start = -M_PI / 3;
  rot.angle_end = M_PI / 3;
  const HexMesh m = make_block({1, 1, 6, 1.0, Eigen::Vector3d::Zero()}, rot);
  for (std::int64_t e = 0; e < m.n_elements(); ++e) {
    const double t = (e + 0.5) / 6.0;
    const double angle = -M_PI / 3 + t * 2 * M_PI / 3;
    EXPECT_NEAR(m.fibre(0, e), std::cos(angle), 1e-12);
    EXPECT_NEAR(m.fibre(1, e), std::sin(angle), 1e-12);
    EXPECT_NEAR(m.fibre.col(e).dot(m.sheet.col(e)), 0, 1e-12);
  }
  FibreField rnd;
  rnd.kind = FibreField::Kind::random;
  const HexMesh a = make_block({3, 3, 3, 1.0, Eigen::Vector3d::Zero()}, rnd),
                b = make_block({3, 3, 3, 1.0, Eigen::Vector3d::Zero()}, rnd);
  EXPECT_EQ((a.fibre - b.fibre).norm(), 0.0);  // seeded
  EXPECT_GT((a.fibre.col(0) - a.fibre.col(1)).norm(), 1e-3);
}

}  // namespace
}  // namespace cardio::mechanics
