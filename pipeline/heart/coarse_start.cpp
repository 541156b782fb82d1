#include "heart/coarse_start.hpp"

#include <optional>

#include "cardio/core/error.hpp"
#include "cardio/core/parallel.hpp"
#include "cardio/mechanics/mesh.hpp"
#include "heart/guess_smoothing.hpp"
#include "heart/rest_location.hpp"
#include "mesh/mesh_stage.hpp"

namespace cardio::pipeline {

MeshConfig with_element_size(const MeshConfig& fine, double element_size) {
  MeshConfig c = fine;
  GeometryParams& g = c.geometry;
  switch (g.source) {
    case GeometrySource::phantom:
      g.phantom.voxel_size = element_size;
      break;
    case GeometrySource::box:
      g.box.voxel_size = element_size;
      break;
    case GeometrySource::surface:
      g.surface.voxel_size = element_size;
      break;
    case GeometrySource::image:
      g.element_size = element_size;
      break;
  }
  c.write_surfaces = false;
  c.draw_figures = false;
  return c;
}

Eigen::Matrix3Xd interpolate_displacement(const meshing::VoxelMesh& coarse, const Eigen::Matrix3Xd& u_coarse,
                                          const meshing::VoxelMesh& fine) {
  Eigen::Matrix3Xd u = Eigen::Matrix3Xd::Zero(3, fine.mesh.n_nodes());
  parallel_for(fine.mesh.n_nodes(), [&](std::int64_t n) {
    const RestLocation at = nearest_element(coarse, fine.mesh.rest.col(n), 2);
    if (at.element >= 0) u.col(n) = interpolate_in_element(coarse, at.element, at.xi, u_coarse);
  });
  unfold_inverted_elements(fine.mesh, u);
  return u;
}

HeartRunResult solve_with_coarse_start(const HeartSimulation& sim, const MeshConfig& mesh_config,
                                       const meshing::VoxelMesh& fine, std::ostream* log) {
  const double coarse_size = 2 * fine.grid.spacing.maxCoeff();
  if (log) *log << "coarse-mesh start: meshing and solving at " << coarse_size << " mm first" << std::endl;
  std::optional<MeshStageResult> coarse;
  std::optional<HeartRunResult> c;
  try {
    coarse = run_mesh_stages(with_element_size(mesh_config, coarse_size), nullptr);
    c = run_heart_simulation(sim, coarse->mesh, log);
  } catch (const Error& e) {  // e.g. walls too thin for the coarse voxels: the start is only an aid
    if (log) *log << "coarse-mesh start: not available (" << e.what() << "); solving from rest" << std::endl;
    HeartRunResult out = run_heart_simulation(sim, fine, log);
    out.summary["coarse_start"] = {{"element_size_mm", coarse_size}, {"used", false}};
    return out;
  }
  const Eigen::Matrix3Xd guess =
      fine.mesh.rest + interpolate_displacement(coarse->mesh, c->state.x - coarse->mesh.mesh.rest, fine);
  if (log) *log << "coarse-mesh start: solving at " << fine.grid.spacing.maxCoeff() << " mm" << std::endl;
  HeartRunResult out = run_heart_simulation(sim, fine, log, &guess);
  out.summary["coarse_start"] = {{"element_size_mm", coarse_size},
                                 {"used", true},
                                 {"element_count", coarse->mesh.mesh.n_elements()},
                                 {"iterations", c->summary["iterations"]},
                                 {"seconds", c->summary["simulate_time_s"]}};
  return out;
}

HeartRunResult run_quasi_static(const HeartSimulation& sim, const MeshConfig& mesh_config,
                                const meshing::VoxelMesh& mesh, std::ostream* log) {
  return sim.coarse_start ? solve_with_coarse_start(sim, mesh_config, mesh, log) : run_heart_simulation(sim, mesh, log);
}

}  // namespace cardio::pipeline
