#include "config/mesh_config.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "cardio/core/error.hpp"

namespace cardio::pipeline {

const config::Choices<FibreSource> kFibreSources{{"phantom", FibreSource::phantom},
                                                 {"rule", FibreSource::rule},
                                                 {"vectors", FibreSource::vectors},
                                                 {"angles", FibreSource::angles},
                                                 {"uniform", FibreSource::uniform}};
const config::Choices<PhantomFibres> kPhantomFibres{{"land_benchmark", PhantomFibres::land_benchmark},
                                                    {"streeter", PhantomFibres::streeter}};
const config::Choices<PhantomKind> kPhantomKinds{{"lv_ellipsoid", PhantomKind::lv_ellipsoid},
                                                 {"biventricular", PhantomKind::biventricular}};

std::string_view name_of(FibreSource source) { return config::name_in(kFibreSources, source); }
std::string_view name_of(PhantomFibres fibres) { return config::name_in(kPhantomFibres, fibres); }
std::string_view name_of(PhantomKind kind) { return config::name_in(kPhantomKinds, kind); }
namespace {

using config::Node;
using config::Range;
using units::Dimension;

constexpr long kMaxLabel = 2147483647L;

/// A path relative to the config file's directory (absolute paths unchanged).
std::filesystem::path input_path(const Node& n, const std::string& key, const std::filesystem::path& base) {
  const std::filesystem::path p = n.text(key, std::nullopt);
  if (p.empty()) n.fail(key, "expected a file path");
  return p.is_absolute() ? p : base / p;
}

std::vector<std::int32_t> to_labels(const std::vector<long>& v) { return {v.begin(), v.end()}; }

LabelRoles parse_roles(const Node& n, const LabelRoles& fallback) {
  if (!n.has("myocardium") && !n.has("cavities")) {
    // Defaults of the chosen source; record them so that the resolved config shows them.
    LabelRoles r = fallback;
    std::vector<long> myo(fallback.myocardium.begin(), fallback.myocardium.end());
    n.integers("myocardium", myo, 0, kMaxLabel);
    return r;
  }
  LabelRoles r;
  r.myocardium = to_labels(n.integers("myocardium", std::nullopt, 0, kMaxLabel));
  for (const Node& c : n.list("cavities")) {
    const std::string name = c.text("name", std::nullopt);
    if (name.empty()) c.fail("name", "expected a cavity name, e.g. lv");
    for (const auto& [other, labels] : r.cavities)
      if (other == name) c.fail("name", "cavity '" + name + "' is listed twice");
    r.cavities.emplace_back(name, to_labels(c.integers("labels", std::nullopt, 0, kMaxLabel)));
  }
  // Without the key the source's own cavities stay (a surface's endocardia, a phantom's pools): the
  // resolved config records only roles.myocardium, and must run again as it is.
  if (!n.has("cavities")) r.cavities = fallback.cavities;
  // A label with two roles is ambiguous.
  std::vector<std::int32_t> all = r.myocardium;
  for (const auto& [name, labels] : r.cavities) all.insert(all.end(), labels.begin(), labels.end());
  std::sort(all.begin(), all.end());
  const auto dup = std::adjacent_find(all.begin(), all.end());
  if (dup != all.end()) n.fail("", "label " + std::to_string(*dup) + " is given two roles");
  if (r.myocardium.empty()) n.fail("myocardium", "expected at least one myocardium label");
  return r;
}

/// geometry.derive_cavities: the cavities come from the myocardium, not from labels.
imaging::DeriveCavitiesOptions parse_derive_cavities(const Node& geometry, const Node& roles, LabelRoles& r) {
  if (roles.has("cavities"))
    roles.fail("cavities", "geometry.derive_cavities derives the cavities; remove one of the two");
  r.cavities.clear();  // a phantom's or a surface's default cavities are derived instead
  imaging::DeriveCavitiesOptions o;
  o.closing_radius_mm = geometry.child("derive_cavities")
                            .quantity("closing_radius", Dimension::length, o.closing_radius_mm, Range::positive());
  return o;
}

meshing::BaseSpec parse_base(const Node& n) {
  meshing::BaseSpec b;
  using Mode = meshing::BaseSpec::Mode;
  b.mode = n.choice_of<Mode>("mode", {{"automatic", Mode::automatic}, {"plane", Mode::plane}, {"none", Mode::none}},
                             Mode::automatic);
  if (b.mode == meshing::BaseSpec::Mode::plane) {
    b.point = n.vec3("point", Dimension::length, std::nullopt);
    b.normal = n.vec3("normal", Dimension::dimensionless, std::nullopt);
    if (!(b.normal.norm() > 0)) n.fail("normal", "expected a non-zero direction (apex to base)");
  } else {
    for (const char* k : {"point", "normal"}) n.reject_if_present(k, "used with mode: plane only");
  }
  // auto: 3/4 of the largest voxel spacing (meshing::BaseSpec keeps 0 for it).
  b.tolerance = n.quantity_or_auto("tolerance", Dimension::length, Range::positive()).value_or(0.0);
  return b;
}

PhantomParams parse_phantom(const Node& n) {
  PhantomParams p;
  p.kind = n.choice_of("kind", kPhantomKinds, PhantomKind::lv_ellipsoid);
  p.voxel_size = n.quantity("voxel_size", Dimension::length, 1.0, Range::open(0.05, 50));
  p.fibres = n.choice_of("fibres", kPhantomFibres, PhantomFibres::land_benchmark);
  p.rotation_axis = n.vec3("rotation_axis", Dimension::dimensionless, Eigen::Vector3d::UnitZ());
  if (!(p.rotation_axis.norm() > 0)) n.fail("rotation_axis", "expected a non-zero axis");
  p.rotation_axis.normalize();
  p.rotation_angle = n.quantity("rotation_angle", Dimension::angle, 0.0);
  return p;
}

/// The cavities of a surface: `endocardia` as given (an empty list: none), else the default pair for
/// one file, or the endocardium patches' cavities in order (classes 3, 4, ...).
std::vector<std::pair<int, std::string>> parse_endocardia(const Node& n, const std::vector<Node>& patches) {
  std::vector<std::pair<int, std::string>> endo;
  if (n.has("endocardia")) {
    for (const Node& e : n.list("endocardia"))
      endo.emplace_back(static_cast<int>(e.integer("class", std::nullopt, -kMaxLabel, kMaxLabel)),
                        e.text("cavity", std::nullopt));
    return endo;
  }
  if (patches.empty()) return {{3, "lv"}, {4, "rv"}};
  for (const Node& p : patches) {
    if (p.text("role", "") != "endocardium") continue;
    const std::string cavity = p.text("cavity", std::nullopt);
    const bool known = std::any_of(endo.begin(), endo.end(), [&](const auto& e) { return e.second == cavity; });
    if (!known) endo.emplace_back(int(3 + endo.size()), cavity);
  }
  return endo;
}

/// One entry of `patches`: a file with a role (its class from the surface's classes) or a class array.
SurfacePatchParams parse_patch(const Node& p, const SurfaceParams& s, const std::filesystem::path& base) {
  SurfacePatchParams patch;
  patch.file = input_path(p, "file", base);
  if (p.has("class_array")) {
    p.reject_if_present("role", "a patch has either a role or a class_array");
    if (p.text("class_array", std::nullopt) != s.class_array)
      p.fail("class_array", "must be the surface's class_array ('" + s.class_array + "')");
    patch.role = "classes";
    return patch;
  }
  const std::string role = p.choice("role", {"epicardium", "endocardium", "base", "valve"}, std::nullopt);
  if (role == "epicardium") patch.patch_class = s.epicardium_class;
  if (role == "base") patch.patch_class = s.base_class;
  if (role == "valve") patch.patch_class = s.base_class;  // a valve plane closes tissue like the base
  patch.role = role;
  if (role == "valve") patch.role += " " + p.text("name", std::nullopt);
  if (role == "endocardium") {
    const std::string cavity = p.text("cavity", std::nullopt);
    for (const auto& [cls, name] : s.endocardia)
      if (name == cavity) patch.patch_class = cls;
    if (!patch.patch_class) p.fail("cavity", "'" + cavity + "' is not among the surface's endocardia");
    patch.role += " " + cavity;
  }
  return patch;
}

SurfaceParams parse_surface(const Node& n, const std::filesystem::path& base) {
  SurfaceParams s;
  s.voxel_size = n.quantity("voxel_size", Dimension::length, std::nullopt, Range::positive());
  s.merge_tolerance = n.quantity("merge_tolerance", Dimension::length, 1e-3, Range::non_negative());
  s.stitch_width = n.quantity("stitch_width", Dimension::length, 3.0, Range::non_negative());
  s.cap_open_rims = n.boolean("cap_open_rims", false);
  s.class_array = n.text("class_array", "class");
  s.base_class = static_cast<int>(n.integer("base_class", 1, -kMaxLabel, kMaxLabel));
  s.epicardium_class = static_cast<int>(n.integer("epicardium_class", 2, -kMaxLabel, kMaxLabel));
  s.as_patches = n.has("patches");
  if (s.as_patches) n.reject_if_present("file", "give either one file or a list of patches");
  if (n.has("file") && n.yaml_text("file").starts_with("["))
    n.fail("file", "expected one file; list several under patches: [{file: .., role: epicardium}, ..]");
  const std::vector<Node> patches = s.as_patches ? n.list("patches") : std::vector<Node>{};
  if (s.as_patches && patches.empty()) n.fail("patches", "expected at least one {file, role} entry");
  s.endocardia = parse_endocardia(n, patches);
  if (!s.as_patches) s.patches.push_back({input_path(n, "file", base), "classes", std::nullopt});
  for (const Node& p : patches) s.patches.push_back(parse_patch(p, s, base));
  return s;
}

BoxParams parse_box(const Node& n) {
  BoxParams b;
  b.voxel_size = n.quantity("voxel_size", Dimension::length, std::nullopt, Range::positive());
  b.size = n.vec3("size", Dimension::length, std::nullopt);
  b.origin = n.vec3("origin", Dimension::length, Eigen::Vector3d::Zero());
  for (int a = 0; a < 3; ++a) {
    const double cells = b.size[a] / b.voxel_size;
    if (!(b.size[a] > 0) || std::abs(cells - std::round(cells)) > 1e-9 * cells)
      n.fail("size", "each edge must be a positive multiple of voxel_size (" + std::to_string(b.voxel_size) + " mm)");
  }
  return b;
}

/// geometry.stack: the grid of a stack of 2-D slices, whose files carry none. spacing: one length
/// (cubic voxels) or [x, y, z]; origin: [x, y, z], the centre of the first slice's first pixel.
imaging::StackGeometry parse_stack(const Node& n) {
  Eigen::Vector3d spacing;
  if (n.has("spacing") && n.yaml_text("spacing").starts_with('['))
    spacing = n.vec3("spacing", Dimension::length, std::nullopt);
  else
    spacing.setConstant(n.quantity("spacing", Dimension::length, std::nullopt, Range::positive()));
  if (!(spacing.minCoeff() > 0)) n.fail("spacing", "expected positive voxel sizes [x, y, z]");
  const Eigen::Vector3d origin = n.vec3("origin", Dimension::length, Eigen::Vector3d::Zero());
  imaging::StackGeometry s;
  for (int a = 0; a < 3; ++a) {
    s.spacing_mm[std::size_t(a)] = spacing[a];
    s.origin_mm[std::size_t(a)] = origin[a];
  }
  return s;
}

/// The source's own section into `g`; returns the label roles the source implies (used where the
/// config gives none).
LabelRoles parse_source(const Node& n, const std::filesystem::path& base, GeometryParams& g) {
  LabelRoles default_roles;
  if (g.source == GeometrySource::box) {
    g.box = parse_box(n.child("box"));
    default_roles.myocardium = {1};  // the box is label 1, no cavity
    for (const char* k : {"labels", "surface", "phantom"}) n.reject_if_present(k, "used with the matching source only");
  } else if (g.source == GeometrySource::phantom) {
    g.phantom = parse_phantom(n.child_or_empty("phantom"));
    // Phantom labels (modules/phantoms): 1 LV myocardium, 2 LV cavity, 3 RV myocardium, 4 RV cavity.
    default_roles.myocardium = {1};
    default_roles.cavities = {{"lv", {2}}};
    if (g.phantom.kind == PhantomKind::biventricular) {
      default_roles.myocardium = {1, 3};
      default_roles.cavities = {{"lv", {2}}, {"rv", {4}}};
    }
    for (const char* k : {"labels", "surface", "box"}) n.reject_if_present(k, "used with the matching source only");
  } else if (g.source == GeometrySource::image) {
    g.labels_file = input_path(n, "labels", base);
    if (n.has("stack")) g.stack = parse_stack(n.child("stack"));
    for (const char* k : {"phantom", "surface", "box"}) n.reject_if_present(k, "used with the matching source only");
  } else {
    g.surface = parse_surface(n.child("surface"), base);
    // Rasterized surfaces: 1 myocardium, 2 + c the c-th endocardium's cavity.
    default_roles.myocardium = {1};
    for (std::size_t c = 0; c < g.surface.endocardia.size(); ++c)
      default_roles.cavities.emplace_back(g.surface.endocardia[c].second,
                                          std::vector<std::int32_t>{std::int32_t(2 + c)});
    for (const char* k : {"phantom", "labels", "box"}) n.reject_if_present(k, "used with the matching source only");
  }
  return default_roles;
}

GeometryParams parse_geometry(const Node& n, const std::filesystem::path& base) {
  GeometryParams g;
  g.source = n.choice_of<GeometrySource>("source",
                                         {{"phantom", GeometrySource::phantom},
                                          {"image", GeometrySource::image},
                                          {"surface", GeometrySource::surface},
                                          {"box", GeometrySource::box}},
                                         std::nullopt);
  const LabelRoles default_roles = parse_source(n, base, g);
  if (g.source != GeometrySource::image) n.reject_if_present("stack", "used with source: image only");
  const Node roles = n.child_or_empty("roles");
  if (g.source == GeometrySource::image && !roles.has("myocardium")) {
    if (!n.has("roles"))
      n.fail("roles",
             "an image needs its label roles: roles: {myocardium: [..], cavities: [{name: lv, labels: [..]}]}");
    (void)roles.integers("myocardium", std::nullopt, 0, kMaxLabel);  // required: the message names a misspelt key
  }
  g.roles = parse_roles(roles, default_roles);
  if (n.has("derive_cavities")) g.derive_cavities = parse_derive_cavities(n, roles, g.roles);
  g.element_size = n.quantity_or_auto("element_size", Dimension::length, Range::positive());
  g.label_vote = n.choice_of<imaging::LabelVote>(
      "label_vote", {{"majority", imaging::LabelVote::majority}, {"nearest", imaging::LabelVote::nearest}},
      imaging::LabelVote::majority);
  g.keep_islands = n.choice("islands", {"drop", "keep"}, "drop") == "keep";
  // Hearts are fitted by default (phantom: analytic surfaces; surface: its patches; image: smoothed
  // label contours, surfaces/projection.hpp); a box's faces are already exact.
  const bool box = g.source == GeometrySource::box;
  g.boundary_fit =
      n.choice_of<BoundaryFit>("boundary_fit", {{"smooth", BoundaryFit::smooth}, {"staircase", BoundaryFit::staircase}},
                               box ? BoundaryFit::staircase : BoundaryFit::smooth);
  if (g.boundary_fit == BoundaryFit::smooth && box)
    n.fail("boundary_fit", "a box has flat faces on the voxel grid already; use staircase");
  g.base = parse_base(n.child_or_empty("base"));
  g.volume_tolerance = n.quantity("volume_tolerance", Dimension::dimensionless, 0.05, Range::positive());
  return g;
}

FibreParams parse_fibres(const Node& n, GeometrySource geometry, const std::filesystem::path& base) {
  FibreParams f;
  f.source = n.choice_of("source", kFibreSources,
                         geometry == GeometrySource::phantom ? FibreSource::phantom : FibreSource::rule);
  const bool from_files = f.source == FibreSource::vectors || f.source == FibreSource::angles;
  if (f.source == FibreSource::uniform) {
    f.uniform_fibre = n.vec3("direction", Dimension::dimensionless, std::nullopt);
    f.uniform_sheet = n.vec3("sheet_direction", Dimension::dimensionless, std::nullopt);
    if (!(f.uniform_fibre.norm() > 0)) n.fail("direction", "expected a non-zero fibre direction");
    f.uniform_fibre.normalize();
    f.uniform_sheet -= f.uniform_sheet.dot(f.uniform_fibre) * f.uniform_fibre;
    if (!(f.uniform_sheet.norm() > 1e-6)) n.fail("sheet_direction", "expected a direction not parallel to the fibre");
    f.uniform_sheet.normalize();
  } else {
    for (const char* k : {"direction", "sheet_direction"}) n.reject_if_present(k, "used with source: uniform only");
  }
  if (f.source == FibreSource::phantom && geometry != GeometrySource::phantom)
    n.fail("source", "fibres from the phantom need geometry.source: phantom");
  if (f.source == FibreSource::vectors) {
    f.fibre_file = input_path(n, "fibre", base);
    if (n.has("sheet")) f.sheet_file = input_path(n, "sheet", base);
  } else {
    for (const char* k : {"fibre", "sheet"}) n.reject_if_present(k, "used with source: vectors only");
  }
  if (from_files)
    f.components = n.choice_of<imaging::VectorAxes>(
        "components", {{"physical", imaging::VectorAxes::physical}, {"index", imaging::VectorAxes::index}},
        imaging::VectorAxes::physical);
  else
    n.reject_if_present("components", "used with source: vectors or angles only");
  if (f.source == FibreSource::angles) {
    f.azimuth_file = input_path(n, "azimuth", base);
    f.elevation_file = input_path(n, "elevation", base);
    f.angle_unit = n.choice_of<imaging::AngleUnit>(
        "angle_unit", {{"deg", imaging::AngleUnit::degrees}, {"rad", imaging::AngleUnit::radians}},
        imaging::AngleUnit::degrees);
    const Node axes = n.child_or_empty("reference_axes");
    f.reference_axes.col(0) = axes.vec3("x", Dimension::dimensionless, Eigen::Vector3d::UnitX());
    f.reference_axes.col(1) = axes.vec3("y", Dimension::dimensionless, Eigen::Vector3d::UnitY());
    f.reference_axes.col(2) = axes.vec3("z", Dimension::dimensionless, Eigen::Vector3d::UnitZ());
    if ((f.reference_axes.transpose() * f.reference_axes - Eigen::Matrix3d::Identity()).cwiseAbs().maxCoeff() > 1e-6)
      n.fail("reference_axes", "expected three orthonormal axes x, y, z");
  } else {
    for (const char* k : {"azimuth", "elevation", "angle_unit", "reference_axes"})
      n.reject_if_present(k, "used with source: angles only");
  }
  if (from_files)
    f.fill_missing_by_rule = n.choice("missing", {"error", "rule"}, "error") == "rule";
  else
    n.reject_if_present("missing", "used with source: vectors or angles only");
  // Rule-based angles (also used to fill missing voxels). Defaults: helix +60/-60 deg
  // (Streeter et al. 1969 range), sheet -65/+25 deg (Bayer et al. 2012).
  const Node rule = n.child_or_empty("rule");
  f.rule.helix_endo = rule.quantity("helix_endo", Dimension::angle, f.rule.helix_endo,
                                    Range::closed(-std::numbers::pi / 2, std::numbers::pi / 2));
  f.rule.helix_epi = rule.quantity("helix_epi", Dimension::angle, f.rule.helix_epi,
                                   Range::closed(-std::numbers::pi / 2, std::numbers::pi / 2));
  f.rule.sheet_endo = rule.quantity("sheet_endo", Dimension::angle, f.rule.sheet_endo,
                                    Range::closed(-std::numbers::pi / 2, std::numbers::pi / 2));
  f.rule.sheet_epi = rule.quantity("sheet_epi", Dimension::angle, f.rule.sheet_epi,
                                   Range::closed(-std::numbers::pi / 2, std::numbers::pi / 2));
  return f;
}

}  // namespace

bool is_heart_config(config::Document& doc) { return doc.root().has("geometry"); }

MeshConfig parse_mesh_sections(config::Document& doc) {
  Node root = doc.root();
  const std::filesystem::path base = std::filesystem::path(doc.file_name()).parent_path();
  MeshConfig c;
  c.geometry = parse_geometry(root.child("geometry"), base);
  c.fibres = parse_fibres(root.child_or_empty("fibres"), c.geometry.source, base);
  c.density = root.child_or_empty("tissue").quantity("density", Dimension::density, 1.06, Range::positive());
  return c;
}

MeshConfig parse_mesh_config(config::Document& doc, bool check_unknown) {
  Node root = doc.root();
  const std::string name = root.text("name", "heart");  // read first: it heads the resolved config
  MeshConfig c = parse_mesh_sections(doc);
  c.name = name;
  const Node out = root.child_or_empty("output");
  c.write_surfaces = out.boolean("surfaces", true);
  c.draw_figures = out.boolean("figures", true);
  c.max_output_bytes =
      std::round(out.quantity("max_size_warning", Dimension::data_size, 4.0, Range::non_negative()) * 1e9);
  if (check_unknown) doc.check_no_unknown_keys();
  return c;
}

std::string surface_files_text(const SurfaceParams& s) {
  std::string text;
  for (const SurfacePatchParams& p : s.patches) text += (text.empty() ? "" : ", ") + p.file.string();
  return text;
}

std::vector<std::filesystem::path> input_files(const MeshConfig& c) {
  std::vector<std::filesystem::path> files;
  if (c.geometry.source == GeometrySource::image) files.push_back(c.geometry.labels_file);
  if (c.geometry.source == GeometrySource::surface)
    for (const SurfacePatchParams& p : c.geometry.surface.patches) files.push_back(p.file);
  for (const auto* p : {&c.fibres.fibre_file, &c.fibres.sheet_file, &c.fibres.azimuth_file, &c.fibres.elevation_file})
    if (!p->empty()) files.push_back(*p);
  return files;
}

}  // namespace cardio::pipeline
