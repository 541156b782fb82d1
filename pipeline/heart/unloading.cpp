#include "heart/unloading.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <sstream>

#include "cardio/core/error.hpp"
#include "cardio/core/units.hpp"
#include "cardio/io/json.hpp"
#include "cardio/io/vtu.hpp"
#include "cardio/mechanics/mesh.hpp"
#include "heart/passive_inflation.hpp"

namespace cardio::pipeline {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

/// An update that fails (an inverted element, an inflation that does not converge) is retried
/// with half the relaxation, this many times.
constexpr int kRelaxationHalvings = 5;
/// Aitken's relaxation is kept in this range: a negative factor means the two last residuals
/// carry no curvature information, and over-relaxation (> 1) overshot on the biventricular
/// surface (the RV free wall's mismatch grew).
constexpr double kMinRelaxation = 0.05, kMaxRelaxation = 1.0;
/// The levels below the full pressures (unloading.pressure_steps) only start the next one: they stop
/// at this many times the tolerance.
constexpr double kLevelToleranceFactor = 5;

struct Mismatch {
  double rms_mm = 0, max_mm = 0;
  std::int32_t worst_node = -1;  ///< where the largest is
};

Mismatch surface_mismatch(const Eigen::Matrix3Xd& r, const std::vector<std::int32_t>& surface) {
  Mismatch m;
  double sum = 0;
  for (std::int32_t n : surface) {
    const double d = r.col(n).norm();
    sum += d * d;
    if (d > m.max_mm) {
      m.max_mm = d;
      m.worst_node = n;
    }
  }
  m.rms_mm = std::sqrt(sum / double(std::max<std::size_t>(surface.size(), 1)));
  return m;
}

/// One fixed-point evaluation: the inflation of rest positions X, and its residual x_image - x(X).
struct Evaluation {
  bool ok = false;
  meshing::VoxelMesh mesh;
  Eigen::Matrix3Xd x, r;
  int newton_iterations = 0;
  long relaxation_steps = 0;
  double worst_J = 1;
};

/// `guess`: where Newton starts with the whole load, or, with guess_fraction > 0, the equilibrium
/// at that fraction of `pressures` from which the load rises (then from rest in load steps if
/// that fails); none: from rest only.
Evaluation evaluate(const HeartSimulation& sim, const meshing::VoxelMesh& image, const Eigen::Matrix3Xd& X,
                    const std::vector<CavityPressure>& pressures, const Eigen::Matrix3Xd* guess, std::ostream* log,
                    double guess_fraction = 0) {
  Evaluation ev;
  // An update that inverts a rest element (relative to the image) has no model to inflate.
  const mechanics::WorstElement rest = mechanics::worst_element(image.mesh, X);
  if (!(rest.J > 0)) {
    ev.worst_J = rest.J;
    return ev;
  }
  ev.mesh = with_rest_positions(image, X);
  PassiveInflation inflation(sim, ev.mesh, pressures, sim.unloading.where + ": unloading.end_diastolic_pressures", log);
  const Eigen::Matrix3Xd& image_x = image.mesh.rest;
  InflationOutcome out = inflation.inflate(guess, guess_fraction);
  ev.ok = out.converged;
  ev.newton_iterations = out.newton_iterations;
  ev.relaxation_steps = out.relaxation_steps;
  ev.worst_J = out.worst_J;
  ev.x = std::move(out.x);
  ev.r = image_x - ev.x;
  return ev;
}

/// Aitken's delta-squared relaxation for the next update from the last two residuals.
double aitken(double w, const Eigen::Matrix3Xd& r_old, const Eigen::Matrix3Xd& r_new) {
  const Eigen::Matrix3Xd dr = r_new - r_old;
  const double denom = dr.squaredNorm();
  if (!(denom > 0)) return w;
  return std::clamp(-w * (r_old.cwiseProduct(dr)).sum() / denom, kMinRelaxation, kMaxRelaxation);
}

/// Per-node damping of the update: a node whose mismatch grew in the last update (a local mode the
/// plain update overshoots, e.g. a rim corner that one element holds) takes half its last share
/// from then on, down to kMinNodeShare; the rest keep the global relaxation.
constexpr double kMinNodeShare = 1.0 / 16;
void damp_growing_nodes(Eigen::VectorXd& share, const Eigen::Matrix3Xd& r_old, const Eigen::Matrix3Xd& r_new) {
  for (Eigen::Index n = 0; n < share.size(); ++n)
    if (r_new.col(n).squaredNorm() > r_old.col(n).squaredNorm()) share[n] = std::max(kMinNodeShare, 0.5 * share[n]);
}

void log_iteration(std::ostream* log, const UnloadingIteration& it, double tol_mm) {
  if (!log) return;
  std::ostringstream line;
  line << "unloading";
  if (it.level < 1) line << " at " << std::setprecision(3) << 100 * it.level << " % of the pressures,";
  line << " iteration " << it.iteration << ": surface mismatch RMS " << std::setprecision(3) << it.rms_mm << " mm, max "
       << it.max_mm << " mm at (" << it.max_at_mm.transpose() << ") mm (tolerance " << tol_mm << " mm)";
  if (it.iteration > 0) line << ", relaxation " << it.relaxation;
  line << ", " << it.newton_iterations << " Newton iterations";
  if (it.relaxation_steps > 0) line << " and " << it.relaxation_steps << " relaxation steps";
  line << ", " << std::setprecision(2) << it.seconds << " s";
  *log << line.str() << std::endl;
}

json history_json(const std::vector<UnloadingIteration>& history) {
  json h = json::array();
  for (const auto& it : history)
    h.push_back({{"iteration", it.iteration},
                 {"pressure_fraction", it.level},
                 {"rms_mm", it.rms_mm},
                 {"max_mm", it.max_mm},
                 {"max_at_mm", {it.max_at_mm[0], it.max_at_mm[1], it.max_at_mm[2]}},
                 {"relaxation", it.relaxation},
                 {"newton_iterations", it.newton_iterations},
                 {"relaxation_steps", it.relaxation_steps},
                 {"seconds", it.seconds}});
  return h;
}

json unloading_report(const HeartSimulation& sim, const meshing::VoxelMesh& image, const UnloadingResult& r,
                      double tol_mm, double seconds) {
  const auto& X = r.mesh.mesh.rest;
  json cavities = json::array();
  for (const auto& c : image.cavities)
    cavities.push_back({{"name", c.name},
                        {"image_volume_mL", meshing::cavity_volume(c, image.mesh.rest) / 1000.0},
                        {"unloaded_volume_mL", meshing::cavity_volume(c, X) / 1000.0},
                        {"reinflated_volume_mL", meshing::cavity_volume(c, r.reinflated) / 1000.0}});
  json pressures = json::object();
  for (const auto& p : sim.unloading.end_diastolic_pressures) pressures[p.cavity] = p.pressure / units::kMmHgInKPa;
  const auto updates =
      std::count_if(r.history.begin(), r.history.end(), [](const auto& it) { return it.iteration > 0; });
  return {{"converged", true},
          {"iterations", updates},                                       // fixed-point updates over all pressure levels
          {"pressure_levels", r.history.size() - std::size_t(updates)},  // each level's history starts at 0
          {"rms_mm", r.history.back().rms_mm},
          {"max_mm", r.history.back().max_mm},
          {"tolerance_mm", tol_mm},
          {"voxel_size_mm", image.grid.spacing.minCoeff()},
          {"guccione_C_kPa", sim.material.law.C},
          {"end_diastolic_pressures_mmHg", pressures},
          {"max_node_displacement_mm", (image.mesh.rest - X).colwise().norm().maxCoeff()},
          {"tissue_volume_image_mL", image.volume.sum() / 1000.0},
          {"tissue_volume_unloaded_mL", r.mesh.volume.sum() / 1000.0},
          {"cavities", cavities},
          {"history", history_json(r.history)},
          {"seconds", seconds}};
}

[[noreturn]] void fail_not_converged(const HeartSimulation& sim, const UnloadingIteration& last, double tol_mm) {
  CARDIO_FAIL(sim.unloading.where << ": unloading did not converge"
                                  << (last.level < 1 ? " at " + std::to_string(int(std::lround(100 * last.level))) +
                                                           " % of the pressures (unloading.pressure_steps)"
                                                     : std::string())
                                  << ": after unloading.max_iterations = " << sim.unloading.max_iterations
                                  << " iterations the surface mismatch is " << last.rms_mm << " mm RMS (max "
                                  << last.max_mm << " mm at (" << last.max_at_mm.transpose()
                                  << ") mm), above the tolerance " << tol_mm
                                  << " mm (unloading.tolerance_voxels = " << sim.unloading.tolerance_voxels
                                  << "); raise unloading.max_iterations, lower unloading.relaxation, or check that "
                                     "the end-diastolic pressures and material.C are plausible for this heart");
}

[[noreturn]] void fail_no_relaxation(const HeartSimulation& sim, int iteration, double w, const Evaluation& ev) {
  CARDIO_FAIL(sim.unloading.where
              << ": unloading iteration " << iteration << ": even with the relaxation reduced to " << w
              << " the update "
              << (ev.worst_J <= 0 ? "inverts an element (det F = " + std::to_string(ev.worst_J) + ")"
                                  : std::string("does not inflate to the end-diastolic pressures (Newton fails)"))
              << ": the pressures are too high for material.C (the unloaded heart would fold), or the boundary "
                 "does not hold the heart; lower unloading.end_diastolic_pressures or raise material.C");
}

/// One pressure level of the continuation: its pressures (`level` of the end-diastolic ones), the
/// surface tolerance it stops at, and the updates it takes at least.
struct PressureLevel {
  std::vector<CavityPressure> pressures;
  double level = 1, tol_mm = 0;
  int min_updates = 0;
};

/// The fixed point at one pressure level: from X and its inflation `ev` at the level's pressures,
/// update X until the surface mismatch is at most tol_mm (after at least min_updates updates).
/// Appends to `history`; X and ev end at the last iterate. ev was evaluated from t_it on.
void iterate_level(const HeartSimulation& sim, const meshing::VoxelMesh& image, const PressureLevel& p,
                   Eigen::Matrix3Xd& X, Evaluation& ev, Clock::time_point t_it,
                   std::vector<UnloadingIteration>& history, std::ostream* log) {
  const UnloadingParams& u = sim.unloading;
  const std::vector<std::int32_t> surface = nodes_of(image.surface_quads);
  double w = u.relaxation, w_used = 0;                      // the next update's relaxation; the one that gave X_k
  Eigen::VectorXd share = Eigen::VectorXd::Ones(X.cols());  // per node, times w (damp_growing_nodes)
  for (int k = 0;; ++k) {
    const Mismatch m = surface_mismatch(ev.r, surface);
    UnloadingIteration it{k,
                          m.rms_mm,
                          m.max_mm,
                          {},
                          w_used,
                          ev.newton_iterations,
                          ev.relaxation_steps,
                          std::chrono::duration<double>(Clock::now() - t_it).count(),
                          p.level};
    if (m.worst_node >= 0) it.max_at_mm = image.mesh.rest.col(m.worst_node);
    history.push_back(it);
    log_iteration(log, it, p.tol_mm);
    if (m.rms_mm <= p.tol_mm && k >= p.min_updates) return;
    if (k >= u.max_iterations) fail_not_converged(sim, it, p.tol_mm);
    t_it = Clock::now();
    Evaluation next;
    w_used = w;
    const Eigen::Matrix3Xd step = ev.r * share.asDiagonal();
    for (int halving = 0; halving <= kRelaxationHalvings; ++halving) {
      // The last inflation moved by the update: x(X + dX) is about x(X) + dX where the tissue is
      // stiff, closer than the image where the mismatch is large (a rim corner).
      const Eigen::Matrix3Xd guess = ev.x + w_used * step;
      next = evaluate(sim, image, X + w_used * step, p.pressures, &guess, log);
      if (next.ok) break;
      if (log) *log << "unloading: the update with relaxation " << w_used << " failed; halving it" << std::endl;
      if (halving < kRelaxationHalvings) w_used *= 0.5;
    }
    if (!next.ok) fail_no_relaxation(sim, k + 1, w_used, next);
    X += w_used * step;
    w = u.aitken ? aitken(w_used, ev.r, next.r) : u.relaxation;
    damp_growing_nodes(share, ev.r, next.r);
    ev = std::move(next);
  }
}

std::vector<CavityPressure> scaled(std::vector<CavityPressure> p, double s) {
  for (CavityPressure& c : p) c.pressure *= s;
  return p;
}

}  // namespace

