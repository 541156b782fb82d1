#pragma once
/// @file coarse_start.hpp
/// Nested iteration for the quasi-static solve (simulation.initial_guess: coarse_mesh): solve the same
/// config on a mesh of twice the element size first, carry its displacement over to the fine mesh by
/// trilinear interpolation, and start Newton there with the whole load. Newton's iterations far from
/// the solution (the globalisation of the first load step) then run on the cheap mesh; the fine mesh
/// needs only the last, quadratically converging ones (Bank & Rose 1981, SIAM J Numer Anal 18:1;
/// "nested iteration" or full-multigrid continuation).
#include <Eigen/Core>

#include <ostream>

#include "cardio/meshing/voxel_mesh.hpp"
#include "config/mesh_config.hpp"
#include "heart/quasi_static.hpp"

namespace cardio::pipeline {

/// The mesh config `fine` with elements of `element_size` [mm]: the source's voxel_size (phantom,
/// box, surface) or geometry.element_size (image, resampled by the mesh stage).
MeshConfig with_element_size(const MeshConfig& fine, double element_size);

/// The displacement u_coarse of the nodes of `coarse` interpolated at the rest positions of the
/// nodes of `fine`: trilinear in the coarse element that holds each point, or, for a point just
/// outside the coarse mesh (the two fitted surfaces differ), extrapolated from the nearest element.
/// A point more than two coarse voxels from every element gets zero.
Eigen::Matrix3Xd interpolate_displacement(const meshing::VoxelMesh& coarse, const Eigen::Matrix3Xd& u_coarse,
                                          const meshing::VoxelMesh& fine);

/// run_heart_simulation on `fine` (meshed from `mesh_config`), started from the solution of the same
/// simulation on a mesh of twice its element size. summary.json gets `coarse_start`: the coarse mesh's
/// `element_size_mm`, `used` (false: the coarse mesh or its solve failed, and the fine mesh was solved
/// from rest), `element_count`, `iterations` and `seconds`.
HeartRunResult solve_with_coarse_start(const HeartSimulation& sim, const MeshConfig& mesh_config,
                                       const meshing::VoxelMesh& fine, std::ostream* log);

/// The quasi-static solve of a heart config: with simulation.initial_guess: coarse_mesh
/// solve_with_coarse_start, else run_heart_simulation from rest.
HeartRunResult run_quasi_static(const HeartSimulation& sim, const MeshConfig& mesh_config,
                                const meshing::VoxelMesh& mesh, std::ostream* log);

}  // namespace cardio::pipeline
