// Synchronous activation and activation-time images on the element grid.
#include <gtest/gtest.h>

#include <cmath>

#include "cardio/activation/activation_times.hpp"
#include "cardio/core/error.hpp"
#include "cardio/meshing/boundary.hpp"

namespace cardio::activation {
namespace {

using imaging::RoleVolume;

/// A 6 x 5 x 4 grid whose inner 4 x 3 x 2 voxels are myocardium (label 1, label 3 at k = 2).
meshing::VoxelMesh small_mesh() {
  imaging::Grid g;
  g.size = {6, 5, 4};
  g.spacing = {1.0, 0.8, 1.2};
  g.origin = {10, -4, 7};
  RoleVolume r;
  r.role.grid = r.labels.grid = g;
  r.role.values.assign(std::size_t(g.n_voxels()), RoleVolume::kOutside);
  r.labels.values.assign(std::size_t(g.n_voxels()), 0);
  for (long k = 1; k <= 2; ++k)
    for (long j = 1; j <= 3; ++j)
      for (long i = 1; i <= 4; ++i) {
        r.role.at(i, j, k) = RoleVolume::kMyocardium;
        r.labels.at(i, j, k) = k == 2 ? 3 : 1;
      }
  imaging::VoxelFrames f;
  f.voxels = imaging::voxels_with_role(r, RoleVolume::kMyocardium);
  f.fibre = Eigen::Matrix3Xd::Zero(3, Eigen::Index(f.voxels.size()));
  f.sheet = f.fibre;
  f.fibre.row(0).setOnes();
  f.sheet.row(1).setOnes();
  return meshing::build_voxel_mesh(r, meshing::classify_boundary(r, meshing::BaseSpec{meshing::BaseSpec::Mode::none}),
                                   f, 1.06);
}

imaging::ScalarVolume image_on(const imaging::Grid& g) {
  imaging::ScalarVolume im;
  im.grid = g;
  im.values.resize(std::size_t(g.n_voxels()));
  for (long k = 0; k < g.size[2]; ++k)
    for (long j = 0; j < g.size[1]; ++j)
      for (long i = 0; i < g.size[0]; ++i) im.at(i, j, k) = float(i + 10 * j + 100 * k);
  return im;
}

TEST(ActivationTimes, Synchronous) {
  const meshing::VoxelMesh m = small_mesh();
  const Eigen::VectorXd t = synchronous_activation(m, 4.5);
  ASSERT_EQ(t.size(), 24);
  EXPECT_TRUE((t.array() == 4.5).all());
  EXPECT_THROW(synchronous_activation(m, std::nan("")), Error);
}

TEST(ActivationTimes, FromImageReadsEachElementsVoxel) {
  const meshing::VoxelMesh m = small_mesh();
  imaging::ScalarVolume im = image_on(m.grid);
  im.at(0, 0, 0) = std::nanf("");  // outside the myocardium: ignored
  const Eigen::VectorXd t = activation_from_image(m, im, "act.nii.gz");
  for (std::size_t e = 0; e < m.voxel.size(); ++e) {
    const auto ijk = m.grid.index(m.voxel[e]);
    EXPECT_EQ(t[Eigen::Index(e)], double(ijk[0] + 10 * ijk[1] + 100 * ijk[2]));
  }
}

TEST(ActivationTimes, FromImageErrors) {
  const meshing::VoxelMesh m = small_mesh();
  imaging::Grid other = m.grid;
  other.spacing[1] = 0.9;
  try {
    activation_from_image(m, image_on(other), "act.nii.gz");
    ADD_FAILURE();
  } catch (const Error& e) {
    const std::string w = e.what();
    EXPECT_NE(w.find("act.nii.gz"), std::string::npos) << w;
    EXPECT_NE(w.find("spacing"), std::string::npos) << w;
  }
  other = m.grid;
  other.size[2] = 5;
  try {
    activation_from_image(m, image_on(other), "act.nii.gz");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("size 6x5x5 vs 6x5x4"), std::string::npos) << e.what();
  }
  imaging::ScalarVolume im = image_on(m.grid);
  im.at(3, 2, 1) = std::nanf("");
  im.at(4, 3, 2) = std::numeric_limits<float>::infinity();
  try {
    activation_from_image(m, im, "act.nii.gz");
    ADD_FAILURE();
  } catch (const Error& e) {
    const std::string w = e.what();
    EXPECT_NE(w.find("2 myocardium voxels have no finite time"), std::string::npos) << w;
    EXPECT_NE(w.find("voxel (3, 2, 1)"), std::string::npos) << w;
  }
}

TEST(ActivationTimes, EikonalOnAMeshWithLabels) {
  const meshing::VoxelMesh m = small_mesh();
  const Eigen::VectorXd t = eikonal_activation(m, {PacingSite::at_label(3, 2.0)});
  for (std::size_t e = 0; e < m.voxel.size(); ++e) {
    if (m.label[e] == 3) {
      EXPECT_EQ(t[Eigen::Index(e)], 2.0);
    } else {
      // One layer below (k = 1), 1.2 mm across the fibre (fibres along x): 1.2 / 0.2 = 6 ms.
      EXPECT_NEAR(t[Eigen::Index(e)], 8.0, 1e-12);
    }
  }
}

}  // namespace
}  // namespace cardio::activation
