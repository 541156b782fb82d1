#pragma once
/// @file beat_observers.hpp
/// What a beat writes and measures as it goes, each an observer of the BeatLoop (beat_loop.hpp).
/// run_heart_beat calls before_step() with the state of the current time (before the step from
/// it), after_step() after a step, and saves/restores each observer in checkpoints.
#include <Eigen/Core>
#include <filesystem>
#include <future>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "cardio/core/binary.hpp"
#include "cardio/io/series.hpp"
#include "common/progress.hpp"
#include "heart/beat_analysis.hpp"
#include "heart/beat_loop.hpp"

namespace cardio::pipeline {

class BeatObserver {
 public:
  virtual ~BeatObserver() = default;
  /// The state at loop.time(), before the step from it.
  virtual void before_step(const BeatLoop&) {}
  /// After a step (to loop.time()).
  virtual void after_step(const BeatLoop&) {}
  virtual void save(BinaryWriter&) const {}
  virtual void restore(BinaryReader&) {}
};

/// timeseries.csv: per cavity volume, pressure, phase and arterial pressure (the afterload's), and
/// the tissue volume, every row_interval; the largest tissue volume change relative to the rest mesh.
class TimeSeriesRecorder final : public BeatObserver {
 public:
  static constexpr double kRowInterval = 1;  ///< [ms] between rows

  TimeSeriesRecorder(const HeartSimulation& sim, const meshing::VoxelMesh& mesh);
  void before_step(const BeatLoop& loop) override;
  void write(const std::filesystem::path& outdir) const;
  /// The values of a numeric column so far (e.g. "lv_pressure_mmHg"); throws cardio::Error if absent.
  Eigen::VectorXd column(const std::string& name) const;
  /// max |V_tissue(t) - V_tissue(rest)| / V_tissue(rest) over the rows so far.
  double max_tissue_change() const { return m_max_tissue_change; }
  /// Closed loop: the blood volume of the first row [mL] and max |V_blood(t) - added(t) - that| / that
  /// (added: the blood circulation.closed_loop.fill added up to t).
  double initial_blood_volume_mL() const { return m_blood0; }
  double max_blood_volume_change() const { return m_max_blood_change; }
  void save(BinaryWriter& out) const override;
  void restore(BinaryReader& in) override;

 private:
  /// The closed loop's atrial and arterial pressures and the blood volume, if there is a loop.
  void add_closed_loop(const BeatLoop& loop, std::vector<std::string>& row);

  io::CsvTable m_table;
  double m_tissue0 = 0, m_max_tissue_change = 0, m_next_row = 0;
  double m_blood0 = 0, m_max_blood_change = 0;
};

/// The strain analyses (beat_analysis.hpp) sampled every analysis.interval, the reference switched
/// at each end-diastole of the LV, and the fibre stretch and mean wall thickness at end-diastole
/// and end-systole (summary.json's "heart" block).
class StrainRecorder final : public BeatObserver {
 public:
  /// The LV of `loop` defines the cardiac directions and the AHA segments.
  StrainRecorder(const HeartSimulation& sim, const BeatLoop& loop);
  void before_step(const BeatLoop& loop) override;
  void after_step(const BeatLoop& loop) override;
  /// regional_strain.csv, label_strain.csv and lv_global_strain.csv.
  void write(const std::filesystem::path& outdir) const;
  const BeatAnalysis& analysis() const { return m_analysis; }
  /// Fibre shortening, wall thickening and thicknesses between the last end-diastole and
  /// end-systole, into `heart` (nothing before the first end-systole).
  void summarise(nlohmann::json& heart) const;
  void save(BinaryWriter& out) const override;
  void restore(BinaryReader& in) override;

 private:
  const meshing::VoxelMesh& m_mesh;
  double m_interval;
  BeatAnalysis m_analysis;
  double m_next_sample = 0;
  std::int64_t m_previous_phase = 0;
  Eigen::VectorXd m_lambda_ed, m_lambda_es;  ///< fibre stretch at end-diastole / end-systole
  double m_thickness_ed = 0, m_thickness_es = 0;
};

/// frames/frame_NNNNN.vtu and series.pvd every output_interval (and at the end), each after the
/// check that the state is physical.
class FrameWriter final : public BeatObserver {
 public:
  FrameWriter(const HeartSimulation& sim, const meshing::VoxelMesh& mesh, const Eigen::VectorXd& activation_time,
              const BeatAnalysis& analysis, std::filesystem::path outdir);
  void before_step(const BeatLoop& loop) override;
  /// Write the frame of loop.time(): its fields are computed now, the file is written in the
  /// background (one at a time) and complete after flush().
  void write_frame(const BeatLoop& loop);
  /// Wait until every frame is on disk; throws the error of a failed write.
  void flush();
  std::size_t frames() const { return m_frames.size(); }
  void save(BinaryWriter& out) const override;
  void restore(BinaryReader& in) override;

 private:
  const meshing::VoxelMesh& m_mesh;
  double m_interval;
  const BeatAnalysis& m_analysis;
  std::filesystem::path m_outdir;
  Eigen::MatrixXd m_activation_field, m_label_field;
  std::vector<io::PvdFrame> m_frames;
  double m_next_frame = 0;
  std::future<void> m_pending;  ///< the frame being written
};

/// The phase of the LV at the start (the first cavity's, as the phase tracking always began).
std::int64_t initial_phase(const BeatLoop& loop);

/// The log: a line at every phase change of the LV, and the progress bar (or periodic lines).
class ProgressReport final : public BeatObserver {
 public:
  ProgressReport(const HeartSimulation& sim, const BeatLoop& loop, std::ostream* log, bool terminal);
  void after_step(const BeatLoop& loop) override;
  /// Clear the progress bar before other output.
  void pause() { m_progress.finish(); }
  /// After loop.finish(): the last beat's line, when the run ended with it (its next onset was not stepped).
  void log_last_beat(const BeatLoop& loop);
  void save(BinaryWriter& out) const override;
  void restore(BinaryReader& in) override;

 private:
  /// Each cavity's finished beat: EDV (at its EDP), ESV, EF, peak pressure, and the EDV change (periodic state).
  void log_finished_beat(const BeatLoop& loop);
  /// circulation.closed_loop.fill: the LV EDP at the onset just begun and the blood added for it.
  void log_blood_fill(const BeatLoop& loop);
  /// circulation.closed_loop.afterload: the aortic pressures of the beat just ended and the R and C found.
  void log_afterload(const BeatLoop& loop);

  int m_beats;
  std::ostream* m_log;
  Progress m_progress;
  std::int64_t m_previous_phase = 0;
  int m_logged_beat = 0;  ///< index of the last beat logged (this process only: a resumed run may log one again)
};

}  // namespace cardio::pipeline
