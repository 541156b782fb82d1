#include "mesh/mesh_stage.hpp"

#include <Eigen/Geometry>
#include <algorithm>
#include <chrono>
#include <iomanip>
#include <map>
#include <sstream>

#include "cardio/core/error.hpp"
#include "cardio/io/json.hpp"
#include "cardio/io/vtu.hpp"
#include "cardio/meshing/boundary_fit.hpp"
#include "cardio/surfaces/projection.hpp"
#include "mesh/fibre_stage.hpp"
#include "mesh/import_stage.hpp"
#include "mesh/mesh_warnings.hpp"

namespace cardio::pipeline {
namespace {

namespace fs = std::filesystem;
using imaging::RoleVolume;
using nlohmann::json;

/// Progress lines of the stages, with the time since the start: "[1.2 s] imported ...".
class StageLog {
 public:
  explicit StageLog(std::ostream* log) : m_log(log), m_t0(std::chrono::steady_clock::now()) {}
  double seconds() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - m_t0).count(); }
  void operator()(const std::string& s) const {
    if (!m_log) return;
    std::ostringstream line;  // formatted apart, so the caller's stream keeps its flags
    line << "[" << std::fixed << std::setprecision(1) << seconds() << " s] " << s;
    *m_log << line.str() << std::endl;
  }

 private:
  std::ostream* m_log;
  std::chrono::steady_clock::time_point m_t0;
};

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

/// Roles with the islands dropped (or kept), logged.
meshing::IslandReport drop_islands(RoleVolume& roles, const GeometryParams& geo, const StageLog& say) {
  const meshing::IslandReport islands = meshing::drop_islands(roles, geo.keep_islands);
  if (islands.components > 1)
    say(std::to_string(islands.components) + " myocardium components; " +
        (geo.keep_islands ? "kept all"
                          : "dropped " + std::to_string(islands.dropped_components) + " islands (" +
                                std::to_string(islands.dropped_voxels) + " voxels)"));
  return islands;
}

/// Every cavity surface of the mesh closed, or cardio::Error naming the source.
void check_cavities_closed(const meshing::VoxelMesh& m, const std::string& source_name) {
  for (const auto& cav : m.cavities) {
    const std::string problem = meshing::check_closed_surface(cav, m.mesh.rest);
    if (!problem.empty()) CARDIO_FAIL(source_name << ": " << problem);
  }
}

json cavities_json(const meshing::VoxelMesh& m) {
  json cavities = json::array();
  for (const auto& cav : m.cavities)
    cavities.push_back({{"name", cav.name},
                        {"cavity_volume_mL", meshing::cavity_volume(cav, m.mesh.rest) / 1000.0},
                        {"closed", true},
                        {"lid", cav.has_lid()},
                        {"rim_nodes", cav.rim.size()},
                        {"triangles", cav.triangles.size()},
                        {"nonmanifold_edges", cav.n_nonmanifold_edges}});
  return cavities;
}

json vec_json(const Eigen::Vector3d& v) { return {v[0], v[1], v[2]}; }

/// The parts of mesh_report.json that describe the mesh itself.
json mesh_json(const meshing::VoxelMesh& m) {
  json tags = json::object();
  for (std::size_t t = 0; t < m.tag_names.size(); ++t)
    tags[m.tag_names[t]] = std::count(m.surface_tag.begin(), m.surface_tag.end(), std::uint8_t(t));
  const Eigen::Vector3d lo = m.mesh.rest.rowwise().minCoeff(), hi = m.mesh.rest.rowwise().maxCoeff();
  return {{"element_count", m.mesh.n_elements()},
          {"node_count", m.mesh.n_nodes()},
          {"tissue_volume_mL", m.volume.sum() / 1000.0},
          {"tissue_mass_g", m.mass.sum() / 1000.0},
          {"cavities", cavities_json(m)},
          {"surface_faces", tags},
          {"bounding_box_mm", {{"min", vec_json(lo)}, {"max", vec_json(hi)}}},
          {"labels", m.labels_used},
          {"element_grid", grid_json(m.grid)}};
}

