#pragma once
/// @file surface_options.hpp (private to the pipeline's sources)
/// The rasterizer's options from a config's surface section, shared by the import (mesh_stage.cpp)
/// and the memory estimate (memory_estimate.cpp), so that both see the same grid.
#include "cardio/surfaces/rasterize.hpp"
#include "config/mesh_config.hpp"

namespace cardio::pipeline {

inline surfaces::RasterizeOptions rasterize_options(const SurfaceParams& s) {
  surfaces::RasterizeOptions o;
  o.voxel_size_mm = s.voxel_size;
  o.merge_tolerance_mm = s.merge_tolerance;
  o.class_array = s.class_array;
  o.base_class = s.base_class;
  o.epicardium_class = s.epicardium_class;
  o.stitch_width_mm = s.stitch_width;
  o.cap_open_rims = s.cap_open_rims;
  o.endocardia.clear();
  for (const auto& [cls, name] : s.endocardia) o.endocardia.push_back({cls, name});
  return o;
}

inline std::vector<surfaces::SurfacePatch> surface_patches(const SurfaceParams& s) {
  std::vector<surfaces::SurfacePatch> out;
  for (const SurfacePatchParams& p : s.patches) out.push_back({p.file, p.patch_class});
  return out;
}

}  // namespace cardio::pipeline
