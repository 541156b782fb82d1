#include "mesh/import_stage.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "cardio/core/error.hpp"
#include "cardio/imaging/derive_cavities.hpp"
#include "cardio/imaging/image_io.hpp"
#include "cardio/imaging/memory.hpp"
#include "cardio/imaging/resample.hpp"
#include "cardio/meshing/voxel_mesh.hpp"
#include "config/surface_options.hpp"
#include "mesh/memory_estimate.hpp"

namespace cardio::pipeline {
namespace {

namespace fs = std::filesystem;
using imaging::Grid;
using imaging::RoleVolume;
using nlohmann::json;

Imported import_phantom(const PhantomParams& p) {
  phantoms::PhantomSpec spec;
  spec.voxel_size = p.voxel_size;
  spec.biventricular = p.kind == PhantomKind::biventricular;
  spec.helix = p.fibres == PhantomFibres::streeter ? phantoms::HelixRule::streeter() : phantoms::HelixRule::land2015();
  spec.rotation = Eigen::AngleAxisd(p.rotation_angle, p.rotation_axis).toRotationMatrix();
  phantoms::Phantom ph = phantoms::make_phantom(spec);
  Imported im{std::move(ph.labels), std::move(ph.fibre), std::move(ph.sheet), spec, {}, {}};
  im.source = {
      {"type", "phantom"}, {"kind", name_of(p.kind)}, {"voxel_size_mm", p.voxel_size}, {"fibres", name_of(p.fibres)}};
  return im;
}

Imported import_box(const BoxParams& b) {
  Imported im;
  Grid& g = im.labels.grid;
  g.spacing = Eigen::Vector3d::Constant(b.voxel_size);
  for (int a = 0; a < 3; ++a) g.size[std::size_t(a)] = std::llround(b.size[a] / b.voxel_size);
  g.origin = b.origin + g.spacing / 2;  // voxel centres: the block's faces lie on origin and origin + size
  im.labels.values.assign(std::size_t(g.n_voxels()), 1);
  im.source = {{"type", "box"}, {"size_mm", {b.size[0], b.size[1], b.size[2]}}, {"voxel_size_mm", b.voxel_size}};
  return im;
}

/// The rims stitched or capped, for the report.
json closures_json(const std::vector<surfaces::RimClosure>& closures) {
  json out = json::array();
  for (const surfaces::RimClosure& c : closures)
    out.push_back({{"kind", c.kind == surfaces::RimClosure::Kind::stitched ? "stitched" : "capped"},
                   {"patches", c.patches},
                   {"rim_edges", c.rim_edges},
                   {"gap_mm", c.gap_mm},
                   {"centre_mm", {c.centre_mm.x(), c.centre_mm.y(), c.centre_mm.z()}},
                   {"triangles_added", c.triangles}});
  return out;
}

Imported import_surface(const SurfaceParams& s) {
  surfaces::RasterizeOptions o = rasterize_options(s);
  // Memory guard: label volume + roles + meshing, from the surface's own voxel budget.
  o.max_voxels = double(imaging::available_memory_bytes()) / kSurfaceBytesPerVoxel;
  surfaces::RasterizedSurface r = surfaces::rasterize_surface(surface_patches(s), o);
  Imported im{std::move(r.labels), {}, {}, std::nullopt, std::move(r.patches), {}};
  json cav = json::object();
  for (std::size_t c = 0; c < r.cavity_names.size(); ++c) cav[r.cavity_names[c]] = r.cavity_volume_mm3[c] / 1000.0;
  json files = json::array();
  for (const SurfacePatchParams& p : s.patches) files.push_back({{"file", p.file.string()}, {"role", p.role}});
  im.source = {{"type", "surface"},
               {"file", surface_files_text(s)},
               {"patches", files},
               {"rims_closed", closures_json(r.closures)},
               {"voxel_size_mm", s.voxel_size},
               {"merged_points", r.merged_points},
               {"surface_tissue_volume_mL", r.tissue_volume_mm3 / 1000.0},
               {"surface_cavity_volume_mL", cav}};
  return im;
}

Imported import_image(const fs::path& file, const std::optional<imaging::StackGeometry>& stack) {
  const imaging::ImageInfo info = imaging::read_image_info(file, stack);
  // The label volume, its role copy and the roles' bookkeeping: about 10 bytes a voxel.
  imaging::check_fits_in_memory(std::uint64_t(double(info.grid.n_voxels()) * kMeshGridBytesPerVoxel),
                                "reading " + file.string() + " (" + std::to_string(info.grid.n_voxels()) + " voxels)");
  Imported im{imaging::read_label_image(file, stack), {}, {}, std::nullopt, {}, {}};
  im.source = {{"type", "image"}, {"file", file.string()}, {"grid", grid_json(im.labels.grid)}};
  if (imaging::is_slice_stack(file)) {  // which files, in which order (natural order of their names)
    const std::vector<fs::path> slices = imaging::stack_slice_files(file);
    im.source["slices"] = {{"count", slices.size()},
                           {"first", slices.front().filename().string()},
                           {"last", slices.back().filename().string()}};
  }
  return im;
}

std::int64_t count_myocardium(const imaging::LabelVolume& labels, const LabelRoles& roles) {
  std::int64_t n = 0;
  for (std::int32_t l : labels.values)
    n += std::find(roles.myocardium.begin(), roles.myocardium.end(), l) != roles.myocardium.end();
  return n;
}

/// Label -> role; no myocardium voxel is an error listing the labels present.
}  // namespace

json grid_json(const Grid& g) {
  json d = json::array();
  for (int r = 0; r < 3; ++r) d.push_back({g.direction(r, 0), g.direction(r, 1), g.direction(r, 2)});
  return {{"size", {g.size[0], g.size[1], g.size[2]}},
          {"spacing_mm", {g.spacing[0], g.spacing[1], g.spacing[2]}},
          {"origin_mm", {g.origin[0], g.origin[1], g.origin[2]}},
          {"direction", d}};
}

Imported import_source(const GeometryParams& geo) {
  switch (geo.source) {
    case GeometrySource::phantom:
      return import_phantom(geo.phantom);
    case GeometrySource::surface:
      return import_surface(geo.surface);
    case GeometrySource::box:
      return import_box(geo.box);
    case GeometrySource::image:
      break;
  }
  return import_image(geo.labels_file, geo.stack);
}

std::string source_name(const GeometryParams& geo) {
  switch (geo.source) {
    case GeometrySource::image:
      return geo.labels_file.string();
    case GeometrySource::surface:
      return surface_files_text(geo.surface);
    case GeometrySource::box:
      return "box";
    case GeometrySource::phantom:
      break;
  }
  return "phantom " + std::string(name_of(geo.phantom.kind));
}

void read_fibre_vectors(const FibreParams& f, Imported& im) {
  const imaging::VectorAxes axes = f.components;
  if (f.source == FibreSource::vectors) {
    im.fibre = imaging::read_vector_image(f.fibre_file, axes);
    if (!f.sheet_file.empty()) im.sheet = imaging::read_vector_image(f.sheet_file, axes);
  } else {
    const auto az = imaging::read_scalar_image(f.azimuth_file);
    const auto el = imaging::read_scalar_image(f.elevation_file);
    im.fibre = imaging::fibres_from_angles(az, el, f.angle_unit, f.reference_axes, f.azimuth_file.string(),
                                           f.elevation_file.string());
  }
}

void check_mesh_fits(const Imported& im, const GeometryParams& geo, const std::string& source_name) {
  const Grid& grid = im.labels.grid;
  const std::int64_t n_myo_source = count_myocardium(im.labels, geo.roles);
  const double scale = geo.element_size ? grid.voxel_volume() / std::pow(*geo.element_size, 3) : 1.0;
  const double estimated_elements = double(n_myo_source) * scale;
  std::ostringstream what;
  what << "meshing " << source_name << " with "
       << (geo.element_size ? "element size " + std::to_string(*geo.element_size) + " mm" : "its voxels") << " (about "
       << std::llround(estimated_elements) << " elements at " << meshing::kBytesPerElementEstimate << " bytes each)";
  imaging::check_fits_in_memory(std::uint64_t(estimated_elements * double(meshing::kBytesPerElementEstimate) +
                                              double(grid.n_voxels()) * scale * kMeshGridBytesPerVoxel),
                                what.str());
}

Grid resample_to_element_size(Imported& im, const GeometryParams& geo) {
  const Grid import_grid = im.labels.grid;
  if (!geo.element_size) return import_grid;
  const Grid target = imaging::resampled_grid(import_grid, *geo.element_size);
  imaging::LabelVolume resampled = imaging::resample_labels(im.labels, target, geo.label_vote);
  imaging::AxisMask mask{&im.labels, geo.roles.myocardium};
  for (imaging::VectorVolume* axes : {&im.fibre, &im.sheet}) {
    if (axes->values.empty()) continue;
    const bool on_labels = imaging::same_grid(axes->grid, import_grid);
    *axes = imaging::resample_axes(*axes, target, on_labels ? mask : imaging::AxisMask{});
  }
  im.labels = std::move(resampled);
  return target;
}

RoleVolume assign_roles(imaging::LabelVolume labels, const LabelRoles& roles, const std::string& source_name) {
  RoleVolume r;
  r.role.grid = labels.grid;
  r.role.values.assign(labels.values.size(), RoleVolume::kOutside);
  for (const auto& [name, l] : roles.cavities) r.cavity_names.push_back(name);
  std::map<std::int32_t, std::uint8_t> role_of;
  for (std::int32_t l : roles.myocardium) role_of[l] = RoleVolume::kMyocardium;
  for (std::size_t c = 0; c < roles.cavities.size(); ++c)
    for (std::int32_t l : roles.cavities[c].second) role_of[l] = RoleVolume::cavity_role(c);
  std::map<std::int32_t, std::int64_t> present;
  std::int64_t n_myocardium = 0;
  for (std::size_t v = 0; v < labels.values.size(); ++v) {
    const std::int32_t l = labels.values[v];
    const auto it = role_of.find(l);
    if (it != role_of.end()) {
      r.role.values[v] = it->second;
      n_myocardium += it->second == RoleVolume::kMyocardium;
    }
    // Count labels for the error message (bounded: a float image cast to labels may hold millions).
    if (auto p = present.find(l); p != present.end())
      ++p->second;
    else if (present.size() < 1000)
      present[l] = 1;
  }
  if (n_myocardium == 0) {
    std::ostringstream os;
    os << source_name << ": no voxel has a myocardium label (";
    for (std::size_t i = 0; i < roles.myocardium.size(); ++i) os << (i ? ", " : "") << roles.myocardium[i];
    os << "); labels present (voxel counts):";
    for (const auto& [l, n] : present) os << " " << l << " (" << n << ")";
    CARDIO_FAIL(os.str());
  }
  r.labels = std::move(labels);
  return r;
}

DerivedCavitiesSummary derive_cavities_of_mask(RoleVolume& roles, const imaging::DeriveCavitiesOptions& o,
                                               const std::string& source_name) {
  imaging::DerivedCavities d;
  try {
    d = imaging::derive_cavities(roles, o);
  } catch (const Error& e) {
    CARDIO_FAIL(source_name << ": cannot derive the cavities: " << e.what()
                            << ". Set geometry.derive_cavities.closing_radius larger than the radius of the widest "
                               "opening (valve or open base), or, if the mask is not a myocardium with chambers, "
                               "give the cavity labels in geometry.roles.cavities (and no derive_cavities)");
  }
  DerivedCavitiesSummary s;
  json cavities = json::object();
  std::ostringstream log;
  log << "derived " << d.cavities.size() << " cavit" << (d.cavities.size() == 1 ? "y" : "ies") << " (closing radius "
      << o.closing_radius_mm << " mm):";
  for (const imaging::DerivedCavity& c : d.cavities) {
    cavities[c.name] = {
        {"voxels", c.voxels},          {"volume_mL", c.volume_mm3 / 1000.0}, {"cap_voxels", c.cap_voxels},
        {"openings", c.openings},      {"uncapped_openings", c.uncapped},    {"enclosure", c.enclosure},
        {"compactness", c.compactness}};
    log << " " << c.name << " " << c.volume_mm3 / 1000.0 << " mL (" << c.voxels << " voxels, " << c.openings
        << (c.openings == 1 ? " opening" : " openings") << ", " << c.cap_voxels << " voxels in flat caps"
        << (c.uncapped ? ", " + std::to_string(c.uncapped) + " left uncapped: the cap leaked past a low rim" : "")
        << ")";
  }
  if (d.cavities.size() == 1) log << "; one enclosed pool only, taken as the LV (no RV)";
  if (d.ignored_regions > 0)
    log << "; ignored " << d.ignored_regions << " smaller or open regions (" << d.ignored_volume_mm3 / 1000.0 << " mL)";
  s.report = {{"closing_radius_mm", o.closing_radius_mm},
              {"cavities", cavities},
              {"ignored_regions", d.ignored_regions},
              {"ignored_volume_mL", d.ignored_volume_mm3 / 1000.0},
              {"rule", "lv: the more compact pool (36 pi V^2 / A^3), rv: the other"}};
  s.log = log.str();
  return s;
}

}  // namespace cardio::pipeline
