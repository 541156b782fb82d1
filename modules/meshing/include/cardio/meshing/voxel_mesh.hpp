#pragma once
/// @file voxel_mesh.hpp
/// Myocardium voxels -> 8-node hexahedra sharing nodes, in physical space, with per-element label,
/// frame and rest volume, lumped nodal masses, tagged boundary quads and, per cavity, a closed
/// triangulated surface (endocardium + a lid over the opening) whose volume is the cavity volume.
#include <Eigen/Core>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "cardio/imaging/volume.hpp"
#include "cardio/mechanics/mesh.hpp"
#include "cardio/meshing/boundary.hpp"

namespace cardio {
class BinaryWriter;
class BinaryReader;
}  // namespace cardio

namespace cardio::meshing {

/// Closed, consistently oriented (normals out of the blood pool) triangulated cavity surface.
/// Surface points 0..nodes.size()-1 are mesh nodes; if the endocardium is open (it usually is, at
/// the base), one more point, the lid centre = mean of the rim nodes, closes it with a fan of
/// triangles over the rim. The lid therefore moves with the rim and needs no nodes of its own.
struct CavitySurface {
  std::string name;
  std::vector<std::int32_t> nodes;                     ///< mesh node ids of the surface points
  std::vector<std::int32_t> rim;                       ///< indices into `nodes` of the rim (lid boundary)
  std::vector<std::array<std::int32_t, 3>> triangles;  ///< point indices; first the endocardium, then the lid
  std::int64_t n_endocardial_triangles = 0;
  std::int64_t n_nonmanifold_edges = 0;  ///< edges in more than two triangles (voxel staircase)

  bool has_lid() const { return !rim.empty(); }
  std::int32_t lid_centre() const { return static_cast<std::int32_t>(nodes.size()); }
};

/// Positions of a cavity surface's points (mesh nodes, then the lid centre if any) [mm].
Eigen::Matrix3Xd surface_points(const CavitySurface& cavity, const Eigen::Matrix3Xd& x);

/// Enclosed volume [mm^3]: V = 1/6 sum over triangles of x0 . (x1 x x2) (Promayon et al. 1996).
double cavity_volume(const CavitySurface& cavity, const Eigen::Matrix3Xd& x);

/// Closedness and orientation check: every directed edge matched by its reverse. Returns an
/// empty string if the surface is closed and oriented with positive volume, else the problem.
std::string check_closed_surface(const CavitySurface& cavity, const Eigen::Matrix3Xd& x);

struct IslandReport {
  std::int64_t components = 0;  ///< face-connected myocardium components found
  std::int64_t dropped_components = 0;
  std::int64_t dropped_voxels = 0;
  std::int64_t kept_voxels = 0;
};

/// Find the face-connected (6-neighbour) components of the myocardium. Unless `keep`, every
/// component but the largest is set to outside in `roles` (disconnected islands float freely in
/// a simulation). Deterministic (components in voxel order; ties to the first).
IslandReport drop_islands(imaging::RoleVolume& roles, bool keep);

/// A voxel hexahedral mesh and everything the model stage needs from the image.
struct VoxelMesh {
  mechanics::HexMesh mesh;                ///< nodes [mm], hexes, frames; material = index into labels_used
  std::vector<std::int32_t> label;        ///< per element: the image label
  std::vector<std::int32_t> labels_used;  ///< sorted distinct myocardium labels (material index -> label)
  std::vector<std::int64_t> voxel;        ///< per element: linear voxel index in `grid`
  imaging::Grid grid;
  Eigen::VectorXd volume;                      ///< per element rest volume [mm^3]
  Eigen::VectorXd mass;                        ///< per node lumped mass [mg]
  std::vector<mechanics::Quad> surface_quads;  ///< boundary faces, outward (right-hand rule)
  std::vector<std::uint8_t> surface_tag;       ///< SurfaceTag per quad
  std::vector<std::string> tag_names;
  std::vector<CavitySurface> cavities;
  LongAxis axis;
};

/// The nodes' positions on the voxel lattice [mm]: the corners of the grid's voxels, as the mesh
/// was built before any boundary fit or unloading moved them. The same for every mesh built on the
/// same voxels, so geometry found on it agrees with the grid the eikonal activation runs on.
Eigen::Matrix3Xd lattice_positions(const VoxelMesh& m);

/// Build the mesh. `frames` must hold one frame per myocardium voxel of `roles` (same ascending
/// voxel order); density [mg/mm^3] gives the lumped masses.
VoxelMesh build_voxel_mesh(const imaging::RoleVolume& roles, const BoundaryClassification& boundary,
                           const imaging::VoxelFrames& frames, double density);

/// Append every field of `m` to `w` with exact bits (cardio/core/binary.hpp: the host's byte
/// order; matrices as rows, cols and column-major values; vectors and strings as count +
/// elements), in declaration order. A snapshot for caches, not an exchange format.
void save_voxel_mesh(BinaryWriter& w, const VoxelMesh& m);

/// Read what save_voxel_mesh wrote. Throws cardio::Error if the bytes run short, a matrix has the
/// wrong shape, or the mesh is inconsistent (arrays of different lengths, an index out of range):
/// a damaged snapshot is never half-loaded (src/voxel_mesh_io.cpp).
VoxelMesh load_voxel_mesh(BinaryReader& r);

/// Rough bytes needed per element to mesh and simulate (mesh + solver state), for a memory check
/// before anything large is allocated.
constexpr std::uint64_t kBytesPerElementEstimate = 1024;

}  // namespace cardio::meshing
