#pragma once
/// @file heart_config.hpp
/// The simulation sections of a heart config (after geometry/fibres/tissue of mesh_config.hpp):
/// `material` (Guccione myocardium), `active`, `boundary`, `loads`, `simulation`, `probes`.
/// Parsed in one place (heart_config.cpp); docs/config.md lists the keys.
#include <Eigen/Core>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cardio/activation/twitch.hpp"
#include "cardio/circulation/cavity_coupling.hpp"
#include "cardio/mechanics/myocardium.hpp"
#include "cardio/mechanics/newton.hpp"
#include "config/mesh_config.hpp"
#include "config/time_step.hpp"
#include "config/unloading_config.hpp"

namespace cardio::pipeline {

/// Boundary quads chosen by surface tag (e.g. "base", "endocardium_lv") or by a plane
/// (the boundary quads whose four nodes lie on it, within 1e-6 of the voxel size).
struct SurfaceSelector {
  std::string tag;                 ///< empty: use the plane
  Eigen::Vector3d point{0, 0, 0};  ///< [mm]
  Eigen::Vector3d normal{0, 0, 1};
  std::string where;  ///< config location, for errors
  std::string describe() const;
};

/// The myocardium: the Guccione law as the mechanics module takes it, and the element carrying it.
struct MyocardiumParams {
  mechanics::GuccioneLaw law;  ///< C [kPa], b_f, b_t, b_fs, bulk kappa [kPa], hourglass_factor
  mechanics::ElementKind element = mechanics::ElementKind::sampled_axes;
};

/// Elastic foundation on a surface (the pericardium): traction -k u_n (or -k u) [kPa/mm].
struct FoundationSpec {
  SurfaceSelector surface;
  double stiffness = 0;  ///< [kPa/mm]
  mechanics::ElasticFoundation::Direction direction = mechanics::ElasticFoundation::Direction::normal;
};

struct PressureSpec {
  SurfaceSelector surface;
  double pressure = 0;  ///< [kPa], > 0 pushes into the tissue (inflates a cavity)
};

struct Probe {
  std::string name;
  Eigen::Vector3d point{0, 0, 0};     ///< reference position [mm]
  std::optional<double> reference_z;  ///< published final z [mm], for the error in summary.json
  std::string where;                  ///< "FILE:LINE:COL: probes[i].point", for errors
};

enum class SimulationMode { quasi_static, beat };
enum class StaticSolver { newton, dynamic_relaxation };
enum class ActivationMode { synchronous, eikonal, image };
/// The configuration strains are relative to: rest, or each beat's end-diastole (clinical strain).
enum class StrainReference { rest, end_diastole };

/// The config names of the modes (summary.json reports them).
std::string_view name_of(SimulationMode mode);
std::string_view name_of(StaticSolver solver);
std::string_view name_of(StrainReference reference);

/// A target that sets the peak active tension beat by beat (tension_calibration.hpp).
struct TensionTarget {
  enum class Quantity { ejection_fraction, peak_pressure };
  Quantity quantity = Quantity::ejection_fraction;
  double value = 0;         ///< EF (fraction) or LV peak pressure [mmHg]
  double tolerance = 0.02;  ///< relative
  std::string where;        ///< config location, for messages
};

/// Electrical activation: when each element starts its twitch (relative to each beat's onset).
struct ActivationParams {
  ActivationMode mode = ActivationMode::synchronous;
  struct Site {
    bool at_label = false;
    Eigen::Vector3d point{0, 0, 0};  ///< [mm]
    std::int32_t label = 0;
    std::string apex_of;  ///< non-empty: the endocardial apex of this cavity (found on the mesh)
    double time = 0;      ///< [ms] after the beat onset
    std::string where;
  };
  std::vector<Site> sites;              ///< eikonal
  double velocity_fibre = 0.6;          ///< [mm/ms]
  double velocity_cross = 0.2;          ///< [mm/ms]
  std::filesystem::path image;          ///< image: activation times [ms] on the element grid
  activation::TwitchParams twitch;      ///< period filled from simulation.period
  std::optional<TensionTarget> target;  ///< peak tension found for this target (twitch.peak_tension: the start)
};

/// Strain analysis of a beating run (docs/analysis.md).
struct AnalysisParams {
  StrainReference reference = StrainReference::rest;
  std::string lv_cavity;                              ///< cavity defining the long axis and AHA; empty: the first
  std::vector<std::int32_t> lv_labels;                ///< myocardium labels of the LV; empty: every element
  std::optional<Eigen::Vector3d> anterior_direction;  ///< axis -> anterior RV insertion; default: from the RV, else +y
  std::optional<Eigen::Vector3d> axis_point;          ///< long axis override: a point on it [mm]
  std::optional<Eigen::Vector3d> axis_direction;      ///< long axis override: apex -> base
  double interval = 5;                                ///< [ms] between regional samples
};

struct HeartSimulation {
  MyocardiumParams material;
  double active_tension = 0;                  ///< Ta [kPa] (quasi-static: reached at the last load step)
  std::vector<SurfaceSelector> fixed;         ///< nodes on these surfaces fixed
  std::vector<SurfaceSelector> sliding;       ///< nodes on these planes keep their normal coordinate
  std::vector<FoundationSpec> elastic;        ///< elastic (Robin) support, e.g. of the base
  std::optional<FoundationSpec> pericardium;  ///< elastic support of the epicardium
  std::vector<PressureSpec> pressures;
  SimulationMode mode = SimulationMode::quasi_static;
  /// SIMD build of the sampled-axes element: auto (the widest the CPU runs) | avx512 | avx2 |
  /// baseline. Results differ between builds at rounding level; baseline runs on any x86-64.
  std::string simd = "auto";
  // beat mode
  ActivationParams activation;
  std::vector<circulation::CavityCirculation> circulation;        ///< the 3-D cavities
  std::optional<circulation::ClosedLoopCirculation> closed_loop;  ///< the cavities in a closed loop
  AnalysisParams analysis;
  double checkpoint_interval = 100;  ///< [ms] simulated time between checkpoints; 0 = none
  double first_onset = 200;          ///< [ms] first contraction onset
  double period = 800;               ///< [ms] beat period
  int beats = 2;                     ///< simulated beats (t_end = first_onset + beats * period)
  /// End the run after the first beat at which every cavity's EDV changed by less than its
  /// convergence tolerance from the beat before (a periodic state); `beats` is then the most run.
  bool stop_when_periodic = false;
  TimeStepParams time_step;     ///< dt, dt_safety, force_dt (time_step.hpp); re-estimated every 50 ms when auto
  double output_interval = 10;  ///< [ms] between frames
  double damping_time = 10;     ///< [ms] mass-proportional damping: velocities decay as exp(-t/tau)
  /// Added-mass budget of selective mass scaling (mass_scaling.hpp): at most this fraction of the
  /// tissue mass goes to the elements that limit the explicit step; 0 = off.
  double selective_mass_scaling = 0;
  double mass_scaling = 1;  ///< nodal masses x this (explicit step x sqrt of it; inertia is small in a heart beat)
  /// Arithmetic of the explicit element loop (sampled axes): single stores the element constants in
  /// single precision and computes the forces so (docs/performance.md, "Single precision").
  mechanics::Precision precision = mechanics::Precision::single_precision;
  // quasi-static mode
  int load_steps = 10;
  double residual_tol = 1e-6;
  StaticSolver solver = StaticSolver::newton;
  long max_iterations = 30;  ///< Newton: per load increment; dynamic relaxation: per load step
  double update_tol = 1e-6;  ///< Newton: last update <= this x the smallest edge
  int load_step_cuts = 10;   ///< Newton: halvings of a failed increment
  mechanics::LinearSolver linear_solver = mechanics::LinearSolver::cholmod;  ///< Newton
  bool reuse_factorisation = true;  ///< Newton, cholmod: CG preconditioned by the last factor first
  /// Newton: solve on a mesh of twice the element size first and start from its displacement
  /// (simulation.initial_guess: coarse_mesh; heart/coarse_start.hpp).
  bool coarse_start = false;
  std::vector<Probe> probes;
  UnloadingParams unloading;                     ///< the stress-free reference (unloading_config.hpp)
  PassiveCalibrationParams passive_calibration;  ///< Guccione C fitted to the Klotz EDPVR
};

struct HeartConfig {
  MeshConfig mesh;
  std::optional<HeartSimulation> simulation;  ///< absent: mesh only
};

/// Parse a heart config: geometry/fibres/tissue and, if present, the simulation sections.
HeartConfig parse_heart_config(config::Document& doc);

}  // namespace cardio::pipeline
