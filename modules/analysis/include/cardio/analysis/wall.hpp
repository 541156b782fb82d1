#pragma once
/// @file wall.hpp
/// Wall thickness of a voxel heart from its boundary surfaces (docs/analysis.md, "Wall thickness").
#include <Eigen/Core>

#include "cardio/meshing/voxel_mesh.hpp"

namespace cardio::analysis {

/// Mean wall thickness [mm] at node positions x (3 x n_nodes): for every node of a wall surface
/// (the epicardium or an endocardium), the distance to the closest point of the opposite wall
/// surfaces: the endocardia for an epicardial node; the epicardium and the other endocardia (across
/// the septum) for an endocardial node. Nodes on the base or on two wall surfaces (a one-voxel wall)
/// are left out. The mean over those nodes. Unlike tissue volume over surface area, it does not
/// grow less when the surfaces are rough (a voxel or partly fitted boundary has more area than the
/// smooth wall). Throws cardio::Error if the mesh has no epicardial or no endocardial node.
double mean_wall_thickness(const meshing::VoxelMesh& m, const Eigen::Matrix3Xd& x);

}  // namespace cardio::analysis
