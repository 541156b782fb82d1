#include "mesh/mesh_stage.hpp"

#include <Eigen/Geometry>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <map>
#include <optional>
#include <sstream>

#include "cardio/core/error.hpp"
#include "cardio/fibres/frames.hpp"
#include "cardio/fibres/rule_based.hpp"
#include "cardio/fibres/sampling.hpp"
#include "cardio/core/parallel.hpp"
#include "cardio/mechanics/sampled_axes.hpp"
#include "cardio/imaging/image_io.hpp"
#include "cardio/imaging/memory.hpp"
#include "cardio/imaging/resample.hpp"
#include "cardio/io/json.hpp"
#include "cardio/meshing/boundary_fit.hpp"
#include "cardio/io/vtu.hpp"
#include "cardio/phantoms/phantoms.hpp"
#include "cardio/surfaces/projection.hpp"
#include "cardio/surfaces/rasterize.hpp"
#include "mesh/memory_estimate.hpp"
#include "config/surface_options.hpp"

namespace cardio::pipeline {
namespace {

namespace fs = std::filesystem;
using imaging::Grid;
using imaging::RoleVolume;
using nlohmann::json;

/// What the import produced: labels on their grid, optional fibre/sheet vectors on the same grid.
struct Imported {
  imaging::LabelVolume labels;
  imaging::VectorVolume fibre, sheet;  ///< empty unless the source carries them (phantoms)
  std::optional<phantoms::PhantomSpec> phantom;  ///< the analytic phantom, for its fibre rule
  std::map<std::string, surfaces::TriangleSurface> source_patches;  ///< surface input: the fit's surfaces
  json source;                         ///< description for the report
};

json grid_json(const Grid& g) {
  json d = json::array();
  for (int r = 0; r < 3; ++r) d.push_back({g.direction(r, 0), g.direction(r, 1), g.direction(r, 2)});
  return {{"size", {g.size[0], g.size[1], g.size[2]}},
          {"spacing_mm", {g.spacing[0], g.spacing[1], g.spacing[2]}},
          {"origin_mm", {g.origin[0], g.origin[1], g.origin[2]}},
          {"direction", d}};
}

Imported import_phantom(const PhantomParams& p) {
  phantoms::PhantomSpec spec;
  spec.voxel_size = p.voxel_size;
  spec.biventricular = p.kind == PhantomKind::biventricular;
  spec.helix = p.fibres == PhantomFibres::streeter ? phantoms::HelixRule::streeter() : phantoms::HelixRule::land2015();
  spec.rotation = Eigen::AngleAxisd(p.rotation_angle, p.rotation_axis).toRotationMatrix();
  phantoms::Phantom ph = phantoms::make_phantom(spec);
  Imported im{std::move(ph.labels), std::move(ph.fibre), std::move(ph.sheet), spec, {}, {}};
  im.source = {{"type", "phantom"}, {"kind", name_of(p.kind)}, {"voxel_size_mm", p.voxel_size},
               {"fibres", name_of(p.fibres)}};
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

Imported import_surface(const SurfaceParams& s) {
  surfaces::RasterizeOptions o = rasterize_options(s);
  // Memory guard: label volume + roles + meshing, from the surface's own voxel budget.
  o.max_voxels = double(imaging::available_memory_bytes()) / kSurfaceBytesPerVoxel;
  surfaces::RasterizedSurface r = surfaces::rasterize_surface(s.file, o);
  Imported im{std::move(r.labels), {}, {}, std::nullopt, std::move(r.patches), {}};
  json cav = json::object();
  for (std::size_t c = 0; c < r.cavity_names.size(); ++c) cav[r.cavity_names[c]] = r.cavity_volume_mm3[c] / 1000.0;
  im.source = {{"type", "surface"},
               {"file", s.file.string()},
               {"voxel_size_mm", s.voxel_size},
               {"merged_points", r.merged_points},
               {"surface_tissue_volume_mL", r.tissue_volume_mm3 / 1000.0},
               {"surface_cavity_volume_mL", cav}};
  return im;
}

Imported import_image(const fs::path& file) {
  const imaging::ImageInfo info = imaging::read_image_info(file);
  // The label volume, its role copy and the roles' bookkeeping: about 10 bytes a voxel.
  imaging::check_fits_in_memory(std::uint64_t(double(info.grid.n_voxels()) * kMeshGridBytesPerVoxel),
                                "reading " + file.string() + " (" + std::to_string(info.grid.n_voxels()) + " voxels)");
  Imported im{imaging::read_label_image(file), {}, {}, std::nullopt, {}, {}};
  im.source = {{"type", "image"}, {"file", file.string()}, {"grid", grid_json(im.labels.grid)}};
  return im;
}

std::int64_t count_myocardium(const imaging::LabelVolume& labels, const LabelRoles& roles) {
  std::int64_t n = 0;
  for (std::int32_t l : labels.values)
    n += std::find(roles.myocardium.begin(), roles.myocardium.end(), l) != roles.myocardium.end();
  return n;
}

/// Label -> role; no myocardium voxel is an error listing the labels present.
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
    if (auto p = present.find(l); p != present.end()) ++p->second;
    else if (present.size() < 1000) present[l] = 1;
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

fibres::RuleAngles rule_angles(const RuleAngles& a) {
  fibres::RuleAngles r;
  r.helix_endo = a.helix_endo;
  r.helix_epi = a.helix_epi;
  r.sheet_endo = a.sheet_endo;
  r.sheet_epi = a.sheet_epi;
  return r;
}

/// Vectors read from files (fibre [+ sheet], or angle maps), on the import grid.
void read_fibre_vectors(const FibreParams& f, imaging::VectorVolume& fibre, imaging::VectorVolume& sheet) {
  const imaging::VectorAxes axes = f.components;
  if (f.source == FibreSource::vectors) {
    fibre = imaging::read_vector_image(f.fibre_file, axes);
    if (!f.sheet_file.empty()) sheet = imaging::read_vector_image(f.sheet_file, axes);
  } else {
    const auto az = imaging::read_scalar_image(f.azimuth_file);
    const auto el = imaging::read_scalar_image(f.elevation_file);
    fibre = imaging::fibres_from_angles(az, el, f.angle_unit,
                                        f.reference_axes, f.azimuth_file.string(), f.elevation_file.string());
  }
}

/// The phantom's smooth surfaces per surface tag: each tag's nodes go to the closest of its
/// candidate surfaces (the RV endocardium of a biventricular phantom includes the septum, which
/// lies on the LV epicardium). Cavities named other than lv / rv are not fitted.
std::map<std::string, meshing::SurfaceProjector> phantom_projectors(const phantoms::PhantomSpec& spec) {
  using S = phantoms::PhantomSurface;
  auto closest_of = [spec](std::vector<S> candidates) {
    return [spec, candidates](const Eigen::Vector3d& p) {
      Eigen::Vector3d best = p;
      double best_d = INFINITY;
      for (S c : candidates) {
        const Eigen::Vector3d q = phantoms::project_onto_surface(spec, c, p);
        if ((q - p).norm() < best_d) best_d = (q - p).norm(), best = q;
      }
      return best;
    };
  };
  std::map<std::string, meshing::SurfaceProjector> out;
  out["endocardium_lv"] = closest_of({S::lv_endocardium});
  if (spec.biventricular) {
    out["epicardium"] = closest_of({S::lv_epicardium, S::rv_epicardium});
    out["endocardium_rv"] = closest_of({S::rv_endocardium, S::lv_epicardium});
  } else {
    out["epicardium"] = closest_of({S::lv_epicardium});
  }
  return out;
}

/// Projectors onto triangle surfaces, by surface tag.
std::map<std::string, meshing::SurfaceProjector> triangle_projectors(
    const std::map<std::string, surfaces::TriangleSurface>& patches) {
  std::map<std::string, meshing::SurfaceProjector> out;
  for (const auto& [tag, s] : patches)
    if (!s.triangles.empty()) out[tag] = surfaces::closest_point_projector(s);
  return out;
}

/// The smooth surfaces the boundary is fitted to, by source, and how they were obtained.
std::pair<std::map<std::string, meshing::SurfaceProjector>, std::string> fit_projectors(
    const Imported& im, const imaging::RoleVolume& roles, const GeometryParams& geo) {
  if (im.phantom) return {phantom_projectors(*im.phantom), "analytic phantom surfaces"};
  if (geo.source == GeometrySource::surface) return {triangle_projectors(im.source_patches), "source surface patches"};
  return {triangle_projectors(surfaces::label_surfaces(roles)), "smoothed label contours"};
}

nlohmann::json fit_report_json(const meshing::BoundaryFitReport& r, const std::string& surface) {
  return {{"method", "smooth"},
          {"surface", surface},
          {"fitted_nodes", r.fitted_nodes},
          {"skipped_nodes", r.skipped_nodes},
          {"relaxed_nodes", r.relaxed_nodes},
          {"limited_elements", r.limited_elements},
          {"max_move_mm", r.max_move_mm},
          {"rms_move_mm", r.rms_move_mm},
          {"min_corner_jacobian_ratio", r.min_jacobian_ratio}};
}

/// Fibre frames at the 8 samples of every element (the sampled-axes element): the phantom's
/// analytic rule where the fibres come from it, the LDRB rule evaluated at the samples where they
/// come from it (`rule` given), else the voxel frames interpolated as structure tensors
/// (fibres/sampling.hpp). Returns how they were obtained, for the report.
std::string sample_fibre_frames(meshing::VoxelMesh& m, const imaging::VoxelFrames& frames,
                                const std::optional<phantoms::PhantomSpec>& phantom, const fibres::LdrbFields* rule,
                                const fibres::RuleAngles& angles) {
  mechanics::HexMesh& mesh = m.mesh;
  const std::int64_t ne = mesh.n_elements();
  Eigen::Matrix3Xd points(3, 8 * ne);
  std::vector<std::int64_t> own(std::size_t(8 * ne));
  parallel_for(ne, [&](std::int64_t e) {
    points.middleCols<8>(8 * e) = mechanics::sample_points(mechanics::gather(mesh.rest, mesh.hexes[std::size_t(e)]));
    for (int g = 0; g < 8; ++g) own[std::size_t(8 * e + g)] = e;  // element e has frame e (same voxel order)
  });
  if (phantom) {
    mesh.sample_fibre.resize(3, 8 * ne);
    mesh.sample_sheet.resize(3, 8 * ne);
    parallel_for(8 * ne, [&](std::int64_t c) {
      const phantoms::FibreSheet fs = phantoms::phantom_fibre_sheet(*phantom, m.label[std::size_t(c / 8)], points.col(c));
      mesh.sample_fibre.col(c) = fs.fibre;
      mesh.sample_sheet.col(c) = fs.sheet;
    });
    return "analytic";
  }
  fibres::PointFrames pf = rule ? fibres::rule_frames_at(m.grid, *rule, angles, points, own)
                                : fibres::interpolate_frames(m.grid, frames, points, own);
  mesh.sample_fibre = std::move(pf.fibre);
  mesh.sample_sheet = std::move(pf.sheet);
  return rule ? "rule_at_samples" : "structure_tensor";
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

MeshStageResult run_mesh_stages(const MeshConfig& cfg, std::ostream* log) {
  const auto t0 = std::chrono::steady_clock::now();
  const GeometryParams& geo = cfg.geometry;
  auto say = [&](const std::string& s) {
    if (!log) return;
    std::ostringstream line;  // formatted apart, so the caller's stream keeps its flags
    line << "[" << std::fixed << std::setprecision(1) << seconds_since(t0) << " s] " << s;
    *log << line.str() << std::endl;
  };

  // --- import ---
  Imported im = geo.source == GeometrySource::phantom   ? import_phantom(geo.phantom)
                : geo.source == GeometrySource::surface ? import_surface(geo.surface)
                : geo.source == GeometrySource::box     ? import_box(geo.box)
                                          : import_image(geo.labels_file);
  const std::string source_name = geo.source == GeometrySource::image     ? geo.labels_file.string()
                                  : geo.source == GeometrySource::surface ? geo.surface.file.string()
                                  : geo.source == GeometrySource::box     ? std::string("box")
                                                            : "phantom " + std::string(name_of(geo.phantom.kind));
  say("imported " + source_name + ": " + std::to_string(im.labels.grid.n_voxels()) + " voxels");

  // Fibre vectors from files live on their own grid; read before resampling the labels.
  const FibreParams& fp = cfg.fibres;
  if (fp.source == FibreSource::vectors || fp.source == FibreSource::angles) read_fibre_vectors(fp, im.fibre, im.sheet);
  const Grid import_grid = im.labels.grid;

  // Memory check before the mesh (and the later simulation state) are allocated.
  const std::int64_t n_myo_source = count_myocardium(im.labels, geo.roles);
  const double scale = geo.element_size ? import_grid.voxel_volume() / std::pow(*geo.element_size, 3) : 1.0;
  const double estimated_elements = double(n_myo_source) * scale;
  {
    std::ostringstream what;
    what << "meshing " << source_name << " with "
         << (geo.element_size ? "element size " + std::to_string(*geo.element_size) + " mm" : "its voxels")
         << " (about " << std::llround(estimated_elements) << " elements at " << meshing::kBytesPerElementEstimate
         << " bytes each)";
    const double grid_scale = geo.element_size ? scale : 1.0;
    imaging::check_fits_in_memory(
        std::uint64_t(estimated_elements * double(meshing::kBytesPerElementEstimate) +
                      double(import_grid.n_voxels()) * grid_scale * kMeshGridBytesPerVoxel),
        what.str());
  }

  // --- resample to the element size ---
  if (geo.element_size) {
    const Grid target = imaging::resampled_grid(import_grid, *geo.element_size);
    imaging::LabelVolume resampled = imaging::resample_labels(im.labels, target, geo.label_vote);
    imaging::AxisMask mask{&im.labels, geo.roles.myocardium};
    if (!im.fibre.values.empty()) {
      const bool on_labels = imaging::same_grid(im.fibre.grid, import_grid);
      im.fibre = imaging::resample_axes(im.fibre, target, on_labels ? mask : imaging::AxisMask{});
    }
    if (!im.sheet.values.empty()) {
      const bool on_labels = imaging::same_grid(im.sheet.grid, import_grid);
      im.sheet = imaging::resample_axes(im.sheet, target, on_labels ? mask : imaging::AxisMask{});
    }
    im.labels = std::move(resampled);
    say("resampled to " + std::to_string(*geo.element_size) + " mm: " + std::to_string(target.n_voxels()) + " voxels");
  }

  // --- roles, islands, boundary ---
  RoleVolume roles = assign_roles(std::move(im.labels), geo.roles, source_name);
  const meshing::IslandReport islands = meshing::drop_islands(roles, geo.keep_islands);
  if (islands.components > 1)
    say(std::to_string(islands.components) + " myocardium components; " +
        (geo.keep_islands ? "kept all" : "dropped " + std::to_string(islands.dropped_components) + " islands (" +
                                             std::to_string(islands.dropped_voxels) + " voxels)"));
  const meshing::BoundaryClassification boundary = meshing::classify_boundary(roles, geo.base);

  // --- fibres ---
  imaging::VoxelFrames frames;
  const std::string fibre_source(name_of(fp.source));
  std::int64_t filled = 0;
  fibres::LdrbFields rule_fields;
  if (fp.source == FibreSource::rule) {
    frames = fibres::rule_based_frames(roles, boundary, rule_angles(fp.rule), nullptr, {}, &rule_fields);
  } else if (fp.source == FibreSource::uniform) {
    frames.voxels = imaging::voxels_with_role(roles, RoleVolume::kMyocardium);
    frames.fibre = fp.uniform_fibre.replicate(1, Eigen::Index(frames.voxels.size()));
    frames.sheet = fp.uniform_sheet.replicate(1, Eigen::Index(frames.voxels.size()));
  } else {
    imaging::VoxelFrames rule;
    // The rule gives the sheet when no sheet image is given (if there is an endocardium to build it
    // on; otherwise a fixed perpendicular is used) and fills invalid voxels when the config asks.
    const bool has_endocardium = std::any_of(boundary.faces.begin(), boundary.faces.end(), [](const meshing::VoxelFace& f) {
      return f.tag >= meshing::SurfaceTag::kFirstEndocardium;
    });
    const bool need_rule = fp.fill_missing_by_rule || (im.sheet.values.empty() && has_endocardium);
    if (need_rule && fp.source != FibreSource::phantom) rule = fibres::rule_based_frames(roles, boundary, rule_angles(fp.rule));
    const std::string name = fp.source == FibreSource::vectors ? fp.fibre_file.string()
                             : fp.source == FibreSource::angles ? fp.azimuth_file.string()
                                                     : "phantom fibres";
    frames = fibres::frames_from_vectors(roles, im.fibre, im.sheet.values.empty() ? nullptr : &im.sheet,
                                         rule.voxels.empty() ? nullptr : &rule, name, &filled, fp.fill_missing_by_rule);
  }
  std::string why;
  CARDIO_CHECK(fibres::check_frames(frames, 1e-6, &why), "fibre frames: " << why);
  say("fibres (" + fibre_source + ") on " + std::to_string(frames.voxels.size()) + " voxels");

  // --- voxelize ---
  MeshStageResult out;
  out.mesh = meshing::build_voxel_mesh(roles, boundary, frames, cfg.density);
  json fit = {{"method", "staircase"}};
  if (geo.boundary_fit == BoundaryFit::smooth) {
    const auto [projectors, surface] = fit_projectors(im, roles, geo);
    fit = fit_report_json(meshing::fit_boundary(out.mesh, projectors, cfg.density), surface);
    say("boundary fitted: " + fit["fitted_nodes"].dump() + " nodes onto the smooth surface, " +
        fit["limited_elements"].dump() + " elements limited to stay valid");
  }
  const std::string sampling =
      sample_fibre_frames(out.mesh, frames, fp.source == FibreSource::phantom ? im.phantom : std::nullopt,
                          fp.source == FibreSource::rule ? &rule_fields : nullptr, rule_angles(fp.rule));
  const meshing::VoxelMesh& m = out.mesh;
  for (const auto& cav : m.cavities) {
    const std::string problem = meshing::check_closed_surface(cav, m.mesh.rest);
    if (!problem.empty()) CARDIO_FAIL(source_name << ": " << problem);
  }
  say("meshed: " + std::to_string(m.mesh.n_elements()) + " elements, " + std::to_string(m.mesh.n_nodes()) + " nodes");

  // --- report ---
  json cavities = json::array();
  for (const auto& cav : m.cavities)
    cavities.push_back({{"name", cav.name},
                        {"cavity_volume_mL", meshing::cavity_volume(cav, m.mesh.rest) / 1000.0},
                        {"closed", true},
                        {"lid", cav.has_lid()},
                        {"rim_nodes", cav.rim.size()},
                        {"triangles", cav.triangles.size()},
                        {"nonmanifold_edges", cav.n_nonmanifold_edges}});
  json tags = json::object();
  for (std::size_t t = 0; t < m.tag_names.size(); ++t)
    tags[m.tag_names[t]] = std::count(m.surface_tag.begin(), m.surface_tag.end(), std::uint8_t(t));
  const Eigen::Vector3d lo = m.mesh.rest.rowwise().minCoeff(), hi = m.mesh.rest.rowwise().maxCoeff();
  out.report = {
      {"element_count", m.mesh.n_elements()},
      {"node_count", m.mesh.n_nodes()},
      {"tissue_volume_mL", m.volume.sum() / 1000.0},
      {"tissue_mass_g", m.mass.sum() / 1000.0},
      {"cavities", cavities},
      {"fibre_source", fibre_source},
      {"fibre_voxels_filled_by_rule", filled},
      {"fibre_sampling", sampling},
      {"boundary_fit", fit},
      {"islands", {{"components", islands.components},
                   {"dropped_components", islands.dropped_components},
                   {"dropped_voxels", islands.dropped_voxels},
                   {"kept", geo.keep_islands}}},
      {"surface_faces", tags},
      {"bounding_box_mm", {{"min", {lo[0], lo[1], lo[2]}}, {"max", {hi[0], hi[1], hi[2]}}}},
      {"long_axis", {{"base_point_mm", {m.axis.base_point[0], m.axis.base_point[1], m.axis.base_point[2]}},
                     {"base_normal", {m.axis.base_normal[0], m.axis.base_normal[1], m.axis.base_normal[2]}},
                     {"apex_mm", {m.axis.apex[0], m.axis.apex[1], m.axis.apex[2]}}}},
      {"labels", m.labels_used},
      {"element_grid", grid_json(m.grid)},
      {"source", im.source},
      {"mesh_time_s", seconds_since(t0)}};
  return out;
}

void write_mesh_outputs(const fs::path& outdir, const MeshStageResult& r, bool surfaces) {
  const meshing::VoxelMesh& m = r.mesh;
  fs::remove(outdir / "mesh_report.json");  // first: a half-written set never looks complete
  const auto n_el = m.mesh.n_elements();
  io::Field label{"label", Eigen::MatrixXd(1, n_el), true}, normal{"normal", Eigen::MatrixXd(3, n_el)};
  for (std::int64_t e = 0; e < n_el; ++e) {
    label.values(0, e) = m.label[std::size_t(e)];
    normal.values.col(e) = m.mesh.normal(e);
  }
  io::Field material{"material", Eigen::MatrixXd(1, n_el), true};
  for (std::int64_t e = 0; e < n_el; ++e) material.values(0, e) = m.mesh.material[std::size_t(e)];
  // Field names as in the issue and docs (label, fibre, sheet, normal, volume, mass); their units
  // travel in the `units` field data.
  io::write_mesh_vtu(outdir / "mesh.vtu", m.mesh, {{"mass", m.mass.transpose()}},
                     {label, {"fibre", m.mesh.fibre}, {"sheet", m.mesh.sheet}, normal, {"volume", m.volume.transpose()}, material},
                     {{"units", {"points: mm", "volume: mm^3", "mass: mg", "fibre, sheet, normal: unit vectors"}},
                      {"surface_tag_names", m.tag_names}});
  if (surfaces) {
    std::vector<std::vector<std::int64_t>> quads;
    io::Field tag{"tag", Eigen::MatrixXd(1, Eigen::Index(m.surface_quads.size())), true};
    for (std::size_t q = 0; q < m.surface_quads.size(); ++q) {
      quads.push_back({m.surface_quads[q].begin(), m.surface_quads[q].end()});
      tag.values(0, Eigen::Index(q)) = m.surface_tag[q];
    }
    io::write_vtp(outdir / "surfaces.vtp", m.mesh.rest, quads, {tag}, {{"tag_names", m.tag_names}});
    for (const auto& cav : m.cavities) {
      std::vector<std::vector<std::int64_t>> tris;
      io::Field part{"lid", Eigen::MatrixXd(1, Eigen::Index(cav.triangles.size())), true};
      for (std::size_t t = 0; t < cav.triangles.size(); ++t) {
        tris.push_back({cav.triangles[t].begin(), cav.triangles[t].end()});
        part.values(0, Eigen::Index(t)) = std::int64_t(t) >= cav.n_endocardial_triangles;
      }
      io::write_vtp(outdir / ("cavity_" + cav.name + ".vtp"), meshing::surface_points(cav, m.mesh.rest), tris, {part});
    }
  }
  io::write_json(outdir / "mesh_report.json", r.report);
}

}  // namespace cardio::pipeline
