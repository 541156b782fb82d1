#pragma once
/// @file beat_analysis.hpp
/// The strain and volume analyses of a beating run (docs/analysis.md), computed as the run goes:
/// strain fields for each frame (E, E_ff, E_cc, E_rr, E_ll, J, aha_segment), AHA regional means
/// sampled at a fixed interval (regional_strain.csv), the LV's global longitudinal and
/// circumferential strain on its endocardium (lv_global_strain.csv), and the peak strains of the
/// last complete beat for summary.json. The formulas live in modules/analysis; this class only decides
/// when and relative to what they are evaluated.
#include <array>
#include <nlohmann/json.hpp>
#include <optional>

#include "cardio/analysis/endocardial_strain.hpp"
#include "cardio/analysis/strain.hpp"
#include "cardio/core/binary.hpp"
#include "cardio/io/series.hpp"
#include "cardio/io/vtu.hpp"
#include "cardio/meshing/voxel_mesh.hpp"
#include "config/heart_config.hpp"

namespace cardio::pipeline {

class BeatAnalysis {
 public:
  /// `lv` is the cavity whose axis and apex define the cardiac directions and the AHA segments.
  BeatAnalysis(const AnalysisParams& params, const meshing::VoxelMesh& mesh, const meshing::CavitySurface& lv);

  /// Cell fields of the state x for a frame.
  std::vector<io::Field> frame_fields(const Eigen::Matrix3Xd& x) const;
  /// Record the regional means at time t (one sample; regional_strain.csv gets 18 rows).
  void sample(double t_ms, const Eigen::Matrix3Xd& x);
  /// End-diastole of the LV at x: the strain reference of the next samples (reference: end_diastole).
  void end_diastole(double t_ms, const Eigen::Matrix3Xd& x);
  /// regional_strain.csv: time_ms, segment (0 = the whole LV, 1..17 AHA), E_cc, E_ll, E_rr, E_ff
  /// (Green-Lagrange), e_cc, e_ll, e_rr, e_ff (engineering).
  io::CsvTable regional_table() const;
  /// lv_global_strain.csv: time_ms, GLS, GCS (engineering strain on the LV endocardium, fractions).
  io::CsvTable lv_global_table() const;
  /// label_strain.csv: time_ms, label (each myocardium label of the mesh), then the columns above.
  io::CsvTable label_table() const;
  /// Peak strains per segment within [t_begin, t_end) (the last complete beat), time to peak from t_begin;
  /// "lv_endocardial": the peaks (most negative) of GLS and GCS on the LV endocardium.
  nlohmann::json peaks(double t_begin_ms, double t_end_ms) const;
  /// LV twist (apical minus basal slice rotation about the long axis, relative to the strain
  /// reference) at its largest magnitude within [t_begin, t_end), and torsion = twist / the
  /// distance between the slices at the reference [deg/cm]: summary.json analysis.twist.
  nlohmann::json twist(double t_begin_ms, double t_end_ms) const;

  /// Checkpoint state (reference configuration and samples).
  void save(BinaryWriter& out) const;
  void restore(BinaryReader& in);

  static constexpr int kRegions = 18;  ///< 0 = whole LV, 1..17 AHA
  static constexpr int kStrains = 8;   ///< E_cc, E_ll, E_rr, E_ff, then e_cc, e_ll, e_rr, e_ff

 private:
  analysis::ElementStrains strains_now(const Eigen::Matrix3Xd& x) const;
  /// The tangents of the smoothed LV endocardium at the strain reference m_ref (none without faces).
  void update_endocardial_frame();
  nlohmann::json endocardial_peaks(double t_begin_ms, double t_end_ms) const;

  AnalysisParams m_params;
  const mechanics::HexMesh& m_mesh;
  analysis::ElementDirections m_rest_dirs;
  Eigen::Matrix3Xd m_ref;  ///< reference positions (rest until the first end-diastole)
  bool m_ref_is_rest = true;
  std::optional<analysis::ReferenceConfiguration>
      m_strain_ref;  ///< m_ref's gradients and volumes (set on construction)
  std::vector<std::uint8_t> m_segment;
  Eigen::Vector3d m_axis_direction;                   ///< unit, apex -> base
  std::array<std::vector<std::int32_t>, 2> m_slices;  ///< twist slices: basal, apical (nodes)
  Eigen::VectorXd m_weight;                           ///< rest element volumes (material averages)
  std::vector<std::int32_t> m_labels;                 ///< distinct element labels (label regions)
  std::vector<std::uint8_t> m_label_index;            ///< per element: index into m_labels
  analysis::EndocardialSurface m_endocardium;         ///< the LV's endocardial boundary faces
  analysis::EndocardialFrame m_endocardial_frame;     ///< their smoothed tangents at m_ref
  struct Sample {
    double t;
    double mean[kRegions][kStrains];
    double rotation_deg[2];  ///< basal and apical slice rotation (NaN for an empty slice)
    double twist_deg() const { return rotation_deg[1] - rotation_deg[0]; }
    std::vector<double> label_mean;  ///< [label][strain], m_labels.size() x kStrains
    double gls, gcs;                 ///< engineering strain on the LV endocardium (NaN without faces)
  };
  std::vector<Sample> m_samples;
};

}  // namespace cardio::pipeline
