#include "mesh/mesh_warnings.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

#include "cardio/meshing/boundary.hpp"
#include "cardio/phantoms/phantoms.hpp"

namespace cardio::pipeline {
namespace {

using nlohmann::json;

/// `x` with `digits` significant digits ("1119.8"), for messages.
std::string num(double x, int digits = 5) {
  std::ostringstream os;
  os << std::setprecision(digits) << x;
  return os.str();
}

std::string percent(double fraction) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(1) << 100 * fraction << " %";
  return os.str();
}

/// Voxel count per label (at most 1000 distinct labels: a float image cast to labels may hold millions).
std::map<std::int32_t, std::int64_t> label_histogram(const imaging::LabelVolume& labels) {
  std::map<std::int32_t, std::int64_t> count;
  for (std::int32_t l : labels.values)
    if (auto it = count.find(l); it != count.end())
      ++it->second;
    else if (count.size() < 1000)
      count[l] = 1;
  return count;
}

std::int64_t voxels_of(const std::map<std::int32_t, std::int64_t>& histogram, const std::vector<std::int32_t>& labels) {
  std::int64_t n = 0;
  for (std::int32_t l : labels)
    if (auto it = histogram.find(l); it != histogram.end()) n += it->second;
  return n;
}

bool mapped(const LabelRoles& roles, std::int32_t label) {
  auto has = [label](const std::vector<std::int32_t>& v) { return std::find(v.begin(), v.end(), label) != v.end(); };
  if (has(roles.myocardium)) return true;
  return std::any_of(roles.cavities.begin(), roles.cavities.end(), [&](const auto& c) { return has(c.second); });
}

/// The Land et al. LV phantom with its own roles: its volumes in closed form (mL), else false.
bool analytic_lv_volumes(const Imported& im, const LabelRoles& roles, SourceCensus& c) {
  if (!im.phantom || im.phantom->biventricular) return false;
  const phantoms::PhantomLabels& l = im.phantom->labels;
  if (roles.myocardium != std::vector<std::int32_t>{l.lv_myocardium} || roles.cavities.size() != 1 ||
      roles.cavities[0].second != std::vector<std::int32_t>{l.lv_cavity})
    return false;
  const phantoms::LvGeometry& g = im.phantom->lv;
  const double cavity = phantoms::truncated_ellipsoid_volume(g.endo_short, g.endo_long, g.z_base);
  c.tissue_mL = (phantoms::truncated_ellipsoid_volume(g.epi_short, g.epi_long, g.z_base) - cavity) / 1000;
  c.cavity_mL[roles.cavities[0].first] = cavity / 1000;
  c.volume_basis = "the analytic truncated ellipsoids";
  return true;
}

/// "geometry.element_size" or the source's own voxel size key: what sets the meshed voxel.
std::string voxel_size_key(const GeometryParams& geo) {
  if (geo.element_size || geo.source == GeometrySource::image) return "geometry.element_size";
  if (geo.source == GeometrySource::surface) return "geometry.surface.voxel_size";
  if (geo.source == GeometrySource::box) return "geometry.box.voxel_size";
  return "geometry.phantom.voxel_size";
}

/// The largest of 1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 7.5 x 10^k not above x.
double nice_floor(double x) {
  const double decade = std::pow(10.0, std::floor(std::log10(x)));
  double best = decade;
  for (double m : {1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 7.5})
    if (m * decade <= x * (1 + 1e-9)) best = m * decade;
  return best;
}

void add_volume_warning(json& out, const std::string& part, double mesh_mL, double source_mL, const MeshFacts& f) {
  const double tol = f.geometry.volume_tolerance;
  if (!(source_mL > 0)) return;
  const double d = (mesh_mL - source_mL) / source_mL;
  if (std::abs(d) <= tol) return;
  std::ostringstream m;
  m << "the mesh's " << part << " volume " << num(mesh_mL) << " mL differs from the source's " << num(source_mL)
    << " mL (" << f.source.volume_basis << ") by " << (d > 0 ? "+" : "") << percent(d)
    << ", more than geometry.volume_tolerance = " << percent(tol);
  out.push_back({{"kind", "volume_mismatch"},
                 {"message", m.str()},
                 {"part", part},
                 {"mesh_mL", mesh_mL},
                 {"source_mL", source_mL},
                 {"difference_percent", 100 * d},
                 {"tolerance_percent", 100 * tol}});
}

void add_volume_warnings(json& out, const MeshFacts& f) {
  if (f.source.tissue_mL) add_volume_warning(out, "tissue", f.mesh.volume.sum() / 1000, *f.source.tissue_mL, f);
  for (const auto& cav : f.mesh.cavities)
    if (auto it = f.source.cavity_mL.find(cav.name); it != f.source.cavity_mL.end())
      add_volume_warning(out, cav.name + " cavity", meshing::cavity_volume(cav, f.mesh.mesh.rest) / 1000, it->second,
                         f);
}

void add_islands_warning(json& out, const MeshFacts& f) {
  const meshing::IslandReport& r = f.islands;
  if (r.dropped_components == 0) return;
  const double volume_mL = double(r.dropped_voxels) * f.mesh.grid.voxel_volume() / 1000;
  const double fraction = double(r.dropped_voxels) / double(r.dropped_voxels + r.kept_voxels);
  std::ostringstream m;
  m << "dropped " << r.dropped_components << " myocardium island" << (r.dropped_components > 1 ? "s" : "")
    << " not connected to the largest component: " << r.dropped_voxels << " voxels, " << num(volume_mL) << " mL, "
    << percent(fraction) << " of the tissue (geometry.islands: keep keeps them)";
  out.push_back({{"kind", "islands_dropped"},
                 {"message", m.str()},
                 {"count", r.dropped_components},
                 {"voxels", r.dropped_voxels},
                 {"volume_mL", volume_mL},
                 {"percent_of_tissue", 100 * fraction}});
}

/// The mesh's name of a region (its cavities may be derived rather than configured).
std::string region_name(std::uint8_t role, const meshing::VoxelMesh& mesh) {
  if (role == imaging::RoleVolume::kOutside) return "outside";
  return mesh.cavities.at(std::size_t(role - imaging::RoleVolume::kFirstCavity)).name;
}

void add_thin_wall_warning(json& out, const MeshFacts& f) {
  const meshing::ThinWalls& t = f.thin_walls;
  if (t.walls.empty()) return;
  double spacing = INFINITY;
  json walls = json::array();
  std::ostringstream where;
  for (const meshing::ThinWall& w : t.walls) {
    spacing = std::min(spacing, w.spacing_mm);
    const std::string a = region_name(w.region_a, f.mesh), b = region_name(w.region_b, f.mesh);
    const Eigen::Vector3d& p = w.position_mm;
    walls.push_back({{"between", {a, b}},
                     {"voxels", w.voxels},
                     {"direct_contacts", w.direct_contacts},
                     {"position_mm", {p[0], p[1], p[2]}}});
    where << (walls.size() > 1 ? "; " : "") << a << " | " << b << ": "
          << (w.voxels ? std::to_string(w.voxels) + " voxels" : std::to_string(w.direct_contacts) + " faces touching")
          << " near (" << num(p[0], 4) << ", " << num(p[1], 4) << ", " << num(p[2], 4) << ") mm";
  }
  const double suggested = nice_floor(spacing / 2);
  std::ostringstream m;
  m << "walls thinner than two voxels at " << t.voxels << " myocardium voxels"
    << (t.direct_contacts ? " and " + std::to_string(t.direct_contacts) + " faces where two cavities touch" : "")
    << " (" << where.str() << "); for two voxels across, set " << voxel_size_key(f.geometry) << " to " << num(suggested)
    << " mm or less (now " << num(spacing) << " mm)";
  out.push_back({{"kind", "thin_wall"},
                 {"message", m.str()},
                 {"voxels", t.voxels},
                 {"direct_contacts", t.direct_contacts},
                 {"walls", walls},
                 {"voxel_size_mm", spacing},
                 {"suggested_voxel_size_mm", suggested}});
}

void add_unmapped_labels_warning(json& out, const MeshFacts& f) {
  const auto& unmapped = f.source.unmapped_labels;
  if (unmapped.empty()) return;
  json labels = json::array();
  std::ostringstream m;
  m << "label" << (unmapped.size() > 1 ? "s" : "");
  for (std::size_t i = 0; i < unmapped.size(); ++i) {
    const auto [label, voxels] = unmapped[i];
    labels.push_back(
        {{"label", label}, {"voxels", voxels}, {"volume_mL", double(voxels) * f.source.voxel_volume_mm3 / 1000}});
    if (i < 20) m << (i ? ", " : " ") << label << " (" << voxels << " voxels)";
  }
  if (unmapped.size() > 20) m << " and " << unmapped.size() - 20 << " more";
  m << " of the source " << (unmapped.size() > 1 ? "are" : "is")
    << " in no role of geometry.roles and meshed as outside";
  out.push_back({{"kind", "unmapped_labels"}, {"message", m.str()}, {"labels", labels}});
}

}  // namespace

