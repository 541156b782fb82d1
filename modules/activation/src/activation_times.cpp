#include "cardio/activation/activation_times.hpp"

#include <cmath>

#include "cardio/core/error.hpp"
#include "cardio/core/parallel.hpp"

namespace cardio::activation {

Eigen::VectorXd synchronous_activation(const meshing::VoxelMesh& mesh, double time_ms) {
  if (!std::isfinite(time_ms)) CARDIO_FAIL("synchronous activation time " << time_ms << " ms is not finite");
  return Eigen::VectorXd::Constant(Eigen::Index(mesh.voxel.size()), time_ms);
}

Eigen::VectorXd activation_from_image(const meshing::VoxelMesh& mesh, const imaging::ScalarVolume& image,
                                      std::string_view source) {
  std::string why;
  if (!imaging::same_grid(image.grid, mesh.grid, &why))
    CARDIO_FAIL("activation-time image " << source << " is not on the element grid: " << why
                                         << " (image vs elements); resample it to the mesh's element grid");
  CARDIO_CHECK(std::int64_t(image.values.size()) == image.grid.n_voxels(),
               "activation-time image " << source << " holds " << image.values.size() << " values for "
                                        << image.grid.n_voxels() << " voxels");
  const auto n = static_cast<std::int64_t>(mesh.voxel.size());
  Eigen::VectorXd t(n);
  parallel_for(n, [&](std::int64_t e) { t[e] = double(image.values[std::size_t(mesh.voxel[std::size_t(e)])]); });
  const std::int64_t first = parallel_first(n, [&](std::int64_t e) { return !std::isfinite(t[e]); });
  if (first >= 0) {
    const auto bad = static_cast<std::int64_t>(
        deterministic_sum(n, [&](std::int64_t e) { return std::isfinite(t[e]) ? 0.0 : 1.0; }));
    const auto ijk = mesh.grid.index(mesh.voxel[std::size_t(first)]);
    CARDIO_FAIL("activation-time image " << source << ": " << bad << " myocardium voxels have no finite time (NaN or "
                                         << "infinite); the first is voxel (" << ijk[0] << ", " << ijk[1] << ", "
                                         << ijk[2] << ") with value " << t[first] << " ms");
  }
  return t;
}

}  // namespace cardio::activation
