#include "config/run_config.hpp"

#include "cardio/core/error.hpp"

namespace cardio::pipeline {
namespace {

using config::Node;
using config::Range;
using units::Dimension;

int axis_index(const Node& n, const std::string& key, const std::string& fallback) {
  const std::string a = n.choice(key, {"x", "y", "z"}, fallback);
  return a[0] - 'x';
}

mechanics::BlockSpec parse_block(const Node& n) {
  mechanics::BlockSpec b;
  const Eigen::Vector3i c = n.int3("voxels", std::nullopt, 1, 400);
  b.nx = c[0], b.ny = c[1], b.nz = c[2];
  b.h = n.quantity("voxel_size", Dimension::length, std::nullopt, Range::positive());
  b.origin = n.vec3("origin", Dimension::length, Eigen::Vector3d::Zero());
  return b;
}

mechanics::FibreField parse_fibres(const Node& n) {
  mechanics::FibreField f;
  using Kind = mechanics::FibreField::Kind;
  f.kind = n.choice_of<Kind>(
      "type", {{"uniform", Kind::uniform}, {"rotating", Kind::rotating}, {"random", Kind::random}}, Kind::uniform);
  auto unit = [&](const std::string& key, const Eigen::Vector3d& fallback) {
    const Eigen::Vector3d v = n.vec3(key, Dimension::dimensionless, fallback);
    if (!(v.norm() > 0)) n.fail(key, "expected a non-zero direction vector");
    return Eigen::Vector3d(v.normalized());
  };
  if (f.kind != Kind::random) f.direction = unit("direction", Eigen::Vector3d::UnitX());
  if (f.kind == Kind::uniform) {
    f.sheet = unit("sheet", Eigen::Vector3d::UnitY());
  } else if (f.kind == Kind::rotating) {
    f.axis = unit("axis", Eigen::Vector3d::UnitZ());
    f.angle_start = n.quantity("angle_start", Dimension::angle, std::nullopt);
    f.angle_end = n.quantity("angle_end", Dimension::angle, std::nullopt);
  } else {
    for (const char* k : {"direction", "sheet", "axis"}) n.reject_if_present(k, "random fibres take only a seed");
    f.seed = static_cast<std::uint64_t>(n.integer("seed", 1, 0, 1L << 62));
  }
  return f;
}

MaterialParams parse_material(const Node& n) {
  MaterialParams m;
  m.model = n.choice_of<MaterialModel>(
      "model",
      {{"isotropic", MaterialModel::isotropic}, {"transversely_isotropic", MaterialModel::transversely_isotropic}},
      MaterialModel::isotropic);
  m.density = n.quantity("density", Dimension::density, 1.06, Range::positive());
  const auto poisson = Range::open(-1.0, 0.5);
  if (m.model == MaterialModel::isotropic) {
    const double E = n.quantity("youngs_modulus", Dimension::pressure, std::nullopt, Range::positive());
    const double nu = n.number("poisson_ratio", std::nullopt, poisson);
    m.constants = mechanics::ElasticConstants::isotropic(E, nu);
  } else {
    const double Ef = n.quantity("E_fibre", Dimension::pressure, std::nullopt, Range::positive());
    const double Ec = n.quantity("E_cross", Dimension::pressure, std::nullopt, Range::positive());
    const double G = n.quantity("shear_modulus", Dimension::pressure, std::nullopt, Range::positive());
    const bool has_K = n.has("bulk_modulus"), has_nu = n.has("poisson_ratio");
    if (has_K == has_nu)
      n.fail("", "give exactly one of bulk_modulus or poisson_ratio for a transversely isotropic material");
    try {
      if (has_K)
        m.constants = mechanics::ElasticConstants::transversely_isotropic_bulk(
            Ef, Ec, G, n.quantity("bulk_modulus", Dimension::pressure, std::nullopt, Range::positive()));
      else
        m.constants = mechanics::ElasticConstants::transversely_isotropic(
            Ef, Ec, G, n.number("poisson_ratio", std::nullopt, Range::open(-1.0, 1.0)));
    } catch (const Error& e) {
      std::string msg = e.what();
      n.fail("", msg.rfind("material: ", 0) == 0 ? msg.substr(10) : msg);
    }
  }
  using Law = mechanics::AxisLaw::Kind;
  m.law = n.choice_of<Law>("axial_law", {{"linear", Law::linear}, {"exponential", Law::exponential}}, Law::linear);
  if (m.law == Law::exponential) {
    m.exponent[0] = n.number("b_f", std::nullopt, Range::positive());
    m.exponent[1] = n.number("b_s", std::nullopt, Range::positive());
    m.exponent[2] = n.number("b_n", std::nullopt, Range::positive());
  }
  return m;
}

ElementParams parse_element(const Node& n) {
  ElementParams e;
  e.type = n.choice_of<BlockElement>(
      "type", {{"bourguignon_cani", BlockElement::bourguignon_cani}, {"baudet_cube", BlockElement::baudet_cube}},
      BlockElement::bourguignon_cani);
  e.damping_time = n.quantity("damping_time", Dimension::time, 0.0, Range::non_negative());
  // Baudet's edge springs already resist bending; its control only removes the M2 spring set's
  // zero-energy modes, so a small factor (docs/calibration.md).
  e.hourglass_factor =
      n.number("hourglass_factor", e.type == BlockElement::bourguignon_cani ? 1.0 : 0.05, Range::non_negative());
  if (e.type == BlockElement::bourguignon_cani) {
    e.volume_terms = n.boolean("volume_terms", true);
    e.radial_share = n.number("radial_share", 0.0, Range::closed(0, 1));
    n.reject_if_present("corrective_forces", "Baudet's corrective forces belong to type: baudet_cube");
  } else {
    e.corrective_forces = n.boolean("corrective_forces", true);
    for (const char* k : {"volume_terms", "radial_share"})
      n.reject_if_present(k, "volume terms belong to type: bourguignon_cani");
  }
  return e;
}

ExperimentParams parse_experiment(const Node& n) {
  ExperimentParams x;
  x.kind = n.choice_of<ExperimentKind>("type",
                                       {{"elongation", ExperimentKind::elongation},
                                        {"shear", ExperimentKind::shear},
                                        {"inflation", ExperimentKind::inflation},
                                        {"cantilever", ExperimentKind::cantilever}},
                                       std::nullopt);
  if (x.kind == ExperimentKind::elongation) {
    x.axis = axis_index(n, "axis", "x");
    x.traction = n.choice("control", {"displacement", "traction"}, "displacement") == "traction";
    if (x.traction) {
      x.stress = n.quantity("stress", Dimension::pressure, std::nullopt);
      n.reject_if_present("strain", "strain is prescribed with control: displacement only");
    } else {
      x.strain = n.number("strain", 0.01, Range::open(-0.9, 10));
      n.reject_if_present("stress", "stress is prescribed with control: traction only");
    }
  } else if (x.kind == ExperimentKind::shear) {
    x.axis = axis_index(n, "direction", "x");
    x.shear_normal = axis_index(n, "normal", "z");
    if (x.shear_normal == x.axis) n.fail("normal", "must differ from the shear direction");
    x.strain = n.number("strain", 0.01, Range::open(-1, 1));
  } else if (x.kind == ExperimentKind::inflation) {
    x.pressure = n.quantity("pressure", Dimension::pressure, std::nullopt);
  } else {
    x.gravity = n.vec3("gravity", Dimension::acceleration, Eigen::Vector3d(0, 0, -units::kStandardGravity));
  }
  return x;
}

SolverParams parse_solver(const Node& n) {
  SolverParams s;
  s.mode = n.choice_of<SolverMode>(
      "mode", {{"quasi_static", SolverMode::quasi_static}, {"dynamic", SolverMode::dynamic}}, SolverMode::quasi_static);
  s.time_step = parse_time_step(n);
  if (s.mode == SolverMode::quasi_static) {
    s.load_steps = static_cast<int>(n.integer("load_steps", 1, 1, 100000));
    s.residual_tol = n.number("residual_tol", 1e-8, Range::open(0, 1));
    s.max_iterations = n.integer("max_iterations", 2000000, 1, 1000000000);
    for (const char* k : {"t_end", "ramp_time", "scheme"}) n.reject_if_present(k, "used with mode: dynamic only");
  } else {
    s.scheme = n.choice("scheme", {"verlet", "semi_implicit_euler"}, "verlet") == "verlet"
                   ? mechanics::Scheme::verlet
                   : mechanics::Scheme::semi_implicit_euler;
    s.t_end = n.quantity("t_end", Dimension::time, std::nullopt, Range::positive());
    s.ramp_time = n.quantity("ramp_time", Dimension::time, 0.0, Range::non_negative());
    for (const char* k : {"load_steps", "residual_tol", "max_iterations"})
      n.reject_if_present(k, "used with mode: quasi_static only");
  }
  return s;
}

}  // namespace

RunConfig parse_run_config(config::Document& doc) {
  Node root = doc.root();
  RunConfig c;
  c.name = root.text("name", "experiment");
  c.experiment = parse_experiment(root.child("experiment"));
  c.block = parse_block(root.child("block"));
  c.fibres = parse_fibres(root.child_or_empty("fibres"));
  c.material = parse_material(root.child("material"));
  c.element = parse_element(root.child_or_empty("element"));
  c.solver = parse_solver(root.child_or_empty("solver"));
  c.write_vtu = root.child_or_empty("output").boolean("vtu", true);
  if (c.element.type == BlockElement::baudet_cube && c.material.model != MaterialModel::isotropic)
    root.child("element").fail(
        "type", "Baudet's cube is isotropic; use bourguignon_cani for a transversely isotropic material");
  if (c.element.type == BlockElement::baudet_cube && c.material.law != mechanics::AxisLaw::Kind::linear)
    root.child("material").fail("axial_law", "Baudet's cube has linear springs only");
  doc.check_no_unknown_keys();
  // Calibrate once here so that constants the element cannot represent are reported with
  // the config location, before any work.
  try {
    const auto& k = c.material.constants;
    if (c.element.type == BlockElement::baudet_cube)
      (void)mechanics::calibrate_baudet(k.E_fibre, k.nu_cross, c.block.h, c.element.damping_time,
                                        c.element.hourglass_factor);
    else
      (void)mechanics::calibrate_bourguignon_cani(
          k, {c.element.radial_share, c.element.hourglass_factor, c.element.volume_terms, c.material.law,
              c.material.exponent, c.element.damping_time});
  } catch (const Error& e) {
    std::string msg = e.what();
    if (msg.rfind("material: ", 0) == 0) msg = msg.substr(10);
    root.child("material").fail("", msg);
  }
  return c;
}

RunConfig load_run_config(const std::filesystem::path& file, const std::vector<std::string>& overrides,
                          std::string* resolved_yaml) {
  auto doc = config::Document::load_file(file);
  for (const auto& o : overrides) doc->set_override(o);
  RunConfig c = parse_run_config(*doc);
  if (resolved_yaml) *resolved_yaml = doc->resolved_yaml();
  return c;
}

}  // namespace cardio::pipeline
