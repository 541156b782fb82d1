#include "config/heart_config.hpp"

#include <algorithm>
#include <sstream>

#include "cardio/core/error.hpp"
#include "cardio/core/units.hpp"
#include "config/circulation_config.hpp"

namespace cardio::pipeline {

const config::Choices<SimulationMode> kSimulationModes{{"quasi_static", SimulationMode::quasi_static},
                                                       {"beat", SimulationMode::beat}};
const config::Choices<StaticSolver> kStaticSolvers{{"newton", StaticSolver::newton},
                                                   {"dynamic_relaxation", StaticSolver::dynamic_relaxation}};
const config::Choices<StrainReference> kStrainReferences{{"rest", StrainReference::rest},
                                                         {"end_diastole", StrainReference::end_diastole}};

std::string_view name_of(SimulationMode mode) { return config::name_in(kSimulationModes, mode); }
std::string_view name_of(StrainReference reference) { return config::name_in(kStrainReferences, reference); }
std::string_view name_of(StaticSolver solver) { return config::name_in(kStaticSolvers, solver); }
namespace {

using config::Node;
using config::Range;
using units::Dimension;

SurfaceSelector parse_selector(const Node& n) {
  SurfaceSelector s;
  s.where = n.where();
  if (n.has("tag")) {
    s.tag = n.text("tag", std::nullopt);
    n.reject_if_present("plane", "give either tag or plane");
    return s;
  }
  const Node plane = n.child("plane");
  s.point = plane.vec3("point", Dimension::length, std::nullopt);
  s.normal = plane.vec3("normal", Dimension::dimensionless, std::nullopt);
  if (!(s.normal.norm() > 0)) plane.fail("normal", "expected a non-zero normal");
  s.normal.normalize();
  return s;
}

std::vector<SurfaceSelector> parse_selectors(const Node& n, const std::string& key) {
  std::vector<SurfaceSelector> out;
  for (const Node& item : n.list(key)) out.push_back(parse_selector(item));
  return out;
}

/// activation.target: {ejection_fraction: F} or {peak_pressure: P}, and a relative tolerance.
TensionTarget parse_tension_target(const Node& n) {
  TensionTarget t;
  t.where = n.where();
  if (n.has("ejection_fraction")) {
    n.reject_if_present("peak_pressure", "give either ejection_fraction or peak_pressure");
    t.value = n.number("ejection_fraction", std::nullopt, Range::open(0, 1));
  } else {
    t.quantity = TensionTarget::Quantity::peak_pressure;
    t.value = n.quantity("peak_pressure", Dimension::pressure, std::nullopt, Range::open(0, 50)) / units::kMmHgInKPa;
  }
  t.tolerance = n.number("tolerance", 0.02, Range::open(0, 0.5));
  return t;
}

ActivationParams parse_activation(const Node& n, double period, const std::filesystem::path& base) {
  ActivationParams a;
  a.mode = n.choice_of<ActivationMode>("mode",
                                       {{"synchronous", ActivationMode::synchronous},
                                        {"eikonal", ActivationMode::eikonal},
                                        {"image", ActivationMode::image}},
                                       ActivationMode::synchronous);
  if (a.mode == ActivationMode::eikonal) {
    for (const Node& s : n.list("sites")) {
      ActivationParams::Site site;
      site.where = s.where();
      const int given = int(s.has("label")) + int(s.has("point")) + int(s.has("apex"));
      if (given != 1) s.fail(given == 0 ? "point" : "apex", "give exactly one of point, label or apex");
      if (s.has("label")) {
        site.at_label = true;
        site.label = static_cast<std::int32_t>(s.integer("label", std::nullopt, 0, 2147483647L));
      } else if (s.has("apex")) {
        site.apex_of = s.text("apex", std::nullopt);  // a cavity name: resolved on the mesh
      } else {
        site.point = s.vec3("point", Dimension::length, std::nullopt);
      }
      site.time = s.quantity("time", Dimension::time, 0.0, Range::non_negative());
      a.sites.push_back(site);
    }
    if (a.sites.empty()) n.fail("sites", "eikonal activation needs at least one pacing site");
    a.velocity_fibre = n.quantity("velocity_fibre", Dimension::velocity, 0.6, Range::positive());
    a.velocity_cross = n.quantity("velocity_cross", Dimension::velocity, 0.2, Range::positive());
    if (a.velocity_cross > a.velocity_fibre)
      n.fail("velocity_cross", "expected at most velocity_fibre (conduction is fastest along the fibres)");
  } else {
    for (const char* k : {"sites", "velocity_fibre", "velocity_cross"})
      n.reject_if_present(k, "used with mode: eikonal only");
  }
  if (a.mode == ActivationMode::image) {
    const std::filesystem::path p = n.text("image", std::nullopt);
    a.image = p.is_absolute() ? p : base / p;
  } else {
    n.reject_if_present("image", "used with mode: image only");
  }
  const Node t = n.child_or_empty("twitch");
  auto& tw = a.twitch;
  tw.shape = t.choice("shape", {"cosine", "tanh2"}, "cosine") == "tanh2" ? activation::TwitchParams::Shape::tanh2
                                                                         : activation::TwitchParams::Shape::cosine;
  tw.peak_tension_kPa = t.quantity("peak_tension", Dimension::pressure, 60.0, Range::closed(0, 1000));
  tw.delay_ms = t.quantity("delay", Dimension::time, 0.0, Range::non_negative());
  tw.time_to_peak_ms = t.quantity("time_to_peak", Dimension::time, 120.0, Range::positive());
  tw.duration_ms = t.quantity("duration", Dimension::time, 350.0, Range::positive());
  tw.tau_contraction_ms = t.quantity("tau_contraction", Dimension::time, 40.0, Range::positive());
  tw.tau_relaxation_ms = t.quantity("tau_relaxation", Dimension::time, 60.0, Range::positive());
  tw.period_ms = period;
  // The twitch repeats every simulation.period (it has no period key of its own): it must fit in one.
  if (period < tw.delay_ms + tw.duration_ms) {
    std::ostringstream os;
    os << "delay + duration = " << tw.delay_ms + tw.duration_ms << " ms is longer than simulation.period = " << period
       << " ms: shorten activation.twitch.duration (or delay), or lengthen simulation.period";
    t.fail("duration", os.str());
  }
  try {
    tw.validate("activation.twitch");
  } catch (const Error& e) {
    t.fail("", e.what());
  }
  if (n.has("target")) a.target = parse_tension_target(n.child("target"));
  return a;
}

/// The quasi-static solver: Newton (the default where the element has a tangent: sampled axes) or
/// dynamic relaxation (the one-point element), and the keys of the one chosen.
void parse_static_solver(const Node& sim, HeartSimulation& h) {
  const bool has_tangent = h.material.element == mechanics::ElementKind::sampled_axes;
  h.solver =
      sim.choice_of("solver", kStaticSolvers, has_tangent ? StaticSolver::newton : StaticSolver::dynamic_relaxation);
  h.coarse_start = sim.choice("initial_guess", {"rest", "coarse_mesh"}, "rest") == "coarse_mesh";
  if (h.solver == StaticSolver::newton && !has_tangent)
    sim.fail("solver",
             "Newton's method needs the tangent of the sampled-axes element; the one-point element "
             "(material.element: one_point) runs with solver: dynamic_relaxation");
  // residual_tol and max_iterations mean the same for both solvers and for block experiments
  // (solver.residual_tol); their defaults follow the solver: Newton converges quadratically and
  // also checks its update (update_tol), dynamic relaxation only its residual.
  if (h.solver == StaticSolver::dynamic_relaxation) {
    h.residual_tol = sim.number("residual_tol", 1e-8, Range::open(0, 1));
    h.max_iterations = sim.integer("max_iterations", 2000000, 1, 1000000000L);
    for (const char* k : {"update_tol", "load_step_cuts", "linear_solver", "reuse_factorisation"})
      sim.reject_if_present(k, "used with solver: newton only");
    if (h.coarse_start)
      sim.fail("initial_guess",
               "coarse_mesh starts Newton's method; solver: dynamic_relaxation (e.g. "
               "material.element: one_point) starts from rest: set initial_guess: rest");
    return;
  }
  h.residual_tol = sim.number("residual_tol", 1e-6, Range::open(0, 1));
  h.max_iterations = sim.integer("max_iterations", 30, 1, 10000);
  h.update_tol = sim.number("update_tol", 1e-6, Range::open(0, 1));
  h.load_step_cuts = int(sim.integer("load_step_cuts", 10, 0, 50));
  h.linear_solver = sim.choice_of<mechanics::LinearSolver>("linear_solver",
                                                           {{"cholmod", mechanics::LinearSolver::cholmod},
                                                            {"lu", mechanics::LinearSolver::lu},
                                                            {"cg", mechanics::LinearSolver::cg}},
                                                           mechanics::LinearSolver::cholmod);
  h.reuse_factorisation = sim.boolean("reuse_factorisation", true);
}

MyocardiumParams parse_myocardium(const Node& mat) {
  MyocardiumParams m;
  mat.choice("law", {"guccione"}, "guccione");
  m.law.C = mat.quantity("C", Dimension::pressure, std::nullopt, Range::positive());
  m.law.b_f = mat.number("b_f", std::nullopt, Range::non_negative());
  m.law.b_t = mat.number("b_t", std::nullopt, Range::non_negative());
  m.law.b_fs = mat.number("b_fs", std::nullopt, Range::non_negative());
  // The element (docs/calibration.md, "Which element"): the sampled-axes element by default.
  using mechanics::ElementKind;
  m.element = mat.choice_of<ElementKind>(
      "element", {{"sampled_axes", ElementKind::sampled_axes}, {"one_point", ElementKind::one_point}},
      ElementKind::sampled_axes);
  m.law.bulk = mat.quantity("bulk_modulus", Dimension::pressure, m.law.bulk, Range::positive());
  if (m.element == ElementKind::one_point) {
    m.law.hourglass_factor = mat.number("hourglass_factor", 1.0, Range::open(0, 1000));
    for (const char* k : {"active_fraction_sheet", "active_fraction_normal"})
      mat.reject_if_present(k, "cross-fibre active stress needs element: sampled_axes");
    return m;
  }
  // Cross-fibre active stress (hyperelastic.hpp, ActiveCrossFibre): fractions of Ta on S_ss, S_nn.
  m.law.cross_fibre.sheet = mat.number("active_fraction_sheet", 0.0, Range::closed(0, 1));
  m.law.cross_fibre.normal = mat.number("active_fraction_normal", 0.0, Range::closed(0, 1));
  return m;
}

/// An elastic foundation: its surface (default: `default_tag`), stiffness and direction.
FoundationSpec parse_foundation(const Node& n, const std::string& default_tag) {
  FoundationSpec f;
  if (n.has("surface")) {
    f.surface = parse_selector(n.child("surface"));
  } else if (n.has("tag") || default_tag.empty()) {
    f.surface = parse_selector(n);
  } else {
    f.surface.tag = default_tag;
    f.surface.where = n.where();
  }
  f.stiffness = n.quantity("stiffness", Dimension::foundation, std::nullopt, Range::closed(0, 1e4));
  using Direction = mechanics::ElasticFoundation::Direction;
  f.direction = n.choice_of<Direction>(
      "direction", {{"normal", Direction::normal}, {"all", Direction::all}, {"tangential", Direction::tangential}},
      default_tag.empty() ? Direction::all : Direction::normal);
  return f;
}

/// boundary.fixed, boundary.sliding, boundary.elastic and boundary.pericardium.
void parse_boundary(const Node& bc, HeartSimulation& h) {
  h.fixed = parse_selectors(bc, "fixed");
  h.sliding = parse_selectors(bc, "sliding");
  for (const auto& s : h.sliding) {
    if (!s.tag.empty() && s.tag != "base")
      CARDIO_FAIL(s.where << ": sliding: expected {tag: base} or {plane: ...}, got tag '" << s.tag << "'");
  }
  // Robin (elastic) support, e.g. of the base or valve rings (Pfaller et al. 2019): no default surface.
  for (const Node& e : bc.list("elastic")) h.elastic.push_back(parse_foundation(e, ""));
  if (bc.has("pericardium")) h.pericardium = parse_foundation(bc.child("pericardium"), "epicardium");
}

std::vector<PressureSpec> parse_pressures(const Node& loads) {
  std::vector<PressureSpec> out;
  for (const Node& p : loads.list("pressures")) {
    PressureSpec spec;
    spec.surface = parse_selector(p.child("surface"));
    spec.pressure = p.quantity("pressure", Dimension::pressure, std::nullopt, Range::closed(-100, 100));
    out.push_back(spec);
  }
  return out;
}

/// simulation.* of mode quasi_static; the beat's keys and sections are rejected.
void parse_quasi_static(const Node& sim, const Node& root, HeartSimulation& h) {
  h.load_steps = static_cast<int>(sim.integer("load_steps", 10, 1, 100000));
  parse_static_solver(sim, h);
  for (const char* k :
       {"first_onset", "period", "beats", "stop_when_periodic", "dt", "force_dt", "dt_safety", "output_interval",
        "damping_time", "mass_scaling", "selective_mass_scaling", "checkpoint_interval"})
    sim.reject_if_present(k, "used with mode: beat only");
  for (const char* k : {"activation", "circulation", "analysis"})
    root.reject_if_present(k, "used with simulation.mode: beat only");
}

AnalysisParams parse_analysis(const Node& an, const std::vector<circulation::CavityCirculation>& circulation) {
  AnalysisParams a;
  a.reference = an.choice_of("reference", kStrainReferences, StrainReference::rest);
  a.lv_cavity = an.text("lv_cavity", circulation.front().name);
  if (std::none_of(circulation.begin(), circulation.end(), [&](const auto& c) { return c.name == a.lv_cavity; }))
    an.fail("lv_cavity", "expected the name of a cavity in circulation.cavities");
  for (long l : an.integers("lv_labels", std::vector<long>{}, 0, 2147483647L))
    a.lv_labels.push_back(static_cast<std::int32_t>(l));
  if (an.has("anterior_direction")) {
    const Eigen::Vector3d d = an.vec3("anterior_direction", Dimension::dimensionless, std::nullopt);
    if (!(d.norm() > 0)) an.fail("anterior_direction", "expected a non-zero direction");
    a.anterior_direction = d.normalized();
  }
  a.interval = an.quantity("interval", Dimension::time, 5.0, Range::positive());
  if (an.has("long_axis")) {
    const Node ax = an.child("long_axis");
    a.axis_point = ax.vec3("point", Dimension::length, std::nullopt);
    const Eigen::Vector3d d = ax.vec3("direction", Dimension::dimensionless, std::nullopt);
    if (!(d.norm() > 0)) ax.fail("direction", "expected a non-zero direction (apex to base)");
    a.axis_direction = d.normalized();
  }
  return a;
}

/// simulation.* of mode beat, and the activation, circulation and analysis sections.
void parse_beat(const Node& sim, const Node& root, const std::filesystem::path& base, HeartSimulation& h) {
  // A beat writes frames and tables; a probe would be ignored there.
  root.reject_if_present("probes", "used with simulation.mode: quasi_static only (a beat's motion is in its frames)");
  for (const char* k : {"load_steps", "residual_tol", "solver", "update_tol", "load_step_cuts", "linear_solver",
                        "reuse_factorisation", "initial_guess"})
    sim.reject_if_present(k, "used with mode: quasi_static only");
  // The Newton inflations of the unloading and the passive calibration. On a real heart their soft
  // inflations take 25-30 damped iterations before the quadratic phase, and a limit of 30 halved
  // increments just before it (docs/heartbeat.md, "Unloaded reference and passive calibration").
  if (root.has("unloading"))
    h.max_iterations = sim.integer("max_iterations", 60, 1, 10000);
  else
    sim.reject_if_present("max_iterations", "used with mode: quasi_static, or with unloading in mode: beat");
  h.first_onset = sim.quantity("first_onset", Dimension::time, 200.0, Range::positive());
  h.period = sim.quantity("period", Dimension::time, 800.0, Range::open(100, 5000));
  h.beats = static_cast<int>(sim.integer("beats", 2, 1, 1000));
  h.stop_when_periodic = sim.boolean("stop_when_periodic", false);
  if (h.stop_when_periodic && h.beats < 2)
    sim.fail("beats",
             "expected at least 2 with stop_when_periodic: true (beats is then the most beats to run, and "
             "a periodic state needs two beats to compare)");
  h.time_step = parse_time_step(sim);
  h.output_interval = sim.quantity("output_interval", Dimension::time, 10.0, Range::positive());
  h.damping_time = sim.quantity("damping_time", Dimension::time, 10.0, Range::non_negative());
  h.mass_scaling = sim.number("mass_scaling", 1.0, Range::closed(1, 1e6));
  h.selective_mass_scaling = sim.number("selective_mass_scaling", 0.0, Range::closed(0, 0.5));
  h.precision = sim.choice("precision", {"single", "double"}, "single") == "single"
                    ? mechanics::Precision::single_precision
                    : mechanics::Precision::double_precision;
  root.reject_if_present("loads", "cavity pressures come from the circulation in simulation.mode: beat");
  h.activation = parse_activation(root.child("activation"), h.period, base);
  CirculationConfig circ = parse_circulation(root.child("circulation"), h.first_onset, h.period);
  h.circulation = std::move(circ.cavities);
  h.closed_loop = std::move(circ.closed_loop);
  h.checkpoint_interval = sim.quantity("checkpoint_interval", Dimension::time, 100.0, Range::non_negative());
  h.analysis = parse_analysis(root.child_or_empty("analysis"), h.circulation);
  if (h.active_tension > 0)
    root.child("active").fail("tension", "in beat mode the tension follows activation.twitch.peak_tension");
}

std::vector<Probe> parse_probes(const Node& root) {
  std::vector<Probe> out;
  for (const Node& p : root.list("probes")) {
    Probe probe;
    probe.name = p.text("name", std::nullopt);
    probe.point = p.vec3("point", Dimension::length, std::nullopt);
    probe.where = p.where_of("point") + ": " + p.key_path("point");
    if (p.has("reference_z")) probe.reference_z = p.quantity("reference_z", Dimension::length, std::nullopt);
    out.push_back(probe);
  }
  return out;
}

HeartSimulation parse_simulation(const Node& root, const std::filesystem::path& base) {
  HeartSimulation h;
  h.material = parse_myocardium(root.child("material"));
  h.active_tension = root.child_or_empty("active").quantity("tension", Dimension::pressure, 0.0, Range::non_negative());
  parse_boundary(root.child_or_empty("boundary"), h);
  h.pressures = parse_pressures(root.child_or_empty("loads"));
  const Node sim = root.child_or_empty("simulation");
  h.mode = sim.choice_of("mode", kSimulationModes, SimulationMode::quasi_static);
  h.simd = sim.choice("simd", {"auto", "avx512", "avx2", "baseline"}, "auto");
  if (h.mode == SimulationMode::quasi_static)
    parse_quasi_static(sim, root, h);
  else
    parse_beat(sim, root, base, h);
  h.probes = parse_probes(root);
  h.unloading = parse_unloading(root);
  h.passive_calibration = parse_passive_calibration(root, h.unloading);
  if (h.coarse_start && h.unloading.enabled)
    sim.fail("initial_guess",
             "coarse_mesh solves the config on a coarser mesh of the image geometry, not of the unloaded reference; "
             "use initial_guess: rest with unloading");
  if (h.unloading.enabled && h.material.element != mechanics::ElementKind::sampled_axes)
    root.child("unloading")
        .fail("enabled",
              "unloading inflates the heart by Newton's method, which needs "
              "material.element: sampled_axes");
  return h;
}

}  // namespace

std::string SurfaceSelector::describe() const {
  if (!tag.empty()) return "surface '" + tag + "'";
  std::ostringstream os;
  os << "plane through (" << point.transpose() << ") mm with normal (" << normal.transpose() << ")";
  return os.str();
}

namespace {

/// Every cavity unloading.end_diastolic_pressures names is one the mesh will have (known from the
/// config, except for cavities derived from a mask), so that `validate` refuses a misspelt one
/// instead of the run unloading the heart without it.
void check_unloading_cavities(const Node& root, const MeshConfig& mesh, const UnloadingParams& unloading) {
  if (!unloading.enabled || mesh.geometry.derive_cavities) return;
  const auto& cavities = mesh.geometry.roles.cavities;
  std::string names;
  for (const auto& [name, labels] : cavities) names += (names.empty() ? "" : ", ") + name;
  for (const CavityPressure& p : unloading.end_diastolic_pressures) {
    if (std::none_of(cavities.begin(), cavities.end(), [&](const auto& c) { return c.first == p.cavity; }))
      root.child("unloading")
          .child("end_diastolic_pressures")
          .fail(p.cavity, "no cavity '" + p.cavity +
                              "' in the mesh; its cavities: " + (names.empty() ? std::string("none") : names));
  }
}

}  // namespace

HeartConfig parse_heart_config(config::Document& doc) {
  HeartConfig c;
  c.mesh = parse_mesh_config(doc, false);
  const Node root = doc.root();
  if (root.has("material") || root.has("simulation") || root.has("loads")) {
    c.simulation = parse_simulation(root, std::filesystem::path(doc.file_name()).parent_path());
    check_unloading_cavities(root, c.mesh, c.simulation->unloading);
  }
  doc.check_no_unknown_keys();
  return c;
}

}  // namespace cardio::pipeline
