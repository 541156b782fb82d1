#include "heart/output_estimate.hpp"

#include <cmath>
#include <sstream>

#include "heart/beat_analysis.hpp"
#include "mesh/memory_estimate.hpp"

namespace cardio::pipeline {

std::string OutputEstimate::describe() const {
  std::ostringstream os;
  os << "about " << bytes_text(bytes());
  if (frames > 0)
    os << ": " << static_cast<long long>(frames) << " frames of about " << bytes_text(frame_bytes) << " (" << frames_key
       << ") and " << bytes_text(mesh_bytes + other_bytes) << " of mesh, tables and checkpoint";
  else
    os << (other_bytes > 0 ? " (the mesh and the final state)" : " (the mesh)");
  return os.str();
}

OutputEstimate estimate_output_size(const HeartConfig& cfg, bool simulate, const meshing::VoxelMesh& m) {
  const double nodes = double(m.mesh.n_nodes()), elements = double(m.mesh.n_elements());
  OutputEstimate e;
  e.frame_bytes = nodes * kFrameBytesPerNode + elements * kFrameBytesPerElement;
  e.mesh_bytes = nodes * kMeshOutputBytesPerNode + elements * kMeshOutputBytesPerElement;
  if (!simulate || !cfg.simulation) return e;
  const HeartSimulation& sim = *cfg.simulation;
  e.other_bytes = nodes * kFinalBytesPerNode + elements * kFinalBytesPerElement;  // final.vtu
  if (sim.mode != SimulationMode::beat) return e;
  // Frames at 0, output_interval, ... before t_end, and one at t_end (heart_beat.cpp).
  const double t_end = sim.first_onset + sim.beats * sim.period;
  e.frames = std::ceil(t_end / sim.output_interval - 1e-9) + 1;
  std::ostringstream key;
  key << "simulation.output_interval = " << sim.output_interval << " ms over " << t_end << " ms";
  e.frames_key = key.str();
  // timeseries.csv: a row per ms; the strain tables: a row per region or label per analysis.interval.
  const double cavities = double(sim.circulation.size());
  const double samples = std::ceil(t_end / sim.analysis.interval);
  const double values =
      std::ceil(t_end) * (2 + 4 * cavities) +
      samples * (BeatAnalysis::kRegions + double(m.labels_used.size())) * (2 + BeatAnalysis::kStrains) +
      samples * 3;  // lv_global_strain.csv
  e.other_bytes += values * kCsvBytesPerValue;
  e.other_bytes += e.frames * 96;  // series.pvd: a line per frame
  // checkpoint.bin: positions, velocities and forces, per-element analysis state, the tables again.
  if (sim.checkpoint_interval > 0) e.other_bytes += nodes * 72 + elements * 48 + values * kCsvBytesPerValue;
  return e;
}

std::string output_size_warning(const OutputEstimate& e, const HeartConfig& cfg) {
  const double limit = cfg.mesh.max_output_bytes;
  if (!(limit > 0) || !(e.bytes() > limit)) return "";
  std::ostringstream os;
  os << "cardiac: warning: the outputs of this run are estimated at " << e.describe()
     << ", more than output.max_size_warning = " << bytes_text(limit) << "; ";
  if (e.frames > 0)
    os << "raise simulation.output_interval to write fewer frames";
  else
    os << "use a larger voxel or element size";
  os << ", or raise output.max_size_warning if the disk has room (0: never warn)\n";
  return os.str();
}

OutputEstimate warn_about_output_size(const HeartConfig& cfg, bool simulate, const meshing::VoxelMesh& mesh,
                                      std::ostream& log_file, std::ostream& err) {
  const OutputEstimate e = estimate_output_size(cfg, simulate, mesh);
  const std::string warning = output_size_warning(e, cfg);
  log_file << "outputs: estimated at " << e.describe() << "\n";
  if (!warning.empty()) {
    log_file << warning;
    err << warning;
  }
  log_file.flush();
  return e;
}

}  // namespace cardio::pipeline
