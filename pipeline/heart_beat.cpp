#include "heart_beat.hpp"

#include <Eigen/LU>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <sstream>

#include "cardio/activation/activation_times.hpp"
#include "cardio/activation/twitch.hpp"
#include "cardio/circulation/beat.hpp"
#include "cardio/circulation/volume_constraint.hpp"
#include "cardio/core/error.hpp"
#include "cardio/core/parallel.hpp"
#include "cardio/imaging/image_io.hpp"
#include "cardio/io/series.hpp"
#include "cardio/io/vtu.hpp"
#include "cardio/mechanics/hyperelastic.hpp"
#include "cardio/mechanics/integrators.hpp"
#include "heart_run.hpp"

namespace cardio::pipeline {
namespace {

namespace fs = std::filesystem;
using circulation::CavityCommand;
using nlohmann::json;

Eigen::VectorXd activation_times(const ActivationParams& a, const meshing::VoxelMesh& m, std::ostream* log) {
  if (a.mode == "synchronous") return activation::synchronous_activation(m, 0.0);
  if (a.mode == "image")
    return activation::activation_from_image(m, imaging::read_scalar_image(a.image), a.image.string());
  std::vector<activation::PacingSite> sites;
  for (const auto& s : a.sites)
    sites.push_back(s.at_label ? activation::PacingSite::at_label(s.label, s.time, s.where)
                               : activation::PacingSite::at_point(s.point, s.time, s.where));
  activation::EikonalOptions o;
  o.velocity = {a.velocity_fibre, a.velocity_cross};
  const Eigen::VectorXd t = activation::eikonal_activation(m, sites, o);
  if (log) *log << "eikonal activation: latest element at " << t.maxCoeff() << " ms after the stimulus\n";
  return t;
}

/// Mean wall thickness [mm]: tissue volume over the mean of the endocardial and epicardial areas.
double wall_thickness(const meshing::VoxelMesh& m, const Eigen::Matrix3Xd& x) {
  const auto quad_area = [&](const mechanics::Quad& q) {
    return 0.5 * (x.col(q[2]) - x.col(q[0])).cross(x.col(q[3]) - x.col(q[1])).norm();
  };
  double endo = 0, epi = 0;
  for (std::size_t q = 0; q < m.surface_quads.size(); ++q) {
    if (m.surface_tag[q] == meshing::SurfaceTag::kEpicardium) epi += quad_area(m.surface_quads[q]);
    if (m.surface_tag[q] >= meshing::SurfaceTag::kFirstEndocardium) endo += quad_area(m.surface_quads[q]);
  }
  return mechanics::element_volumes(m.mesh, x).sum() / (0.5 * (endo + epi));
}

/// Fibre stretch of every element relative to the rest state, lambda = |F f0|.
Eigen::VectorXd fibre_stretch(const mechanics::GuccioneForces& g, const mechanics::HexMesh& mesh, const Eigen::Matrix3Xd& x) {
  Eigen::VectorXd lambda(mesh.n_elements());
  parallel_for(mesh.n_elements(), [&](std::int64_t e) {
    Eigen::Matrix3d frame;
    frame << mesh.fibre.col(e), mesh.sheet.col(e), mesh.normal(e);
    const Eigen::Matrix3d F = mechanics::bc_deformation_gradient(g.elements()[std::size_t(e)], frame,
                                                                 mechanics::gather(x, mesh.hexes[std::size_t(e)]));
    lambda[e] = (F * mesh.fibre.col(e)).norm();
  });
  return lambda;
}

}  // namespace

BeatSetup prepare_heart_beat(const HeartSimulation& sim, const meshing::VoxelMesh& m, std::ostream* log) {
  BeatSetup setup;
  // Damping acts on the nodal velocities (in the loop), not through the stiffness:
  // stiffness-proportional damping would shrink the explicit time step by the factor w tau.
  setup.model = build_heart_model(sim, m, sim.mass_scaling);
  for (const auto& c : sim.circulation) {
    const auto it = std::find_if(m.cavities.begin(), m.cavities.end(), [&](const auto& s) { return s.name == c.name; });
    if (it == m.cavities.end()) CARDIO_FAIL("circulation: no cavity named '" << c.name << "' in the mesh");
    setup.cavities.push_back(&*it);
  }
  setup.activation_time = activation_times(sim.activation, m, log);
  return setup;
}

BeatRunResult run_heart_beat(const HeartSimulation& sim, const meshing::VoxelMesh& m, const fs::path& outdir,
                             std::ostream* log) {
  return run_heart_beat(sim, m, prepare_heart_beat(sim, m, log), outdir, log);
}

BeatRunResult run_heart_beat(const HeartSimulation& sim, const meshing::VoxelMesh& m, BeatSetup setup,
                             const fs::path& outdir, std::ostream* log) {
  const auto t_start = std::chrono::steady_clock::now();
  const mechanics::HexMesh& mesh = m.mesh;
  const auto n_el = mesh.n_elements();
  mechanics::MassSpringSystem& sys = *setup.model.system;
  mechanics::GuccioneForces& guccione = *setup.model.myocardium;

  // --- cavities and their circulation ---
  const std::vector<const meshing::CavitySurface*>& cavity = setup.cavities;
  std::vector<circulation::BeatCycle> cycles;
  for (std::size_t c = 0; c < sim.circulation.size(); ++c) {
    const auto& cc = sim.circulation[c];
    cycles.emplace_back(cc.name, cc.beat, cc.windkessel, 0.0, circulation::cavity_volume_mm3(*cavity[c], mesh.rest) / 1000.0);
  }

  // --- activation ---
  const Eigen::VectorXd& t_rel = setup.activation_time;
  const Eigen::VectorXd t_act = (t_rel.array() + sim.first_onset).matrix();
  const activation::Twitch twitch(sim.activation.twitch);
  Eigen::VectorXd Ta = Eigen::VectorXd::Zero(n_el);

  // --- time step ---
  mechanics::NodeState s = sys.rest_state();
  const double t_end = sim.first_onset + sim.beats * sim.period;
  const auto estimate_dt = [&]() {
    return sim.dt > 0 ? sim.dt
                      : sim.dt_safety * mechanics::stable_time_step(mechanics::estimate_max_frequency(sys, s.x),
                                                                     sys.internal().max_damping_time());
  };
  double dt = estimate_dt();
  if (log) *log << "beat: " << sim.beats << " beats to t = " << t_end << " ms, dt = " << dt << " ms" << std::endl;

  // --- outputs as we go ---
  fs::create_directories(outdir / "frames");
  std::vector<io::PvdFrame> frames;
  io::CsvTable series{{"time_ms"}, {}};
  for (const auto& c : sim.circulation)
    for (const char* col : {"_volume_mL", "_pressure_mmHg", "_phase"}) series.columns.push_back(c.name + col);
  series.columns.push_back("tissue_volume_mL");
  const double tissue0 = m.volume.sum();
  Eigen::MatrixXd tact_field = t_rel.transpose(), label_field(1, n_el);
  for (Eigen::Index e = 0; e < n_el; ++e) label_field(0, e) = m.label[std::size_t(e)];
  const auto write_frame = [&](double t) {
    char name[64];
    std::snprintf(name, sizeof name, "frames/frame_%05zu.vtu", frames.size());
    io::write_vtu(outdir / name, mesh, s.x, {{"velocity", s.v}},
                  {{"activation_time", tact_field}, {"active_tension", Ta.transpose()}, {"label", label_field, true}});
    frames.push_back({t, name});
    io::write_pvd(outdir / "series.pvd", frames);
    io::write_csv(outdir / "timeseries.csv", series);
  };

  // Per beat: fibre stretch and wall thickness at end-diastole and end-systole (first cavity).
  Eigen::VectorXd lambda_ed, lambda_es;
  double thickness_ed = 0, thickness_es = 0, max_tissue_change = 0;
  circulation::Phase previous_phase = cycles.empty() ? circulation::Phase::filling : cycles[0].phase();

  std::vector<double> impulse(cycles.size());
  std::vector<circulation::CoupledResult> coupled(cycles.size());
  std::vector<CavityCommand> cmd(cycles.size());
  double t = 0, next_frame = 0, next_row = 0, next_dt_check = 50;
  double velocity_decay = sim.damping_time > 0 ? std::exp(-dt / sim.damping_time) : 1.0;
  long steps = 0;
  const auto forces = [&](const Eigen::Matrix3Xd& x, const Eigen::Matrix3Xd& v, double, Eigen::Matrix3Xd& f) {
    sys.forces(x, v, 1.0, f);
    for (std::size_t c = 0; c < cycles.size(); ++c)
      if (cmd[c].mode == CavityCommand::Mode::pressure)
        circulation::add_pressure_forces(*cavity[c], x, cmd[c].pressure_mmHg * units::kMmHgInKPa, f);
  };
  const auto project = [&](Eigen::Matrix3Xd& x, Eigen::Matrix3Xd& v, double) {
    sys.project(x, v, 1.0, 0.0);
    for (std::size_t c = 0; c < cycles.size(); ++c) {
      if (cmd[c].mode == CavityCommand::Mode::volume)
        impulse[c] += circulation::project_volume(*cavity[c], s.mass, sys.free_mask(), cmd[c].volume_mL * 1000.0, dt, x, &v)
                          .impulse(dt);
      else if (cmd[c].mode == CavityCommand::Mode::windkessel)
        coupled[c] = circulation::project_volume_windkessel(*cavity[c], s.mass, sys.free_mask(), cycles[c].windkessel(),
                                                            cmd[c].volume_mL, dt, x, &v);
    }
  };
  while (t < t_end - 1e-9) {
    twitch.active_tension(t_act, t, Ta);
    guccione.set_active_tension(std::vector<double>(Ta.data(), Ta.data() + n_el));
    for (std::size_t c = 0; c < cycles.size(); ++c) {
      cmd[c] = cycles[c].command(t);
      impulse[c] = 0;
    }
    if (t >= next_row - 1e-9) {
      std::vector<std::string> row{io::CsvTable::number(t)};
      for (const auto& cy : cycles) {
        row.push_back(io::CsvTable::number(cy.volume_mL()));
        row.push_back(io::CsvTable::number(cy.pressure_mmHg()));
        row.emplace_back(circulation::phase_name(cy.phase()));
      }
      const double tissue = mechanics::element_volumes(mesh, s.x).sum();
      max_tissue_change = std::max(max_tissue_change, std::abs(tissue - tissue0) / tissue0);
      row.push_back(io::CsvTable::number(tissue / 1000.0));
      series.add_row(row);
      next_row += 1.0;
    }
    if (t >= next_frame - 1e-9) {
      write_frame(t);
      next_frame += sim.output_interval;
    }
    mechanics::step(mechanics::Scheme::semi_implicit_euler, s, t, dt, forces, project);
    if (sim.damping_time > 0) s.v *= velocity_decay;  // mass-proportional damping, exact decay over dt
    t += dt;
    ++steps;
    if (steps % 100 == 0) mechanics::check_state(sys, mesh, s, dt, steps, t);
    for (std::size_t c = 0; c < cycles.size(); ++c) {
      const double V = circulation::cavity_volume_mm3(*cavity[c], s.x) / 1000.0;
      double p = cmd[c].pressure_mmHg;
      if (cmd[c].mode == CavityCommand::Mode::volume) p = impulse[c] / dt / units::kMmHgInKPa;
      if (cmd[c].mode == CavityCommand::Mode::windkessel) p = coupled[c].pressure_mmHg;
      cycles[c].update(t, V, p);
    }
    if (!cycles.empty() && cycles[0].phase() != previous_phase) {
      using circulation::Phase;
      if (cycles[0].phase() == Phase::isovolumic_contraction) {
        lambda_ed = fibre_stretch(guccione, mesh, s.x);
        thickness_ed = wall_thickness(m, s.x);
      }
      if (previous_phase == Phase::ejection) {
        lambda_es = fibre_stretch(guccione, mesh, s.x);
        thickness_es = wall_thickness(m, s.x);
      }
      if (log) {
        std::ostringstream line;
        line << std::fixed << "t = " << std::setprecision(1) << t << " ms: " << cycles[0].name() << " "
             << circulation::phase_name(cycles[0].phase()) << ", V = " << std::setprecision(3) << cycles[0].volume_mL()
             << " mL, p = " << std::setprecision(1) << cycles[0].pressure_mmHg() << " mmHg";
        *log << line.str() << std::endl;
      }
      previous_phase = cycles[0].phase();
    }
    if (t >= next_dt_check && sim.dt == 0) {  // stiffening law: re-estimate the stable step every 50 ms
      dt = std::min(dt, estimate_dt());
      velocity_decay = sim.damping_time > 0 ? std::exp(-dt / sim.damping_time) : 1.0;
      next_dt_check += 50;
    }
  }
  write_frame(t);

  // --- summary ---
  BeatRunResult out;
  json cavities = json::array();
  for (const auto& cy : cycles) {
    json beats = json::array();
    for (const auto& b : cy.beats())
      beats.push_back({{"beat", b.index}, {"EDV_mL", b.edv_mL}, {"ESV_mL", b.esv_mL}, {"SV_mL", b.sv_mL},
                       {"EF", b.ef}, {"stroke_work_mmHg_mL", b.stroke_work_mmHg_mL}});
    json last = cy.beats().empty() ? json(nullptr) : beats.back();
    cavities.push_back({{"name", cy.name()}, {"beats", beats}, {"last_beat", last},
                        {"EDV_mL", last.is_null() ? json(nullptr) : last["EDV_mL"]},
                        {"ESV_mL", last.is_null() ? json(nullptr) : last["ESV_mL"]},
                        {"SV_mL", last.is_null() ? json(nullptr) : last["SV_mL"]},
                        {"EF", last.is_null() ? json(nullptr) : last["EF"]},
                        {"converged", cy.converged()}});
  }
  json heart = {{"max_tissue_volume_change_percent", 100 * max_tissue_change}};
  if (lambda_ed.size() && lambda_es.size()) {
    heart["fibre_shortening_end_systole"] = (lambda_es.array() / lambda_ed.array()).mean() - 1.0;
    heart["wall_thickening"] = thickness_es / thickness_ed - 1.0;
    heart["wall_thickness_ed_mm"] = thickness_ed;
    heart["wall_thickness_es_mm"] = thickness_es;
  }
  out.summary = {{"mode", "beat"},
                 {"element_count", n_el},
                 {"node_count", mesh.n_nodes()},
                 {"steps", steps},
                 {"dt_ms", dt},
                 {"t_end_ms", t},
                 {"cavities", cavities},
                 {"heart", heart},
                 {"frames", frames.size()},
                 {"simulate_time_s", std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count()}};
  out.activation_time = t_rel;
  out.active_tension = Ta;
  out.state = std::move(s);
  return out;
}

}  // namespace cardio::pipeline
