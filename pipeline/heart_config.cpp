#include "heart_config.hpp"

#include <sstream>

#include "cardio/core/error.hpp"

namespace cardio::pipeline {
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

HeartSimulation parse_simulation(const Node& root) {
  HeartSimulation h;
  const Node mat = root.child("material");
  mat.choice("law", {"guccione"}, "guccione");
  h.material.C = mat.quantity("C", Dimension::pressure, std::nullopt, Range::positive());
  h.material.b_f = mat.number("b_f", std::nullopt, Range::non_negative());
  h.material.b_t = mat.number("b_t", std::nullopt, Range::non_negative());
  h.material.b_fs = mat.number("b_fs", std::nullopt, Range::non_negative());
  h.material.bulk = mat.quantity("bulk_modulus", Dimension::pressure, 0.0, Range::non_negative());
  h.material.hourglass_factor = mat.number("hourglass_factor", 1.0, Range::open(0, 1000));

  h.active_tension = root.child_or_empty("active").quantity("tension", Dimension::pressure, 0.0, Range::non_negative());

  const Node bc = root.child_or_empty("boundary");
  h.fixed = parse_selectors(bc, "fixed");
  h.sliding = parse_selectors(bc, "sliding");
  for (const auto& s : h.sliding) {
    if (!s.tag.empty() && s.tag != "base")
      CARDIO_FAIL(s.where << ": sliding: expected {tag: base} or {plane: ...}, got tag '" << s.tag << "'");
  }

  for (const Node& p : root.child_or_empty("loads").list("pressures")) {
    PressureSpec spec;
    spec.surface = parse_selector(p.child("surface"));
    spec.pressure = p.quantity("pressure", Dimension::pressure, std::nullopt, Range::closed(-100, 100));
    h.pressures.push_back(spec);
  }

  const Node sim = root.child_or_empty("simulation");
  h.mode = sim.choice("mode", {"quasi_static"}, "quasi_static");
  h.load_steps = static_cast<int>(sim.integer("load_steps", 10, 1, 100000));
  h.residual_tol = sim.number("residual_tol", 1e-6, Range::open(0, 1));
  h.max_iterations = sim.integer("max_iterations", 2000000, 1, 1000000000L);

  for (const Node& p : root.list("probes")) {
    Probe probe;
    probe.name = p.text("name", std::nullopt);
    probe.point = p.vec3("point", Dimension::length, std::nullopt);
    if (p.has("reference_z")) probe.reference_z = p.quantity("reference_z", Dimension::length, std::nullopt);
    h.probes.push_back(probe);
  }
  return h;
}

}  // namespace

std::string SurfaceSelector::describe() const {
  if (!tag.empty()) return "surface '" + tag + "'";
  std::ostringstream os;
  os << "plane through (" << point.transpose() << ") mm with normal (" << normal.transpose() << ")";
  return os.str();
}

HeartConfig parse_heart_config(config::Document& doc) {
  HeartConfig c;
  c.mesh = parse_mesh_config(doc, false);
  const Node root = doc.root();
  if (root.has("material") || root.has("simulation") || root.has("loads")) c.simulation = parse_simulation(root);
  doc.check_no_unknown_keys();
  return c;
}

}  // namespace cardio::pipeline
