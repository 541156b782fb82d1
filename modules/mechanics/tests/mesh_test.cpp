// Mesh utilities: boundary faces, enclosed volume, lumped masses, the parallel schedule.
#include <gtest/gtest.h>

#include <set>

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