UnloadingResult unload_reference(const HeartSimulation& sim, const meshing::VoxelMesh& image, std::ostream* log,
                                 const Eigen::Matrix3Xd* start) {
  const auto t0 = Clock::now();
  const UnloadingParams& u = sim.unloading;
  const double tol_mm = u.tolerance_voxels * image.grid.spacing.minCoeff();
  // Pressure continuation: unload at 1/n, 2/n, ..., 1 of the pressures, each level from the last
  // one's reference, so that no inflation goes far beyond the image (a soft wall inflated from the
  // image to the full pressures balloons past where its pressure path is stable). A start is a
  // reference for the full pressures already.
  const int levels = start ? 1 : u.pressure_steps;
  Eigen::Matrix3Xd X = start ? *start : image.mesh.rest;
  UnloadingResult out;
  Evaluation ev;
  for (int j = 1; j <= levels; ++j) {
    const double level = double(j) / levels;
    const std::vector<CavityPressure> pressures = scaled(u.end_diastolic_pressures, level);
    // From the image itself, the image as a guess would only repeat the first increment from rest;
    // the last level's equilibrium, at (j - 1)/j of this level's pressures, continues to them.
    const Eigen::Matrix3Xd guess = j > 1 ? ev.x : image.mesh.rest;
    const auto t_level = Clock::now();
    ev = evaluate(sim, image, X, pressures, (start || j > 1) ? &guess : nullptr, log, double(j - 1) / j);
    if (!ev.ok)
      CARDIO_FAIL(
          u.where << ": unloading: the "
                  << (start   ? "starting reference"
                      : j > 1 ? "reference unloaded at a lower pressure"
                              : "image geometry")
                  << " does not inflate to " << 100 * level << " % of unloading.end_diastolic_pressures (Newton fails"
                  << (ev.worst_J <= 0 ? ", an element inverts" : "")
                  << "): lower the pressures, raise material.C, unloading.load_steps or unloading.pressure_steps");
    // A start meets the tolerance for its own material, not this one: update it at least once.
    const PressureLevel p{pressures, level, j == levels ? tol_mm : kLevelToleranceFactor * tol_mm, start ? 1 : 0};
    iterate_level(sim, image, p, X, ev, t_level, out.history, log);
  }
  out.mesh = std::move(ev.mesh);
  out.reinflated = std::move(ev.x);
  out.report = unloading_report(sim, image, out, tol_mm, std::chrono::duration<double>(Clock::now() - t0).count());
  return out;
}

void write_unloading_outputs(const std::filesystem::path& outdir, const UnloadingResult& r) {
  const meshing::VoxelMesh& m = r.mesh;
  Eigen::MatrixXd label(1, m.mesh.n_elements());
  for (Eigen::Index e = 0; e < label.cols(); ++e) label(0, e) = m.label[std::size_t(e)];
  // Points at the unloaded positions; `displacement` carries them to the image (Warp By Vector).
  io::write_vtu(outdir / "unloaded_mesh.vtu", m.mesh, r.reinflated, {}, {{"label", label, true}});
  io::write_json(outdir / "unloading.json", r.report);
}

}  // namespace cardio::pipeline
