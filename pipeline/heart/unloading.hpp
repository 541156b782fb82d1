#pragma once
/// @file unloading.hpp
/// The stress-free reference of a heart imaged under load (usually at end-diastole), by the
/// backward-displacement fixed point (Sellier 2011, J Biomech 44:1779; Bols et al. 2013, J Comput
/// Appl Math 246:208): with x_image the imaged positions and x(X) the quasi-static inflation of
/// the rest positions X to the end-diastolic pressures (passive_inflation.hpp),
///     X_0 = x_image,   X_{k+1} = X_k + w_k (x_image - x(X_k)),
/// until the RMS over the surface nodes of x(X_k) - x_image is below unloading.tolerance_voxels
/// voxels. w_k starts at unloading.relaxation and follows Aitken's delta-squared rule (Irons and
/// Tuck 1969; Kuttler and Wall 2008) unless acceleration: none; an update that inverts an element
/// or does not inflate is retried with half the relaxation. docs/heartbeat.md, "Unloaded reference
/// and passive calibration".
#include <Eigen/Core>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <ostream>
#include <vector>

#include "cardio/meshing/voxel_mesh.hpp"
#include "config/heart_config.hpp"

namespace cardio::pipeline {

struct UnloadingIteration {
  int iteration = 0;                                    ///< 0: the image geometry taken as its own reference
  double rms_mm = 0;                                    ///< RMS over the surface nodes of |x(X_k) - x_image|
  double max_mm = 0;                                    ///< largest of them
  Eigen::Vector3d max_at_mm = Eigen::Vector3d::Zero();  ///< where: that node's image position
  double relaxation = 0;                                ///< w of the update that gave X_k (0 for X_0)
  int newton_iterations = 0;
  long relaxation_steps = 0;  ///< dynamic-relaxation steps where Newton stalled (unloading.inflation_fallback)
  double seconds = 0;
  double level = 1;  ///< the fraction of the end-diastolic pressures (unloading.pressure_steps)
};

struct UnloadingResult {
  meshing::VoxelMesh mesh;      ///< the image mesh with the unloaded rest positions
  Eigen::Matrix3Xd reinflated;  ///< x(X) at the end-diastolic pressures [mm]
  std::vector<UnloadingIteration> history;
  nlohmann::json report;  ///< the content of unloading.json
};

/// Unload `image` (its rest positions are the imaged, loaded geometry) with the material and
/// boundary of `sim` and the pressures of sim.unloading. `start`, if given, is the first iterate
/// instead of x_image (a reference unloaded with a nearby material); from a start at least one
/// update is made even if it already meets the tolerance (a start unloaded with another C is
/// within the tolerance, but not of its own C). Logs one line per iteration.
/// Throws cardio::Error naming the unloading keys when the iteration does not converge within
/// unloading.max_iterations, or when no relaxation keeps the elements uninverted.
UnloadingResult unload_reference(const HeartSimulation& sim, const meshing::VoxelMesh& image, std::ostream* log,
                                 const Eigen::Matrix3Xd* start = nullptr);

/// unloaded_mesh.vtu (the unloaded rest positions, with the displacement to the image as
/// `displacement`) and then unloading.json, each atomically.
void write_unloading_outputs(const std::filesystem::path& outdir, const UnloadingResult& result);

}  // namespace cardio::pipeline
