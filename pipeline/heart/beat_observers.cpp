#include "heart/beat_observers.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <sstream>

#include "cardio/analysis/strain.hpp"
#include "cardio/analysis/wall.hpp"
#include "cardio/core/error.hpp"
#include "cardio/io/vtu.hpp"
#include "cardio/mechanics/mesh.hpp"

namespace cardio::pipeline {
namespace {

namespace fs = std::filesystem;
using circulation::Phase;

void save_vector(BinaryWriter& w, const Eigen::VectorXd& v) {
  w.u64(std::uint64_t(v.size()));
  w.f64s(v.data(), std::size_t(v.size()));
}

Eigen::VectorXd read_vector(BinaryReader& r) {
  Eigen::VectorXd v(Eigen::Index(r.u64()));
  r.f64s(v.data(), std::size_t(v.size()));
  return v;
}

std::int64_t lv_phase(const BeatLoop& loop) { return std::int64_t(loop.cavities().cycles()[loop.lv()].phase()); }

}  // namespace

std::int64_t initial_phase(const BeatLoop& loop) {
  return loop.cavities().size() == 0 ? 0 : std::int64_t(loop.cavities().cycles()[0].phase());
}

// --- timeseries.csv ---

TimeSeriesRecorder::TimeSeriesRecorder(const HeartSimulation& sim, const meshing::VoxelMesh& mesh)
    : m_table{{"time_ms"}, {}}, m_tissue0(mesh.volume.sum()) {
  for (const auto& c : sim.circulation)
    for (const char* col : {"_volume_mL", "_pressure_mmHg", "_phase", "_arterial_pressure_mmHg"})
      m_table.columns.push_back(c.name + col);
  m_table.columns.push_back("tissue_volume_mL");
  if (sim.closed_loop)
    for (const char* col : {"left_atrium_pressure_mmHg", "right_atrium_pressure_mmHg",
                            "systemic_arterial_pressure_mmHg", "pulmonary_arterial_pressure_mmHg", "blood_volume_mL"})
      m_table.columns.push_back(col);
}

void TimeSeriesRecorder::add_closed_loop(const BeatLoop& loop, std::vector<std::string>& row) {
  const circulation::ClosedLoopCoupling* coupling = loop.cavities().closed_loop();
  if (!coupling) return;
  using circulation::Compartment;
  for (Compartment c : {Compartment::left_atrium, Compartment::right_atrium, Compartment::systemic_arteries,
                        Compartment::pulmonary_arteries})
    row.push_back(io::CsvTable::number(coupling->loop().pressure_mmHg(c)));
  const double blood = coupling->blood_volume_mL(loop.state().x);
  if (m_blood0 == 0) m_blood0 = blood;  // the first row, at rest
  // Conserved: the blood volume less what circulation.closed_loop.fill added between steps.
  const double conserved = blood - coupling->added_blood_mL();
  m_max_blood_change = std::max(m_max_blood_change, std::abs(conserved - m_blood0) / m_blood0);
  row.push_back(io::CsvTable::number(blood));
}

void TimeSeriesRecorder::before_step(const BeatLoop& loop) {
  if (loop.time() < m_next_row - 1e-9) return;
  std::vector<std::string> row{io::CsvTable::number(loop.time())};
  const auto& cycles = loop.cavities().cycles();
  for (std::size_t c = 0; c < cycles.size(); ++c) {
    row.push_back(io::CsvTable::number(cycles[c].volume_mL()));
    row.push_back(io::CsvTable::number(cycles[c].pressure_mmHg()));
    row.emplace_back(circulation::phase_name(cycles[c].phase()));
    // The pressure downstream of the outflow valve: the Windkessel's P, or the loop's artery.
    row.push_back(io::CsvTable::number(loop.cavities().arterial_pressure_mmHg(c)));
  }
  // The boundary's enclosed volume is the sum of the element volumes (the interior faces cancel;
  // MeshTest.BoundaryEnclosedVolumeIsTheSumOfWarpedElementVolumes) at a fraction of the faces.
  const double tissue = mechanics::enclosed_volume(loop.mesh().surface_quads, loop.state().x);
  m_max_tissue_change = std::max(m_max_tissue_change, std::abs(tissue - m_tissue0) / m_tissue0);
  row.push_back(io::CsvTable::number(tissue / 1000.0));
  add_closed_loop(loop, row);
  m_table.rows.push_back(std::move(row));
  m_next_row += kRowInterval;
}

void TimeSeriesRecorder::write(const fs::path& outdir) const { io::write_csv(outdir / "timeseries.csv", m_table); }

Eigen::VectorXd TimeSeriesRecorder::column(const std::string& name) const {
  const auto it = std::find(m_table.columns.begin(), m_table.columns.end(), name);
  CARDIO_CHECK(it != m_table.columns.end(), "timeseries.csv has no column " << name);
  const std::size_t c = std::size_t(it - m_table.columns.begin());
  Eigen::VectorXd v(Eigen::Index(m_table.rows.size()));
  // The cells are shortest round-trip representations (CsvTable::number): parsing gives the values back.
  for (std::size_t r = 0; r < m_table.rows.size(); ++r) v[Eigen::Index(r)] = std::stod(m_table.rows[r][c]);
  return v;
}

void TimeSeriesRecorder::save(BinaryWriter& w) const {
  for (double v : {m_next_row, m_max_tissue_change, m_blood0, m_max_blood_change}) w.f64(v);
  w.u64(m_table.rows.size());
  for (const auto& row : m_table.rows) {
    w.u64(row.size());
    for (const auto& cell : row) w.str(cell);
  }
}

void TimeSeriesRecorder::restore(BinaryReader& r) {
  for (double* v : {&m_next_row, &m_max_tissue_change, &m_blood0, &m_max_blood_change}) *v = r.f64();
  m_table.rows.resize(r.u64());
  for (auto& row : m_table.rows) {
    row.resize(r.u64());
    CARDIO_CHECK(row.size() == m_table.columns.size(),
                 "checkpoint: a timeseries row of " << row.size() << " cells, expected " << m_table.columns.size()
                                                    << " (written by another version?)");
    for (auto& cell : row) cell = r.str();
  }
}

// --- strains ---

StrainRecorder::StrainRecorder(const HeartSimulation& sim, const BeatLoop& loop)
    : m_mesh(loop.mesh()),
      m_interval(sim.analysis.interval),
      m_analysis(sim.analysis, loop.mesh(), loop.cavities().surface(loop.lv())),
      m_previous_phase(initial_phase(loop)) {}

void StrainRecorder::before_step(const BeatLoop& loop) {
  if (loop.time() < m_next_sample - 1e-9) return;
  m_analysis.sample(loop.time(), loop.state().x);
  m_next_sample += m_interval;
}

void StrainRecorder::after_step(const BeatLoop& loop) {
  if (loop.cavities().size() == 0 || lv_phase(loop) == m_previous_phase) return;
  const Eigen::Matrix3Xd& x = loop.state().x;
  if (lv_phase(loop) == std::int64_t(Phase::isovolumic_contraction)) {
    m_lambda_ed = analysis::fibre_stretch(m_mesh.mesh, x);
    m_thickness_ed = analysis::mean_wall_thickness(m_mesh, x);
    m_analysis.end_diastole(loop.time(), x);
  }
  if (m_previous_phase == std::int64_t(Phase::ejection)) {
    m_lambda_es = analysis::fibre_stretch(m_mesh.mesh, x);
    m_thickness_es = analysis::mean_wall_thickness(m_mesh, x);
  }
  m_previous_phase = lv_phase(loop);
}

void StrainRecorder::write(const fs::path& outdir) const {
  io::write_csv(outdir / "regional_strain.csv", m_analysis.regional_table());
  io::write_csv(outdir / "label_strain.csv", m_analysis.label_table());
  io::write_csv(outdir / "lv_global_strain.csv", m_analysis.lv_global_table());
}

void StrainRecorder::summarise(nlohmann::json& heart) const {
  if (!m_lambda_ed.size() || !m_lambda_es.size()) return;
  heart["fibre_shortening_end_systole"] = (m_lambda_es.array() / m_lambda_ed.array()).mean() - 1.0;
  heart["wall_thickening"] = m_thickness_es / m_thickness_ed - 1.0;
  heart["wall_thickness_ed_mm"] = m_thickness_ed;
  heart["wall_thickness_es_mm"] = m_thickness_es;
}

void StrainRecorder::save(BinaryWriter& w) const {
  for (double v : {m_next_sample, m_thickness_ed, m_thickness_es}) w.f64(v);
  w.i64(m_previous_phase);
  save_vector(w, m_lambda_ed);
  save_vector(w, m_lambda_es);
  m_analysis.save(w);
}

void StrainRecorder::restore(BinaryReader& r) {
  for (double* v : {&m_next_sample, &m_thickness_ed, &m_thickness_es}) *v = r.f64();
  m_previous_phase = r.i64();
  m_lambda_ed = read_vector(r);
  m_lambda_es = read_vector(r);
  m_analysis.restore(r);
}

// --- frames ---

FrameWriter::FrameWriter(const HeartSimulation& sim, const meshing::VoxelMesh& mesh,
                         const Eigen::VectorXd& activation_time, const BeatAnalysis& analysis, fs::path outdir)
    : m_mesh(mesh),
      m_interval(sim.output_interval),
      m_analysis(analysis),
      m_outdir(std::move(outdir)),
      m_activation_field(activation_time.transpose()),
      m_label_field(1, mesh.mesh.n_elements()) {
  for (Eigen::Index e = 0; e < m_label_field.cols(); ++e) m_label_field(0, e) = mesh.label[std::size_t(e)];
  fs::create_directories(m_outdir / "frames");
}

void FrameWriter::before_step(const BeatLoop& loop) {
  if (loop.time() < m_next_frame - 1e-9) return;
  check_physical_state(m_mesh, loop.state().x, "beat at t = " + io::CsvTable::number(loop.time()) + " ms",
                       "the time step is too large (lower simulation.dt_safety or leave simulation.dt auto), "
                       "or the loads too large (active tension, pressures) for this mesh");
  write_frame(loop);
  m_next_frame += m_interval;
}

void FrameWriter::write_frame(const BeatLoop& loop) {
  char name[64];
  std::snprintf(name, sizeof name, "frames/frame_%05zu.vtu", m_frames.size());
  const mechanics::NodeState& s = loop.state();
  std::vector<io::Field> cells{{"activation_time", m_activation_field},
                               {"active_tension", loop.active_tension().transpose()},
                               {"label", m_label_field, true}};
  for (auto& f : m_analysis.frame_fields(s.x)) cells.push_back(std::move(f));
  flush();  // one file in flight at a time; its error, if any, surfaces here, before this frame is listed
  m_frames.push_back({loop.time(), name});
  // The file is compressed and written beside the time loop, from copies of the state.
  m_pending = std::async(std::launch::async, [this, file = m_outdir / name, x = Eigen::Matrix3Xd(s.x),
                                              v = Eigen::Matrix3Xd(s.v), cells = std::move(cells), series = m_frames] {
    io::write_vtu(file, m_mesh.mesh, x, {{"velocity", v}}, cells, io::Storage::frame);
    io::write_pvd(m_outdir / "series.pvd", series);
  });
}

void FrameWriter::flush() {
  if (m_pending.valid()) m_pending.get();
}

void FrameWriter::save(BinaryWriter& w) const {
  w.f64(m_next_frame);
  w.u64(m_frames.size());
  for (const auto& f : m_frames) {
    w.f64(f.time_ms);
    w.str(f.file);
  }
}

void FrameWriter::restore(BinaryReader& r) {
  m_next_frame = r.f64();
  m_frames.resize(r.u64());
  for (auto& f : m_frames) {
    f.time_ms = r.f64();
    f.file = r.str();
  }
}

// --- the log ---

ProgressReport::ProgressReport(const HeartSimulation& sim, const BeatLoop& loop, std::ostream* log, bool terminal)
    : m_beats(sim.beats),
      m_log(log),
      m_progress("simulated", loop.t_end(), log, terminal),
      m_previous_phase(initial_phase(loop)) {}

void ProgressReport::after_step(const BeatLoop& loop) {
  const auto& cycles = loop.cavities().cycles();
  if (!cycles.empty() && lv_phase(loop) != m_previous_phase) {
    const auto& cy = cycles[loop.lv()];
    if (m_log) {
      m_progress.finish();
      std::ostringstream line;
      line << std::fixed << "t = " << std::setprecision(1) << loop.time() << " ms: " << cy.name() << " "
           << circulation::phase_name(cy.phase()) << ", V = " << std::setprecision(3) << cy.volume_mL()
           << " mL, p = " << std::setprecision(1) << cy.pressure_mmHg() << " mmHg";
      *m_log << line.str() << std::endl;
    }
    m_previous_phase = lv_phase(loop);
  }
  if (!cycles.empty() && cycles[loop.lv()].beat_index() > 1 && cycles[loop.lv()].current().onset_ms == loop.time())
    log_finished_beat(loop);
  if (loop.steps() % 64 == 0) {
    const int beat = cycles.empty() ? 0 : cycles[loop.lv()].beat_index();
    m_progress.update(loop.time(), "beat " + std::to_string(std::max(beat, 0)) + "/" + std::to_string(m_beats));
  }
}

void ProgressReport::log_last_beat(const BeatLoop& loop) {
  const auto& cycles = loop.cavities().cycles();
  if (cycles.empty() || cycles[loop.lv()].beats().empty()) return;
  if (cycles[loop.lv()].beats().back().index > m_logged_beat) log_finished_beat(loop);
}

void ProgressReport::log_finished_beat(const BeatLoop& loop) {
  if (!m_log) return;
  m_progress.finish();
  m_logged_beat = loop.cavities().cycles()[loop.lv()].beats().back().index;
  for (const auto& cy : loop.cavities().cycles()) {
    const circulation::BeatStats& b = cy.beats().back();
    std::ostringstream line;
    line << std::fixed << std::setprecision(1) << "beat " << b.index << " " << cy.name() << ": EDV " << b.edv_mL
         << " mL at " << b.edp_mmHg << " mmHg, ESV " << b.esv_mL << " mL, EF " << 100 * b.ef << " %, peak "
         << b.peak_pressure_mmHg << " mmHg";
    if (cy.beats().size() > 1)
      line << "; EDV change from beat " << b.index - 1 << ": " << std::setprecision(2) << 100 * cy.edv_change() << " %"
           << (cy.converged() ? " (periodic)" : "");
    *m_log << line.str() << std::endl;
  }
  const TensionCalibration* c = loop.tension_calibration();
  if (loop.tension_measured_every_beat() && !c->history().empty()) {
    const auto [tension, measured] = c->history().back();
    *m_log << "tension calibration: Ta_max " << tension << " kPa gave " << measured << " (target " << c->target().value
           << "); " << (c->reached() ? "reached, kept" : "next beat") << " " << c->peak_tension_kPa() << " kPa"
           << std::endl;
  }
  log_blood_fill(loop);
  log_afterload(loop);
}

void ProgressReport::log_afterload(const BeatLoop& loop) {
  const circulation::AfterloadCalibration* a = loop.afterload();
  if (!a || a->history().empty() || a->history().back().beat + 1 != a->beat()) return;
  const circulation::AfterloadBeat& b = a->history().back();
  std::ostringstream line;
  line << std::fixed << std::setprecision(1) << "afterload: beat " << b.beat << " aortic " << b.systolic_mmHg << "/"
       << b.diastolic_mmHg << " mmHg (target " << a->target().systolic_mmHg << "/" << a->target().diastolic_mmHg
       << " +- " << a->target().tolerance_mmHg << "); " << (a->reached() ? "reached; " : "") << "systemic arteries R "
       << std::setprecision(3) << 1e-3 * a->systemic_arteries().resistance_mmHg_ms_per_mL << " mmHg s/mL, C "
       << a->systemic_arteries().compliance_mL_per_mmHg << " mL/mmHg";
  *m_log << line.str() << std::endl;
}

void ProgressReport::log_blood_fill(const BeatLoop& loop) {
  const circulation::BloodFill* fill = loop.blood_fill();
  if (!fill || fill->history().empty()) return;
  const auto [beat, edp] = fill->history().back();
  if (beat != loop.cavities().cycles()[loop.lv()].current().index) return;
  std::ostringstream line;
  line << std::fixed << std::setprecision(1) << "blood fill: beat " << beat << " began at LV EDP " << edp
       << " mmHg (target " << fill->target().lv_end_diastolic_pressure_mmHg << " +- " << fill->target().tolerance_mmHg
       << "); ";
  line << (fill->reached() ? "reached; " : "") << std::showpos << fill->last_added_mL() << " mL to the vessels ("
       << fill->added_mL() << " mL in all)";
  *m_log << line.str() << std::endl;
}

void ProgressReport::save(BinaryWriter& w) const { w.i64(m_previous_phase); }

void ProgressReport::restore(BinaryReader& r) { m_previous_phase = r.i64(); }

}  // namespace cardio::pipeline
