#include "blocks/measure.hpp"

#include <cmath>

#include "blocks/block_geometry.hpp"

namespace cardio::pipeline {
namespace mech = cardio::mechanics;
using json = nlohmann::json;
using namespace block_geometry;

namespace {

/// What every measurement reads: the config, the model, the final state, and the compliance S
/// predicted in closed form where it applies (`predictable`: uniform fibres or Baudet's cube).
struct Measurement {
  const RunConfig& cfg;
  const ExperimentModel& m;
  const mech::NodeState& s;
  const mech::BlockSpec& b = cfg.block;
  const ExperimentParams& x = cfg.experiment;
  bool predictable = false;
  Eigen::Matrix<double, 6, 6> S = Eigen::Matrix<double, 6, 6>::Zero();
  double dV = 0;  ///< relative change of the enclosed volume

  void elongation(json& out) const;
  void shear(json& out) const;
  void inflation(json& out) const;
  void cantilever(json& out) const;
};

/// E and the Poisson ratios from the face displacements and the reaction (or the traction).
void Measurement::elongation(json& out) const {
  const int a = x.axis;
  auto strain = [&](int ax, int comp) {
    return (mean_displacement(s, m.mesh, face_nodes(b, ax, true), comp) -
            mean_displacement(s, m.mesh, face_nodes(b, ax, false), comp)) /
           length(b, ax);
  };
  const double ea = strain(a, a);
  double stress = x.stress;
  if (!x.traction) {
    // Reaction of the moved face: minus the internal force the block exerts on it.
    double reaction = 0;
    for (std::int32_t n : face_nodes(b, a, true)) reaction -= s.f(a, n);
    const int bb = (a + 1) % 3, cc = (a + 2) % 3;
    stress = reaction / (length(b, bb) * length(b, cc));
  }
  out["axis"] = kAxisName[a];
  out["axial_strain"] = ea;
  out["stress_kPa"] = stress;
  out["youngs_modulus_kPa"] = stress / ea;
  json expected;
  if (predictable) expected["youngs_modulus_kPa"] = 1 / S(a, a);
  for (int k = 1; k <= 2; ++k) {
    const int l = (a + k) % 3;
    out[std::string("poisson_ratio_") + kAxisName[l]] = -strain(l, l) / ea;
    out[std::string("shear_strain_") + kAxisName[a] + kAxisName[l]] = strain(a, l) + strain(l, a);
    if (predictable) {
      expected[std::string("poisson_ratio_") + kAxisName[l]] = -S(l, a) / S(a, a);
      expected[std::string("shear_strain_") + kAxisName[a] + kAxisName[l]] = S(voigt_index(a, l), a) / S(a, a) * ea;
    }
  }
  out["expected"] = expected;
}

/// G from the shear reaction.
void Measurement::shear(json& out) const {
  const int d = x.axis, nrm = x.shear_normal;
  double force = 0;
  for (std::int32_t n : face_nodes(b, nrm, true)) force -= s.f(d, n);
  int other = 3 - d - nrm;
  const double tau = force / (length(b, d) * length(b, other));
  out["shear_strain"] = x.strain;
  out["shear_stress_kPa"] = tau;
  out["shear_modulus_kPa"] = tau / x.strain;
  if (predictable) out["expected"]["shear_modulus_kPa"] = 1 / S(voigt_index(d, nrm), voigt_index(d, nrm));
}

/// K from the enclosed volume.
void Measurement::inflation(json& out) const {
  out["pressure_kPa"] = x.pressure;
  out["bulk_modulus_kPa"] = -x.pressure / dV;
  if (predictable) out["expected"]["bulk_modulus_kPa"] = 1 / S.topLeftCorner<3, 3>().sum();
}

/// The deflection of every cross-section against Euler-Bernoulli and Timoshenko.
void Measurement::cantilever(json& out) const {
  // Euler-Bernoulli deflection under its own weight (Baudet et al. 2007, eq. 10):
  // w(x) = q/(24 E I)(6 L^2 x^2 - 4 L x^3 + x^4), q = rho g A, I = W H^3 / 12; and the
  // Timoshenko beam, which adds the shear deflection q/(k G A)(L x - x^2/2), k = 5/6.
  const double L = length(b, 0), W = length(b, 1), H = length(b, 2);
  const double E = predictable ? 1 / S(0, 0) : cfg.material.constants.E_fibre;
  const double G = predictable ? 1 / S(4, 4) : cfg.material.constants.G_fibre;
  const double q = cfg.material.density * std::abs(x.gravity[2]) * W * H;
  const double I = W * H * H * H / 12;
  json table = json::array();
  double max_err = 0, w_tip = 0, eb_tip = 0, t_tip = 0;
  for (int i = 1; i <= b.nx; ++i) {
    std::vector<std::int32_t> station;
    for (std::int32_t n = 0; n < m.mesh.n_nodes(); ++n)
      if (lattice(b, n)[0] == i) station.push_back(n);
    const double w = -mean_displacement(s, m.mesh, station, 2) * (x.gravity[2] < 0 ? 1 : -1);
    const double xi = i * b.h;
    const double eb = q / (24 * E * I) * (6 * L * L * xi * xi - 4 * L * xi * xi * xi + xi * xi * xi * xi);
    const double timo = eb + q / (5.0 / 6.0 * G * W * H) * (L * xi - 0.5 * xi * xi);
    table.push_back({{"x_mm", xi}, {"deflection_mm", w}, {"euler_bernoulli_mm", eb}, {"timoshenko_mm", timo}});
    w_tip = w, eb_tip = eb, t_tip = timo;
    max_err = std::max(max_err, std::abs(w - eb));
  }
  out["tip_deflection_mm"] = w_tip;
  out["euler_bernoulli_tip_mm"] = eb_tip;
  out["timoshenko_tip_mm"] = t_tip;
  out["tip_error_percent"] = 100 * (w_tip - eb_tip) / eb_tip;
  out["tip_error_vs_timoshenko_percent"] = 100 * (w_tip - t_tip) / t_tip;
  out["max_error_percent_of_tip"] = 100 * max_err / eb_tip;
  out["deflection"] = table;
}

}  // namespace

json measure(const RunConfig& cfg, const ExperimentModel& m, const mech::NodeState& s) {
  Measurement c{cfg, m, s};
  c.predictable = cfg.element.type == BlockElement::baudet_cube || cfg.fibres.kind == mech::FibreField::Kind::uniform;
  if (c.predictable) c.S = predicted_stiffness(cfg).inverse();
  const auto boundary = mech::boundary_faces(m.mesh);
  const double V0 = mech::enclosed_volume(boundary, m.mesh.rest);
  c.dV = mech::enclosed_volume(boundary, s.x) / V0 - 1;
  json out;
  out["volume_change_percent"] = 100 * c.dV;
  switch (cfg.experiment.kind) {
    case ExperimentKind::elongation:
      c.elongation(out);
      break;
    case ExperimentKind::shear:
      c.shear(out);
      break;
    case ExperimentKind::inflation:
      c.inflation(out);
      break;
    case ExperimentKind::cantilever:
      c.cantilever(out);
      break;
  }
  return out;
}

}  // namespace cardio::pipeline