json islands_json(const meshing::IslandReport& islands, bool kept) {
  return {{"components", islands.components},
          {"dropped_components", islands.dropped_components},
          {"dropped_voxels", islands.dropped_voxels},
          {"kept", kept}};
}

}  // namespace

MeshStageResult run_mesh_stages(const MeshConfig& cfg, std::ostream* log) {
  const StageLog say(log);
  const GeometryParams& geo = cfg.geometry;
  const FibreParams& fp = cfg.fibres;
  Imported im = import_source(geo);
  const std::string source = source_name(geo);
  say("imported " + source + ": " + std::to_string(im.labels.grid.n_voxels()) + " voxels");
  // Fibre vectors from files live on their own grid; read before resampling the labels.
  if (fp.source == FibreSource::vectors || fp.source == FibreSource::angles) read_fibre_vectors(fp, im);
  check_mesh_fits(im, geo, source);  // before the mesh (and the later simulation state) are allocated
  const SourceCensus census = take_source_census(im, geo);  // the source's own voxels, for the warnings
  if (geo.element_size) {
    const imaging::Grid target = resample_to_element_size(im, geo);
    say("resampled to " + std::to_string(*geo.element_size) + " mm: " + std::to_string(target.n_voxels()) + " voxels");
  }

  RoleVolume roles = assign_roles(std::move(im.labels), geo.roles, source);
  const meshing::IslandReport islands = drop_islands(roles, geo, say);
  if (geo.derive_cavities) {
    const DerivedCavitiesSummary derived = derive_cavities_of_mask(roles, *geo.derive_cavities, source);
    say(derived.log);
    im.source["derived_cavities"] = derived.report;
  }
  const meshing::BoundaryClassification boundary = meshing::classify_boundary(roles, geo.base);
  const meshing::ThinWalls thin_walls = meshing::find_thin_walls(roles, boundary);
  const VoxelFibres fibres = voxel_fibres(fp, roles, boundary, im);
  const std::string fibre_source(name_of(fp.source));
  say("fibres (" + fibre_source + ") on " + std::to_string(fibres.frames.voxels.size()) + " voxels");

  MeshStageResult out;
  out.mesh = meshing::build_voxel_mesh(roles, boundary, fibres.frames, cfg.density);
  json fit = {{"method", "staircase"}};
  if (geo.boundary_fit == BoundaryFit::smooth) {
    const auto [projectors, surface] = fit_projectors(im, roles, geo);
    fit = fit_report_json(meshing::fit_boundary(out.mesh, projectors, cfg.density), surface);
    say("boundary fitted: " + fit["fitted_nodes"].dump() + " nodes onto the smooth surface, " +
        fit["limited_elements"].dump() + " elements limited to stay valid");
  }
  const std::string sampling =
      sample_fibre_frames(out.mesh, fibres.frames, fp.source == FibreSource::phantom ? im.phantom : std::nullopt,
                          fp.source == FibreSource::rule ? &fibres.rule_fields : nullptr, rule_angles(fp.rule));
  const meshing::VoxelMesh& m = out.mesh;
  check_cavities_closed(m, source);
  say("meshed: " + std::to_string(m.mesh.n_elements()) + " elements, " + std::to_string(m.mesh.n_nodes()) + " nodes");

  out.report = mesh_json(m);
  out.report["fibre_source"] = fibre_source;
  out.report["fibre_voxels_filled_by_rule"] = fibres.filled_by_rule;
  out.report["fibre_sampling"] = sampling;
  out.report["boundary_fit"] = fit;
  out.report["islands"] = islands_json(islands, geo.keep_islands);
  out.report["source"] = im.source;
  for (const std::string& line : add_warnings(out.report, {census, m, islands, thin_walls, geo})) say(line);
  out.report["mesh_time_s"] = say.seconds();
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
  io::write_mesh_vtu(
      outdir / "mesh.vtu", m.mesh, {{"mass", m.mass.transpose()}},
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
