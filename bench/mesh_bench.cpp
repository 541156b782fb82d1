// cardio_mesh_bench: import + voxelize benchmark (docs/performance.md, "Meshing").
//   cardio_mesh_bench generate FILE [N]   write an N^3 (default 256) label image with about 2 million
//                                         myocardium voxels (a truncated thick ellipsoidal shell, 0.5 mm voxels)
//   cardio_mesh_bench mesh FILE           read it, map roles, drop islands, classify the boundary and
//                                         build the hexahedral mesh; prints stage times and peak memory
// The two steps run as separate processes so that the peak resident set (getrusage) is the
// meshing's own. Fibres are left out (uniform frames): the rule-based fibres are timed separately.
#include <sys/resource.h>

#include <chrono>
#include <iomanip>
#include <iostream>
#include <string>

#include "cardio/core/error.hpp"
#include "cardio/fibres/rule_based.hpp"
#include "cardio/imaging/image_io.hpp"
#include "cardio/meshing/boundary.hpp"
#include "cardio/meshing/voxel_mesh.hpp"

using namespace cardio;
using Clock = std::chrono::steady_clock;

namespace {

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }
double peak_rss_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_maxrss) / 1024.0;  // ru_maxrss is in kB on Linux
}

int generate(const std::string& file, long n) {
  imaging::LabelVolume l;
  l.grid.size = {n, n, n};
  l.grid.spacing = Eigen::Vector3d::Constant(0.5);
  l.values.assign(std::size_t(n * n * n), 0);
  const double c = 0.5 * double(n - 1);
  for (long k = 0; k < n; ++k)
    for (long j = 0; j < n; ++j)
      for (long i = 0; i < n; ++i) {
        const Eigen::Vector3d p((double(i) - c) * 0.5, (double(j) - c) * 0.5, (double(k) - c) * 0.5);
        const auto inside = [&](double a, double b) {
          return (p.x() * p.x() + p.y() * p.y()) / (a * a) + p.z() * p.z() / (b * b) <= 1;
        };
        // A truncated ellipsoidal LV: base plane at z = 40 mm, so the cavity has a valve opening.
        l.at(i, j, k) = p.z() > 40 || !inside(46, 62) ? 0 : (inside(36, 52) ? 2 : 1);
      }
  imaging::write_label_image(l, file);
  long myo = 0;
  for (auto v : l.values) myo += v == 1;
  std::cout << "wrote " << file << ": " << n << "^3 voxels, " << myo << " myocardium voxels\n";
  return 0;
}

int mesh(const std::string& file, bool with_fibres) {
  const auto t0 = Clock::now();
  auto t = Clock::now();
  imaging::LabelVolume labels = imaging::read_label_image(file);
  const double t_read = since(t);
  t = Clock::now();
  imaging::RoleVolume roles;
  roles.role.grid = labels.grid;
  roles.role.values.resize(labels.values.size());
  for (std::size_t v = 0; v < labels.values.size(); ++v)
    roles.role.values[v] = labels.values[v] == 1   ? imaging::RoleVolume::kMyocardium
                           : labels.values[v] == 2 ? imaging::RoleVolume::cavity_role(0)
                                                   : imaging::RoleVolume::kOutside;
  roles.cavity_names = {"lv"};
  roles.labels = std::move(labels);
  const auto islands = meshing::drop_islands(roles, false);
  const auto boundary = meshing::classify_boundary(roles, meshing::BaseSpec{});
  const double t_classify = since(t);
  t = Clock::now();
  imaging::VoxelFrames frames;
  double t_fibres = 0;
  if (with_fibres) {
    frames = fibres::rule_based_frames(roles, boundary, fibres::RuleAngles{});
    t_fibres = since(t);
  } else {
    frames.voxels = imaging::voxels_with_role(roles, imaging::RoleVolume::kMyocardium);
    frames.fibre = Eigen::Matrix3Xd::Zero(3, Eigen::Index(frames.voxels.size()));
    frames.sheet = frames.fibre;
    frames.fibre.row(0).setOnes();
    frames.sheet.row(1).setOnes();
  }
  t = Clock::now();
  const meshing::VoxelMesh m = meshing::build_voxel_mesh(roles, boundary, frames, 1.06);
  const double t_mesh = since(t);
  std::cout << std::fixed << std::setprecision(2) << "elements " << m.mesh.n_elements() << ", nodes "
            << m.mesh.n_nodes() << ", islands " << islands.components << "\n"
            << "read " << t_read << " s, roles+islands+boundary " << t_classify << " s, "
            << (with_fibres ? "rule-based fibres " + std::to_string(t_fibres) + " s, " : std::string()) << "mesh "
            << t_mesh << " s, total " << since(t0) << " s, peak memory " << peak_rss_mb() << " MB\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::string cmd = argc > 1 ? argv[1] : "";
    if (cmd == "generate" && argc >= 3) return generate(argv[2], argc > 3 ? std::stol(argv[3]) : 256);
    if (cmd == "mesh" && argc >= 3) return mesh(argv[2], argc > 3 && std::string(argv[3]) == "--fibres");
    std::cerr << "usage: cardio_mesh_bench generate FILE [N] | mesh FILE [--fibres]\n";
    return 2;
  } catch (const Error& e) {
    std::cerr << "cardio_mesh_bench: " << e.what() << "\n";
    return 1;
  }
}
