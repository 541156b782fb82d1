// Voxel meshing: node sharing, exact volumes, oblique grids, tagged surfaces, closed cavities.
#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <cstring>
#include <functional>
#include <iostream>
#include <set>

#include "cardio/core/binary.hpp"
#include "cardio/core/error.hpp"
#include "cardio/mechanics/mesh.hpp"
#include "cardio/meshing/boundary.hpp"
#include "cardio/meshing/boundary_fit.hpp"
#include "cardio/meshing/voxel_mesh.hpp"

namespace cardio::meshing {
namespace {

using imaging::Grid;
using imaging::RoleVolume;

/// Roles from a predicate on voxel indices (role per (i, j, k)); labels = roles.
RoleVolume make_roles(const Grid& g, const std::function<std::uint8_t(long, long, long)>& role_of,
                      std::vector<std::string> cavities = {}) {
  RoleVolume r;
  r.role.grid = g;
  r.labels.grid = g;
  r.role.values.resize(std::size_t(g.n_voxels()));
  r.labels.values.resize(std::size_t(g.n_voxels()));
  for (long k = 0; k < g.size[2]; ++k)
    for (long j = 0; j < g.size[1]; ++j)
      for (long i = 0; i < g.size[0]; ++i) {
        r.role.at(i, j, k) = role_of(i, j, k);
        r.labels.at(i, j, k) = r.role.at(i, j, k);
      }
  r.cavity_names = std::move(cavities);
  return r;
}

imaging::VoxelFrames uniform_frames(const RoleVolume& r) {
  imaging::VoxelFrames f;
  f.voxels = imaging::voxels_with_role(r, RoleVolume::kMyocardium);
  f.fibre = Eigen::Matrix3Xd::Zero(3, Eigen::Index(f.voxels.size()));
  f.sheet = f.fibre;
  f.fibre.row(0).setOnes();
  f.sheet.row(1).setOnes();
  return f;
}

Grid oblique_grid(imaging::Index3 size, Eigen::Vector3d spacing, bool left_handed) {
  Grid g;
  g.size = size;
  g.spacing = spacing;
  g.origin = Eigen::Vector3d(-12.5, 3.0, 40.25);
  g.direction = Eigen::AngleAxisd(0.7, Eigen::Vector3d(1, 2, 3).normalized()).toRotationMatrix();
  if (left_handed) g.direction.col(2) *= -1;  // LPS-style flipped slice axis
  return g;
}

TEST(VoxelMesh, SolidBlockSharesNodesAndHasExactVolume) {
  for (bool left_handed : {false, true}) {
    const Grid g = oblique_grid({5, 4, 3}, {0.7, 0.9, 1.3}, left_handed);
    const RoleVolume roles = make_roles(g, [](long, long, long) { return RoleVolume::kMyocardium; });
    const auto boundary = classify_boundary(roles, BaseSpec{BaseSpec::Mode::none});
    const VoxelMesh m = build_voxel_mesh(roles, boundary, uniform_frames(roles), 1.06);
    EXPECT_EQ(m.mesh.n_elements(), 5 * 4 * 3);
    EXPECT_EQ(m.mesh.n_nodes(), 6 * 5 * 4);  // (nx+1)(ny+1)(nz+1): every interior corner shared
    const double voxel = 0.7 * 0.9 * 1.3;
    for (Eigen::Index e = 0; e < m.volume.size(); ++e) EXPECT_NEAR(m.volume[e], voxel, 1e-12);
    EXPECT_NEAR(m.volume.sum(), 60 * voxel, 1e-11);
    EXPECT_NEAR(m.mass.sum(), 1.06 * 60 * voxel, 1e-11);
    // Outer surface: 2(nx ny + ny nz + nz nx) quads, all epicardium, enclosing the block volume.
    EXPECT_EQ(m.surface_quads.size(), std::size_t(2 * (20 + 12 + 15)));
    EXPECT_NEAR(mechanics::enclosed_volume(m.surface_quads, m.mesh.rest), 60 * voxel, 1e-10);
    // Nodes are voxel corners: node 0's position is half a voxel from voxel 0's centre per axis.
    const Eigen::Vector3d corner = g.point(Eigen::Vector3d(-0.5, -0.5, -0.5));
    EXPECT_NEAR((m.mesh.rest.col(0) - corner).norm(), 0.0, 1e-12);
  }
}

TEST(VoxelMesh, RotatedGridGivesRotatedMesh) {
  Grid g = oblique_grid({4, 3, 5}, {1.0, 1.5, 0.5}, false);
  g.direction.setIdentity();
  const auto shape = [](long i, long j, long k) {
    return std::uint8_t((i + j + k) % 3 != 0 || k == 2 ? RoleVolume::kMyocardium : RoleVolume::kOutside);
  };
  const Eigen::Matrix3d R = Eigen::AngleAxisd(1.1, Eigen::Vector3d(0.3, -1, 0.2).normalized()).toRotationMatrix();
  Grid rotated = g;
  rotated.direction = R;
  rotated.origin = R * g.origin;
  const RoleVolume a = make_roles(g, shape), b = make_roles(rotated, shape);
  const auto none = BaseSpec{BaseSpec::Mode::none};
  const VoxelMesh ma = build_voxel_mesh(a, classify_boundary(a, none), uniform_frames(a), 1.0);
  const VoxelMesh mb = build_voxel_mesh(b, classify_boundary(b, none), uniform_frames(b), 1.0);
  ASSERT_EQ(ma.mesh.hexes, mb.mesh.hexes);
  EXPECT_LT((R * ma.mesh.rest - mb.mesh.rest).cwiseAbs().maxCoeff(), 1e-12);
  EXPECT_NEAR(ma.volume.sum(), mb.volume.sum(), 1e-10);
}

/// A box-shaped ventricle: myocardium shell of thickness 1 voxel around a cavity, open at the top
/// (+k), so the cavity touches the outside there (the "valve" opening).
RoleVolume open_box(const Grid& g) {
  return make_roles(g,
                    [&](long i, long j, long k) {
                      const bool wall = i == 1 || j == 1 || k == 1 || i == g.size[0] - 2 || j == g.size[1] - 2;
                      const bool inside = i >= 1 && j >= 1 && k >= 1 && i <= g.size[0] - 2 && j <= g.size[1] - 2;
                      if (!inside) return RoleVolume::kOutside;
                      return wall ? RoleVolume::kMyocardium : RoleVolume::cavity_role(0);
                    },
                    {"lv"});
}

TEST(VoxelMesh, OpenBoxCavityIsClosedByALidAndHasTheVoxelVolume) {
  for (bool left_handed : {false, true}) {
    const Grid g = oblique_grid({8, 7, 6}, {1.0, 1.2, 0.8}, left_handed);
    const RoleVolume roles = open_box(g);
    const auto boundary = classify_boundary(roles, BaseSpec{});
    // Base plane: the top face of the last layer (k = 5), normal +k.
    EXPECT_LT((boundary.axis.base_normal - g.direction.col(2)).norm(), 1e-12);
    EXPECT_NEAR((boundary.axis.base_point - g.point(Eigen::Vector3d(3.5, 3, 5.5))).dot(g.direction.col(2)), 0, 1e-12);
    // Apex: bottom wall layer (k = 1), nearest the axis.
    EXPECT_EQ(g.index(boundary.axis.apex_voxel)[2], 1);

    const VoxelMesh m = build_voxel_mesh(roles, boundary, uniform_frames(roles), 1.0);
    ASSERT_EQ(m.cavities.size(), 1u);
    const CavitySurface& lv = m.cavities[0];
    EXPECT_EQ(check_closed_surface(lv, m.mesh.rest), "");
    EXPECT_TRUE(lv.has_lid());
    const long n_cavity = 4 * 3 * 4;  // i 2..5, j 2..4, k 2..5
    EXPECT_NEAR(cavity_volume(lv, m.mesh.rest), n_cavity * g.voxel_volume(), 1e-10);
    EXPECT_EQ(lv.rim.size(), std::size_t(2 * (4 + 3)));  // the square rim of the 4 x 3 opening
    // Base faces: the top of the wall ring (k = 5): 6 x 5 ring minus the 4 x 3 opening.
    long base = 0, endo = 0;
    for (auto t : m.surface_tag) {
      base += t == SurfaceTag::kBase;
      endo += t == SurfaceTag::endocardium(0);
    }
    EXPECT_EQ(base, 6 * 5 - 4 * 3);
    EXPECT_EQ(endo, 2 * (4 * 4 + 3 * 4) + 4 * 3);  // side walls + bottom
  }
}

TEST(VoxelMesh, EnclosedCavityNeedsNoLid) {
  const Grid g = oblique_grid({5, 5, 5}, {1, 1, 1}, false);
  const RoleVolume roles =
      make_roles(g,
                 [](long i, long j, long k) {
                   return (i == 2 && j == 2 && k == 2) ? RoleVolume::cavity_role(0) : RoleVolume::kMyocardium;
                 },
                 {"lv"});
  const VoxelMesh m = build_voxel_mesh(roles, classify_boundary(roles, BaseSpec{}), uniform_frames(roles), 1.0);
  ASSERT_EQ(m.cavities.size(), 1u);
  EXPECT_FALSE(m.cavities[0].has_lid());
  EXPECT_EQ(check_closed_surface(m.cavities[0], m.mesh.rest), "");
  EXPECT_NEAR(cavity_volume(m.cavities[0], m.mesh.rest), 1.0, 1e-12);
}

TEST(VoxelMesh, IslandsAreDroppedOrKept) {
  Grid g;
  g.size = {9, 3, 3};
  const auto two_blocks = [](long i, long, long) {
    return (i <= 4 || i >= 7) ? RoleVolume::kMyocardium : RoleVolume::kOutside;
  };
  RoleVolume roles = make_roles(g, two_blocks);
  const IslandReport keep = drop_islands(roles, true);
  EXPECT_EQ(keep.components, 2);
  EXPECT_EQ(keep.dropped_components, 0);
  EXPECT_EQ(keep.kept_voxels, 9 * 7);
  const IslandReport drop = drop_islands(roles, false);
  EXPECT_EQ(drop.dropped_components, 1);
  EXPECT_EQ(drop.dropped_voxels, 2 * 9);
  EXPECT_EQ(long(imaging::voxels_with_role(roles, RoleVolume::kMyocardium).size()), 5 * 9);
}

TEST(VoxelMesh, NoMyocardiumIsAClearError) {
  Grid g;
  g.size = {2, 2, 2};
  const RoleVolume roles = make_roles(g, [](long, long, long) { return RoleVolume::kOutside; });
  try {
    classify_boundary(roles, BaseSpec{});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no myocardium voxel"), std::string::npos);
  }
}

// Snapshots (save_voxel_mesh / load_voxel_mesh, the mesh cache's payload): exact, and checked on load.
template <class A>
void expect_same_bits(const A& a, const A& b, const char* what) {
  ASSERT_EQ(a.rows(), b.rows()) << what;
  ASSERT_EQ(a.cols(), b.cols()) << what;
  EXPECT_EQ(std::memcmp(a.data(), b.data(), std::size_t(a.size()) * sizeof(double)), 0) << what << ": bits differ";
}

/// Every field of two meshes, bit for bit.
void expect_identical(const VoxelMesh& x, const VoxelMesh& y) {
  expect_same_bits(x.mesh.rest, y.mesh.rest, "rest");
  EXPECT_EQ(x.mesh.hexes, y.mesh.hexes);
  expect_same_bits(x.mesh.fibre, y.mesh.fibre, "fibre");
  expect_same_bits(x.mesh.sheet, y.mesh.sheet, "sheet");
  expect_same_bits(x.mesh.sample_fibre, y.mesh.sample_fibre, "sample_fibre");
  expect_same_bits(x.mesh.sample_sheet, y.mesh.sample_sheet, "sample_sheet");
  EXPECT_EQ(x.mesh.material, y.mesh.material);
  EXPECT_EQ(x.label, y.label);
  EXPECT_EQ(x.labels_used, y.labels_used);
  EXPECT_EQ(x.voxel, y.voxel);
  EXPECT_EQ(x.grid.size, y.grid.size);
  expect_same_bits(x.grid.spacing, y.grid.spacing, "grid.spacing");
  expect_same_bits(x.grid.origin, y.grid.origin, "grid.origin");
  expect_same_bits(x.grid.direction, y.grid.direction, "grid.direction");
  expect_same_bits(x.volume, y.volume, "volume");
  expect_same_bits(x.mass, y.mass, "mass");
  EXPECT_EQ(x.surface_quads, y.surface_quads);
  EXPECT_EQ(x.surface_tag, y.surface_tag);
  EXPECT_EQ(x.tag_names, y.tag_names);
  ASSERT_EQ(x.cavities.size(), y.cavities.size());
  for (std::size_t c = 0; c < x.cavities.size(); ++c) {
    EXPECT_EQ(x.cavities[c].name, y.cavities[c].name);
    EXPECT_EQ(x.cavities[c].nodes, y.cavities[c].nodes);
    EXPECT_EQ(x.cavities[c].rim, y.cavities[c].rim);
    EXPECT_EQ(x.cavities[c].triangles, y.cavities[c].triangles);
    EXPECT_EQ(x.cavities[c].n_endocardial_triangles, y.cavities[c].n_endocardial_triangles);
    EXPECT_EQ(x.cavities[c].n_nonmanifold_edges, y.cavities[c].n_nonmanifold_edges);
  }
  expect_same_bits(x.axis.base_point, y.axis.base_point, "axis.base_point");
  expect_same_bits(x.axis.base_normal, y.axis.base_normal, "axis.base_normal");
  expect_same_bits(x.axis.apex, y.axis.apex, "axis.apex");
  EXPECT_EQ(x.axis.apex_voxel, y.axis.apex_voxel);
}

/// The open box on an oblique left-handed grid (cavity with a lid, base, apex), with sample frames
/// of arbitrary bits, so that every field of the mesh is set.
VoxelMesh snapshot_mesh() {
  const Grid g = oblique_grid({8, 7, 6}, {1.0, 1.2, 0.8}, true);
  const RoleVolume roles = open_box(g);
  VoxelMesh m = build_voxel_mesh(roles, classify_boundary(roles, BaseSpec{}), uniform_frames(roles), 1.06);
  m.mesh.sample_fibre = Eigen::Matrix3Xd::Random(3, 8 * m.mesh.n_elements());
  m.mesh.sample_sheet = Eigen::Matrix3Xd::Random(3, 8 * m.mesh.n_elements());
  return m;
}

std::string snapshot_of(const VoxelMesh& m) {
  BinaryWriter w;
  save_voxel_mesh(w, m);
  return w.bytes();
}

TEST(VoxelMeshSnapshot, RoundTripIsExact) {
  const VoxelMesh m = snapshot_mesh();
  ASSERT_EQ(m.cavities.size(), 1u);
  ASSERT_TRUE(m.cavities[0].has_lid());
  ASSERT_GE(m.axis.apex_voxel, 0);
  const std::string bytes = snapshot_of(m);
  BinaryReader r(bytes, "snapshot");
  const VoxelMesh back = load_voxel_mesh(r);
  EXPECT_TRUE(r.at_end());
  expect_identical(m, back);
  EXPECT_EQ(snapshot_of(back), bytes);
}

TEST(VoxelMeshSnapshot, DamagedSnapshotsAreErrors) {
  const VoxelMesh good = snapshot_mesh();
  const std::string bytes = snapshot_of(good);
  for (std::size_t n : {std::size_t(0), std::size_t(9), bytes.size() / 3, bytes.size() - 1}) {
    BinaryReader r(bytes.substr(0, n), "snapshot");
    EXPECT_THROW((void)load_voxel_mesh(r), Error) << "cut to " << n << " bytes";
  }
  // Bytes that read as a mesh but do not make one (a writer bug would give these).
  auto expect_inconsistent = [&](VoxelMesh m, const std::string& problem) {
    BinaryReader r(snapshot_of(m), "snapshot");
    try {
      (void)load_voxel_mesh(r);
      ADD_FAILURE() << "expected: " << problem;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(problem), std::string::npos) << e.what();
    }
  };
  VoxelMesh m = good;
  m.label.pop_back();
  expect_inconsistent(m, "per-element arrays of different lengths");
  m = good;
  m.mesh.hexes[3][5] = std::int32_t(m.mesh.n_nodes());
  expect_inconsistent(m, "element node index out of range");
  m = good;
  m.cavities[0].triangles.back()[1] = -1;
  expect_inconsistent(m, "cavity triangle index out of range");
}

// Boundary fitting (boundary_fit.hpp): a voxelized ball fitted to its sphere. The fitted nodes lie
// on the sphere, the mesh volume approaches the ball's 4/3 pi R^3 far better than the staircase,
// every element stays valid, and the masses follow the new volumes.
TEST(BoundaryFit, VoxelBallIsFittedToItsSphere) {
  const double R = 6.3, h = 1.0;
  Grid g;
  g.size = {15, 15, 15};
  g.spacing = Eigen::Vector3d::Constant(h);
  g.origin = Eigen::Vector3d::Constant(-7.0);  // voxel centres at -7 .. 7
  const RoleVolume roles = make_roles(g, [&](long i, long j, long k) {
    return g.point(i, j, k).norm() <= R ? RoleVolume::kMyocardium : RoleVolume::kOutside;
  });
  VoxelMesh m =
      build_voxel_mesh(roles, classify_boundary(roles, BaseSpec{BaseSpec::Mode::none}), uniform_frames(roles), 1.06);
  const double exact = 4.0 / 3.0 * M_PI * R * R * R;
  const double staircase = m.volume.sum();
  const auto sphere = [&](const Eigen::Vector3d& p) -> Eigen::Vector3d { return R * p.normalized(); };
  const BoundaryFitReport r = fit_boundary(m, {{"epicardium", sphere}}, 1.06);
  EXPECT_GT(r.fitted_nodes, 300);
  EXPECT_GE(r.min_jacobian_ratio, BoundaryFitOptions{}.min_jacobian_ratio);
  EXPECT_GT(r.relaxed_nodes, 0);
  std::set<std::int32_t> surface;
  for (const auto& q : m.surface_quads) surface.insert(q.begin(), q.end());
  std::int64_t on_sphere = 0, near_sphere = 0;
  double worst = 0;
  for (std::int32_t n : surface) {
    const double d = std::abs(m.mesh.rest.col(n).norm() - R);
    on_sphere += d < 1e-9;
    near_sphere += d < 0.1 * h;
    worst = std::max(worst, d);
  }
  std::cout << surface.size() << " surface nodes: " << on_sphere << " exactly on the sphere, " << near_sphere
            << " within 0.1 h, farthest " << worst << " mm\n";
  // Measured: 55 % of the surface nodes within 0.1 h, the farthest at 0.38 h (staircase: up to 0.87 h);
  // the rest were held back to keep convex staircase corners valid.
  EXPECT_GT(double(near_sphere), 0.5 * double(surface.size()));
  EXPECT_LT(worst, 0.5 * h);
  const double fitted = m.volume.sum();
  std::cout << "ball R = " << R << " mm at h = " << h << " mm: staircase " << staircase << ", fitted " << fitted
            << ", exact " << exact << " mm^3; " << r.limited_elements << " elements limited\n";
  EXPECT_LT(std::abs(fitted - exact), 0.5 * std::abs(staircase - exact));
  EXPECT_LT(std::abs(fitted - exact) / exact, 0.015);
  EXPECT_NEAR(m.mass.sum(), 1.06 * fitted, 1e-9 * fitted);
  for (std::int64_t e = 0; e < m.mesh.n_elements(); ++e)
    EXPECT_GT(mechanics::min_corner_jacobian(mechanics::gather(m.mesh.rest, m.mesh.hexes[std::size_t(e)])), 0);
}

TEST(VoxelMesh, LatticePositionsAreTheBuiltNodesAndStayWhenTheNodesMove) {
  for (const bool left_handed : {false, true}) {  // the k offsets are mirrored on left-handed grids
    const Grid g = oblique_grid({8, 7, 6}, {1.0, 1.2, 0.8}, left_handed);
    const RoleVolume roles = open_box(g);
    VoxelMesh m = build_voxel_mesh(roles, classify_boundary(roles, BaseSpec{}), uniform_frames(roles), 1.06);
    const Eigen::Matrix3Xd built = m.mesh.rest;
    EXPECT_LT((lattice_positions(m) - built).cwiseAbs().maxCoeff(), 1e-12) << "left-handed " << left_handed;
    m.mesh.rest.array() += 0.3;  // a boundary fit or an unloading moves the nodes, not the lattice
    EXPECT_LT((lattice_positions(m) - built).cwiseAbs().maxCoeff(), 1e-12) << "left-handed " << left_handed;
  }
}

}  // namespace
}  // namespace cardio::meshing
