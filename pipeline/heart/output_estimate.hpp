#pragma once
/// @file output_estimate.hpp
/// The disk space a heart run fills (issue 14: a frame every step wrote 1.2 GB for 152 ms),
/// estimated from the config and the mesh's element and node counts once the mesh is built, before
/// anything is simulated or written, and a warning (run.log and stderr) when it exceeds
/// output.max_size_warning. The byte model was measured on real outputs (docs/config.md, "Output
/// size"); the frames, compressed VTK XML, dominate every run long enough to matter.
#include <ostream>
#include <string>

#include "cardio/meshing/voxel_mesh.hpp"
#include "config/heart_config.hpp"

namespace cardio::pipeline {

// Fitted to the outputs of configs/lv_phantom.yaml at 2 mm (886 nodes, 460 elements) and 1 mm
// (4908 nodes, 3196 elements), 2026-11-25 (final.vtu) and 2026-11-27 (frames); tests/cli/inputs_test.cpp
// checks a real run against them.
/// One frame (frames/frame_NNNNN.vtu) per node and per element: LZ4-compressed single-precision VTK
/// XML (io::Storage::frame) with rest position, displacement and velocity per node, and per element
/// the connectivity, fibre, sheet, activation, tension, label, strains and AHA segment.
constexpr double kFrameBytesPerNode = 47;
constexpr double kFrameBytesPerElement = 97;
/// final.vtu: the same fields in double precision, zlib-compressed (io::Storage::full).
constexpr double kFinalBytesPerNode = 66;
constexpr double kFinalBytesPerElement = 128;
/// mesh.vtu, surfaces.vtp, cavity_*.vtp and the mesh stage's cache/ (uncompressed, most of it).
constexpr double kMeshOutputBytesPerNode = 134;
constexpr double kMeshOutputBytesPerElement = 484;
/// One value of a CSV table (shortest round-trip doubles) with its comma.
constexpr double kCsvBytesPerValue = 18;

struct OutputEstimate {
  double frames = 0;       ///< frames/frame_NNNNN.vtu (beat mode; 0 otherwise)
  double frame_bytes = 0;  ///< each frame
  double mesh_bytes = 0;   ///< mesh.vtu, surfaces, cavities, cache/
  double other_bytes = 0;  ///< final.vtu, the CSV tables, series.pvd, checkpoint.bin
  /// What sets the number of frames, e.g. "simulation.output_interval = 0.05 ms over 1800 ms".
  std::string frames_key;

  double bytes() const { return frames * frame_bytes + mesh_bytes + other_bytes; }
  /// e.g. "about 5.20 GB: 36002 frames of about 144 kB (simulation.output_interval = 0.05 ms over
  /// 1800 ms) and 3.10 MB of mesh, tables and checkpoint"
  std::string describe() const;
};

/// The estimate for a heart config meshed to `mesh`; `simulate` adds the simulation's outputs.
OutputEstimate estimate_output_size(const HeartConfig& config, bool simulate, const meshing::VoxelMesh& mesh);

/// The warning when `e` exceeds config.mesh.max_output_bytes ("" when within it or the limit is 0):
/// the estimate, the limit and its key (output.max_size_warning), and the key to change.
std::string output_size_warning(const OutputEstimate& e, const HeartConfig& config);

/// Estimate, and write the warning if there is one to `log_file` (run.log) and `err` (stderr), each
/// once. Returns the estimate.
OutputEstimate warn_about_output_size(const HeartConfig& config, bool simulate, const meshing::VoxelMesh& mesh,
                                      std::ostream& log_file, std::ostream& err);

}  // namespace cardio::pipeline
