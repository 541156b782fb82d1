#include "mesh/memory_estimate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <sstream>

#include "cardio/core/error.hpp"
#include "cardio/imaging/image_io.hpp"
#include "cardio/imaging/memory.hpp"
#include "cardio/meshing/voxel_mesh.hpp"
#include "cardio/phantoms/phantoms.hpp"
#include "config/surface_options.hpp"

namespace cardio::pipeline {
namespace {

/// "402", "81.0 million", "2.6 billion", "1e+19".
std::string count_text(double n) {
  char buf[64];
  if (n < 1e6)
    std::snprintf(buf, sizeof buf, "%.0f", n);
  else if (n < 1e9)
    std::snprintf(buf, sizeof buf, "%.1f million", n / 1e6);
  else if (n < 1e12)
    std::snprintf(buf, sizeof buf, "%.1f billion", n / 1e9);
  else
    std::snprintf(buf, sizeof buf, "%.3g", n);
  return buf;
}

std::string grid_text(const Eigen::Vector3d& n) {
  std::ostringstream os;
  for (int a = 0; a < 3; ++a) {
    char buf[32];
    std::snprintf(buf, sizeof buf, n[a] < 1e15 ? "%.0f" : "%.3g", n[a]);
    os << (a ? " x " : "") << buf;
  }
  return os.str();
}

std::string mm_text(double v) {
  std::ostringstream os;
  os << v << " mm";
  return os.str();
}

/// The grid geometry.element_size resamples `source` to: imaging::resampled_grid's sizes, in doubles.
Eigen::Vector3d resampled_size(const Eigen::Vector3d& size, const Eigen::Vector3d& spacing, double element_size) {
  Eigen::Vector3d n;
  for (int a = 0; a < 3; ++a) n[a] = std::max(1.0, std::ceil(size[a] * spacing[a] / element_size - 1e-6));
  return n;
}

}  // namespace

std::string bytes_text(double bytes) {
  if (bytes < 1.8e19) return imaging::format_bytes(static_cast<std::uint64_t>(std::max(0.0, bytes)));
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3g GB", bytes / 1e9);
  return buf;
}

std::string MemoryEstimate::describe() const {
  std::string s = "a grid of " + grid_text(source_grid) + " voxels (" + count_text(source_grid.prod()) + ")";
  if (mesh_grid != source_grid)
    s += " resampled to " + grid_text(mesh_grid) + " (" + count_text(mesh_grid.prod()) + ")";
  if (elements > 0) s += " and about " + count_text(elements) + " elements";
  return s + ", about " + bytes_text(bytes());
}

MemoryEstimate estimate_mesh_memory(const MeshConfig& cfg) {
  const GeometryParams& geo = cfg.geometry;
  MemoryEstimate e;
  Eigen::Vector3d spacing;  // of the source grid [mm]
  double source_bytes_per_voxel = 0;
  double myocardium_mm3 = 0;  // phantom: a lower bound of the wall volume
  if (geo.source == GeometrySource::box) {
    const BoxParams& b = geo.box;
    for (int a = 0; a < 3; ++a) e.source_grid[a] = std::round(b.size[a] / b.voxel_size);
    spacing.setConstant(b.voxel_size);
    source_bytes_per_voxel = kBoxBytesPerVoxel;
    e.key = "geometry.box.voxel_size";
    e.value = mm_text(b.voxel_size);
  } else if (geo.source == GeometrySource::phantom) {
    phantoms::PhantomSpec spec;
    spec.voxel_size = geo.phantom.voxel_size;
    spec.biventricular = geo.phantom.kind == PhantomKind::biventricular;
    e.source_grid = phantoms::phantom_grid_size(spec);
    spacing.setConstant(spec.voxel_size);
    source_bytes_per_voxel = kPhantomBytesPerVoxel;
    // The LV wall (the biventricular phantom adds the RV free wall: more, never fewer, elements).
    const phantoms::LvGeometry& lv = spec.lv;
    myocardium_mm3 = phantoms::truncated_ellipsoid_volume(lv.epi_short, lv.epi_long, lv.z_base) -
                     phantoms::truncated_ellipsoid_volume(lv.endo_short, lv.endo_long, lv.z_base);
    e.key = "geometry.phantom.voxel_size";
    e.value = mm_text(spec.voxel_size);
  } else if (geo.source == GeometrySource::image) {
    const imaging::ImageInfo info = imaging::read_image_info(geo.labels_file, geo.stack);
    double stored = double(info.components) * double(info.bytes_per_component);
    for (std::size_t a = 3; a < info.sizes.size(); ++a) stored *= double(info.sizes[a]);  // extra axes
    for (int a = 0; a < 3; ++a) e.source_grid[a] = double(info.grid.size[std::size_t(a)]);
    spacing = info.grid.spacing;
    source_bytes_per_voxel = stored + kImageLabelBytesPerVoxel;
    e.key = "geometry.labels";
    const std::filesystem::path& labels = geo.labels_file;  // a folder may be given as "masks/"
    e.value = (labels.has_filename() ? labels.filename() : labels.parent_path().filename()).string();
  } else {
    e.source_grid = surfaces::surface_grid_size(surface_patches(geo.surface), rasterize_options(geo.surface));
    spacing.setConstant(geo.surface.voxel_size);
    source_bytes_per_voxel = kSurfaceBytesPerVoxel;
    e.key = "geometry.surface.voxel_size";
    e.value = mm_text(geo.surface.voxel_size);
  }
  e.mesh_grid = geo.element_size ? resampled_size(e.source_grid, spacing, *geo.element_size) : e.source_grid;
  if (geo.source == GeometrySource::box) {
    e.elements = e.mesh_grid.prod();  // the block is all myocardium
  } else if (myocardium_mm3 > 0) {
    const double h = geo.element_size.value_or(spacing[0]);
    e.elements = myocardium_mm3 / (h * h * h);
  }
  e.source_bytes = e.source_grid.prod() * source_bytes_per_voxel;
  e.mesh_bytes = e.mesh_grid.prod() * kMeshGridBytesPerVoxel + e.elements * double(meshing::kBytesPerElementEstimate);
  if (geo.element_size && e.mesh_bytes > e.source_bytes) {
    e.key = "geometry.element_size";
    e.value = mm_text(*geo.element_size);
  }
  return e;
}

void check_mesh_memory(const MemoryEstimate& e, config::Document& doc, double available_bytes) {
  if (!(e.bytes() > available_bytes)) return;
  const auto dot = e.key.rfind('.');
  config::Node section = doc.root();
  std::stringstream parts(e.key.substr(0, dot));
  for (std::string part; std::getline(parts, part, '.');) section = section.child_or_empty(part);
  const std::string hint = e.key == "geometry.labels"         ? "crop or downsample the image"
                           : e.key == "geometry.element_size" ? "use a larger element size"
                                                              : "use a larger voxel size";
  std::ostringstream msg;
  msg << e.value << " gives " << e.describe() << " of memory to mesh, more than the " << bytes_text(available_bytes)
      << " available (MemAvailable, capped by the container's memory limit and by ulimit -v); " << hint;
  section.fail(e.key.substr(dot + 1), msg.str());
}

}  // namespace cardio::pipeline