SourceCensus take_source_census(const Imported& im, const GeometryParams& geo) {
  SourceCensus c;
  const std::map<std::int32_t, std::int64_t> histogram = label_histogram(im.labels);
  c.voxel_volume_mm3 = im.labels.grid.voxel_volume();
  for (const auto& [label, n] : histogram)
    if (label != 0 && !mapped(geo.roles, label)) c.unmapped_labels.emplace_back(label, n);
  if (geo.source == GeometrySource::surface) {
    c.tissue_mL = im.source.at("surface_tissue_volume_mL").get<double>();
    for (const auto& [name, v] : im.source.at("surface_cavity_volume_mL").items()) c.cavity_mL[name] = v.get<double>();
    c.volume_basis = "the surface's enclosed volume";
  } else if (!analytic_lv_volumes(im, geo.roles, c)) {
    c.tissue_mL = double(voxels_of(histogram, geo.roles.myocardium)) * c.voxel_volume_mm3 / 1000;
    for (const auto& [name, labels] : geo.roles.cavities)
      c.cavity_mL[name] = double(voxels_of(histogram, labels)) * c.voxel_volume_mm3 / 1000;
    c.volume_basis = "its labelled voxels";
  }
  return c;
}

json mesh_warnings(const MeshFacts& facts) {
  json out = json::array();
  add_volume_warnings(out, facts);
  add_islands_warning(out, facts);
  add_thin_wall_warning(out, facts);
  add_unmapped_labels_warning(out, facts);
  return out;
}

std::pair<json, std::string> long_axis_json(const meshing::VoxelMesh& m, const meshing::BaseSpec& base) {
  const auto base_faces = std::count(m.surface_tag.begin(), m.surface_tag.end(), meshing::SurfaceTag::kBase);
  if (base_faces == 0 && base.mode != meshing::BaseSpec::Mode::plane)
    return {nullptr,
            base.mode == meshing::BaseSpec::Mode::none
                ? "geometry.base.mode is none: no base, so no long axis"
                : "no myocardium face is base (the automatic base found no cavity opening, or no face on its plane): "
                  "no long axis"};
  auto vec = [](const Eigen::Vector3d& v) { return json{v[0], v[1], v[2]}; };
  return {json{{"base_point_mm", vec(m.axis.base_point)},
               {"base_normal", vec(m.axis.base_normal)},
               {"apex_mm", vec(m.axis.apex)}},
          ""};
}

std::vector<std::string> add_warnings(json& report, const MeshFacts& facts) {
  const auto [axis, no_axis] = long_axis_json(facts.mesh, facts.geometry.base);
  report["long_axis"] = axis;
  if (!no_axis.empty()) report["long_axis_reason"] = no_axis;
  report["warnings"] = mesh_warnings(facts);
  std::vector<std::string> lines = warning_lines(report);
  if (!no_axis.empty()) lines.insert(lines.begin(), no_axis);
  return lines;
}

std::vector<std::string> warning_lines(const json& report) {
  std::vector<std::string> lines;
  if (report.contains("warnings"))
    for (const json& w : report["warnings"]) lines.push_back("warning: " + w.at("message").get<std::string>());
  return lines;
}

}  // namespace cardio::pipeline
