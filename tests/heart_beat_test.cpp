// The default case (configs/lv_phantom.yaml): the synthetic LV beating twice against a Windkessel.
// Checks the physiological plausibility the issue asks for (EF 40-70 %, myocardial volume change
// under 5 %, fibre shortening and wall thickening at end-systole), Promayon's exact volume
// constraint during the isovolumic phases (1e-10 relative), and the output contract (frames +
// series.pvd with their fields, timeseries.csv columns).
#include <gtest/gtest.h>
#include <unistd.h>

#include <vtkCellData.h>
#include <vtkDataArray.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkUnstructuredGrid.h>
#include <vtkXMLDataElement.h>
#include <vtkXMLDataParser.h>
#include <vtkXMLUnstructuredGridReader.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "cardio/config/config.hpp"
#include "config/heart_config.hpp"
#include "heart/beat_run.hpp"
#include "heart/quasi_static.hpp"
#include "mesh/mesh_stage.hpp"

namespace fs = std::filesystem;
using namespace cardio;

namespace {

std::vector<std::vector<std::string>> read_csv(const fs::path& file) {
  std::ifstream in(file);
  std::vector<std::vector<std::string>> rows;
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> cells;
    std::stringstream ss(line);
    for (std::string c; std::getline(ss, c, ',');) cells.push_back(c);
    rows.push_back(cells);
  }
  return rows;
}

/// Issue 16 (what researchers compare with the clinic): the clinical_comparison block has every
/// field, each `inside` says whether lo <= value <= hi, and the values are the summary's own
/// (EDV, EF, the global engineering strains in %); the arterial pressure column exists and the
/// haemodynamics hold CO = SV x heart rate.
void check_clinical_measures(const nlohmann::json& summary, const std::vector<std::vector<std::string>>& rows) {
  EXPECT_EQ(rows[0][4], "lv_arterial_pressure_mmHg");
  const auto& lv = summary["cavities"][0];
  const auto& h = lv["haemodynamics"];
  for (const char* key :
       {"peak_pressure_mmHg", "dPdt_max_mmHg_per_s", "dPdt_min_mmHg_per_s", "stroke_work_mmHg_mL", "heart_rate_bpm",
        "cardiac_output_L_per_min", "arterial_systolic_pressure_mmHg", "arterial_diastolic_pressure_mmHg"})
    ASSERT_TRUE(h.contains(key) && h[key].is_number()) << key << " in " << h.dump();
  EXPECT_GT(h["dPdt_max_mmHg_per_s"].get<double>(), 0);
  EXPECT_LT(h["dPdt_min_mmHg_per_s"].get<double>(), 0);
  EXPECT_DOUBLE_EQ(h["heart_rate_bpm"].get<double>(), 75.0);  // period 800 ms
  EXPECT_NEAR(h["cardiac_output_L_per_min"].get<double>(), lv["SV_mL"].get<double>() * 75.0 / 1000.0, 1e-12);
  EXPECT_LT(h["arterial_diastolic_pressure_mmHg"].get<double>(), h["arterial_systolic_pressure_mmHg"].get<double>());
  EXPECT_LE(h["arterial_systolic_pressure_mmHg"].get<double>(), h["peak_pressure_mmHg"].get<double>() + 1e-9);

  const auto& cc = summary["clinical_comparison"];
  ASSERT_TRUE(cc.is_array());
  std::map<std::string, double> value;
  for (const auto& q : cc) {
    for (const char* key : {"quantity", "value", "unit", "normal_range", "source", "inside"})
      ASSERT_TRUE(q.contains(key)) << key << " missing in " << q.dump();
    ASSERT_EQ(q["normal_range"].size(), 2u);
    const double v = q["value"].get<double>(), lo = q["normal_range"][0].get<double>();
    const double hi = q["normal_range"][1].get<double>();
    EXPECT_LE(lo, hi) << q.dump();
    EXPECT_EQ(q["inside"].get<bool>(), lo <= v && v <= hi) << q.dump();
    EXPECT_FALSE(q["source"].get<std::string>().empty());
    EXPECT_FALSE(q.contains("calibrated_by")) << "nothing is calibrated in this run: " << q.dump();
    value[q["quantity"].get<std::string>()] = v;
  }
  // The LV phantom has no RV: 9 quantities, and no RV entry.
  EXPECT_EQ(cc.size(), 9u) << cc.dump(1);
  EXPECT_EQ(value.count("RV ejection fraction"), 0u);
  EXPECT_DOUBLE_EQ(value["LV end-diastolic volume"], lv["EDV_mL"].get<double>());
  EXPECT_DOUBLE_EQ(value["LV ejection fraction"], 100 * lv["EF"].get<double>());
  const auto& global = summary["analysis"]["peak_strain"]["global"];
  // GLS and GCS are those of the LV endocardium (echo's definition), GRS the element mean.
  const auto& endocardial = summary["analysis"]["peak_strain"]["lv_endocardial"];
  EXPECT_DOUBLE_EQ(value["global longitudinal strain (GLS)"], 100 * endocardial["GLS"].get<double>());
  EXPECT_DOUBLE_EQ(value["global circumferential strain (GCS)"], 100 * endocardial["GCS"].get<double>());
  EXPECT_DOUBLE_EQ(value["global radial strain (GRS)"], 100 * global["e_rr"].get<double>());
  for (const char* k : {"GLS_GCS", "GRS"})
    EXPECT_TRUE(summary["heart"]["strain_definition"][k].is_string()) << summary["heart"].dump();
  // The rodent-sized phantom: its EDV (about 4 mL) is far below the adult range.
  EXPECT_LT(value["LV end-diastolic volume"], 100);
  // e <= E element by element (sqrt(1 + 2E) <= 1 + E): the engineering peaks lie below the
  // Green-Lagrange ones, shortening more negative and thickening smaller.
  for (const char* k : {"cc", "ll", "rr", "ff"})
    EXPECT_LE(global[std::string("e_") + k].get<double>(), global[std::string("E_") + k].get<double>()) << k;
  const auto& twist = summary["analysis"]["twist"];
  EXPECT_GT(twist["basal_slice_nodes"].get<int>(), 20);
  EXPECT_GT(twist["apical_slice_nodes"].get<int>(), 20);
  EXPECT_GT(twist["slice_distance_mm"].get<double>(), 5);
  std::cout << "clinical comparison:\n"
            << cc.dump(1) << "\nhaemodynamics: " << h.dump() << "\ntwist: " << twist.dump() << "\n";
}

TEST(HeartBeat, DefaultCaseIsPhysiologicallyPlausible) {
  const fs::path out = fs::temp_directory_path() / ("cardio_beat_" + std::to_string(::getpid()));
  fs::remove_all(out);
  auto doc = config::Document::load_file(std::string(CARDIO_SOURCE_DIR) + "/configs/lv_phantom.yaml");
  const pipeline::HeartConfig cfg = pipeline::parse_heart_config(*doc);
  const pipeline::MeshStageResult mesh = pipeline::run_mesh_stages(cfg.mesh);
  std::ostringstream log;
  const pipeline::BeatRunResult r = pipeline::run_heart_beat(*cfg.simulation, mesh.mesh, out, &log);
  std::cout << log.str() << r.summary.dump(2) << "\n";

  // The log has one line per finished beat, the last one (which ends with the run) included.
  for (int beat = 1; beat <= cfg.simulation->beats; ++beat) {
    const std::string line = "beat " + std::to_string(beat) + " lv: EDV";
    const std::string text = log.str();
    const auto at = text.find(line);
    EXPECT_NE(at, std::string::npos) << line;
    EXPECT_EQ(text.find(line, at + 1), std::string::npos) << line << " twice";
  }

  const auto& lv = r.summary["cavities"][0];
  ASSERT_FALSE(lv["EF"].is_null()) << "no complete beat";
  const double ef = lv["EF"].get<double>();
  EXPECT_GE(ef, 0.40);
  EXPECT_LE(ef, 0.70);
  EXPECT_NEAR(lv["SV_mL"].get<double>(), lv["EDV_mL"].get<double>() - lv["ESV_mL"].get<double>(), 1e-12);
  const auto& heart = r.summary["heart"];
  EXPECT_LT(heart["max_tissue_volume_change_percent"].get<double>(), 5.0);
  EXPECT_LT(heart["fibre_shortening_end_systole"].get<double>(), 0.0);
  EXPECT_GT(heart["wall_thickening"].get<double>(), 0.0);

  // Isovolumic phases: the volume is held by the exact projection.
  const auto rows = read_csv(out / "timeseries.csv");
  ASSERT_GT(rows.size(), 100u);
  EXPECT_EQ(rows[0][0], "time_ms");
  EXPECT_EQ(rows[0][1], "lv_volume_mL");
  EXPECT_EQ(rows[0][2], "lv_pressure_mmHg");
  EXPECT_EQ(rows[0][3], "lv_phase");
  int checked = 0;
  for (std::size_t i = 2; i < rows.size(); ++i)
    if (rows[i][3] == "isovolumic_contraction" && rows[i - 1][3] == "isovolumic_contraction") {
      const double v0 = std::stod(rows[i - 1][1]), v1 = std::stod(rows[i][1]);
      EXPECT_LT(std::abs(v1 - v0) / v0, 1e-10) << "t = " << rows[i][0];
      ++checked;
    }
  EXPECT_GT(checked, 5);

  // Frames: series.pvd lists them; each carries the contract's fields.
  ASSERT_TRUE(fs::exists(out / "series.pvd"));
  vtkNew<vtkXMLUnstructuredGridReader> reader;
  reader->SetFileName((out / "frames" / "frame_00010.vtu").c_str());
  reader->Update();
  vtkUnstructuredGrid* g = reader->GetOutput();
  EXPECT_EQ(g->GetNumberOfCells(), mesh.mesh.mesh.n_elements());
  for (const char* p : {"displacement", "velocity"}) EXPECT_NE(g->GetPointData()->GetArray(p), nullptr) << p;
  for (const char* c : {"activation_time", "active_tension", "label"})
    EXPECT_NE(g->GetCellData()->GetArray(c), nullptr) << c;

  // Strain analysis (issue 5): every frame listed in series.pvd reads back with VTK and carries the
  // strain fields; regional_strain.csv and the peak strains of the summary.
  vtkNew<vtkXMLDataParser> pvd;
  pvd->SetFileName((out / "series.pvd").c_str());
  ASSERT_EQ(pvd->Parse(), 1) << "series.pvd is not valid XML";
  vtkXMLDataElement* collection = pvd->GetRootElement()->FindNestedElementWithName("Collection");
  ASSERT_NE(collection, nullptr);
  ASSERT_GT(collection->GetNumberOfNestedElements(), 100);
  // End-systole of the last beat (800 ms period): the smallest LV volume in the last 800 ms.
  double t_es = 0, v_es = INFINITY;
  for (std::size_t i = 1; i < rows.size(); ++i)
    if (std::stod(rows[i][0]) > std::stod(rows.back()[0]) - 800 && std::stod(rows[i][1]) < v_es)
      v_es = std::stod(rows[i][1]), t_es = std::stod(rows[i][0]);
  double last_time = -1, j_min = INFINITY, j_max = -INFINITY, es_gap = INFINITY, radial_stretch_es = 0;
  for (int i = 0; i < collection->GetNumberOfNestedElements(); ++i) {
    vtkXMLDataElement* ds = collection->GetNestedElement(i);
    const double time = std::stod(ds->GetAttribute("timestep"));
    EXPECT_GT(time, last_time);
    last_time = time;
    vtkNew<vtkXMLUnstructuredGridReader> fr;
    fr->SetFileName((out / ds->GetAttribute("file")).c_str());
    fr->Update();
    vtkUnstructuredGrid* fg = fr->GetOutput();
    ASSERT_EQ(fg->GetNumberOfCells(), mesh.mesh.mesh.n_elements()) << ds->GetAttribute("file");
    for (const char* c : {"E_ff", "E_cc", "E_rr", "E_ll", "J", "aha_segment"}) {
      vtkDataArray* a = fg->GetCellData()->GetArray(c);
      ASSERT_NE(a, nullptr) << c << " in " << ds->GetAttribute("file");
      EXPECT_EQ(a->GetNumberOfComponents(), 1);
    }
    ASSERT_NE(fg->GetCellData()->GetArray("E"), nullptr);
    EXPECT_EQ(fg->GetCellData()->GetArray("E")->GetNumberOfComponents(), 9);
    // Issue 11: the element's volume ratio J (relative to the frame's reference, rest or end-diastole)
    // stays within [0.9, 1.1] in every element of every frame: no crumpled voxels.
    double j_range[2];
    fg->GetCellData()->GetArray("J")->GetRange(j_range);
    j_min = std::min(j_min, j_range[0]);
    j_max = std::max(j_max, j_range[1]);
    if (std::abs(time - t_es) < es_gap) {  // mean radial stretch sqrt(1 + 2 E_rr) (reference: end-diastole)
      es_gap = std::abs(time - t_es);
      vtkDataArray* e_rr = fg->GetCellData()->GetArray("E_rr");
      radial_stretch_es = 0;
      for (vtkIdType c = 0; c < e_rr->GetNumberOfTuples(); ++c)
        radial_stretch_es += std::sqrt(1 + 2 * e_rr->GetTuple1(c));
      radial_stretch_es /= double(e_rr->GetNumberOfTuples());
    }
    vtkDataArray* seg = fg->GetCellData()->GetArray("aha_segment");
    double range[2];
    seg->GetRange(range);
    EXPECT_EQ(range[0], 1);  // the LV phantom is all LV
    EXPECT_EQ(range[1], 17);
  }
  std::cout << "element volume ratio J over every frame: " << j_min << " .. " << j_max << "\n";
  EXPECT_GE(j_min, 0.9);
  EXPECT_LE(j_max, 1.1);
  // Issue 11: the wall thickening of the summary (mean endo-epi distance, ES / ED) and the mean
  // radial stretch of the LV wall at end-systole (the frame nearest it) agree within 5 points.
  const double thickness_ratio = 1 + heart["wall_thickening"].get<double>();
  std::cout << "end-systole at " << t_es << " ms (frame " << es_gap << " ms off): mean radial stretch "
            << radial_stretch_es << ", wall-thickness ratio " << thickness_ratio << "\n";
  EXPECT_LT(es_gap, 10.0);
  EXPECT_NEAR(radial_stretch_es, thickness_ratio, 0.05);
  const auto regional = read_csv(out / "regional_strain.csv");
  ASSERT_GT(regional.size(), 18u * 100);
  const std::vector<std::string> strains{"E_cc", "E_ll", "E_rr", "E_ff", "e_cc", "e_ll", "e_rr", "e_ff"};
  std::vector<std::string> header{"time_ms", "segment"};
  header.insert(header.end(), strains.begin(), strains.end());
  EXPECT_EQ(regional[0], header);
  // Engineering strain next to Green-Lagrange: e = sqrt(1 + 2E) - 1 holds element by element, so the
  // means obey Jensen's inequality, mean e <= sqrt(1 + 2 mean E) - 1 (sqrt is concave).
  for (std::size_t i = 1; i < regional.size(); ++i)
    for (std::size_t k = 2; k < 6; ++k)
      EXPECT_LE(std::stod(regional[i][k + 4]), std::sqrt(1 + 2 * std::stod(regional[i][k])) - 1 + 1e-12)
          << "row " << i << " " << regional[0][k];
  EXPECT_EQ((regional.size() - 1) % 18, 0u) << "18 rows (whole LV + 17 segments) per sample time";
  // Label regions: the phantom has one myocardium label, all LV, so its label mean is the whole-LV
  // mean (segment 0) of every sample, computed by a separate sum.
  const auto labels = read_csv(out / "label_strain.csv");
  header[1] = "label";
  ASSERT_EQ(labels[0], header);
  ASSERT_EQ(labels.size() - 1, (regional.size() - 1) / 18);
  for (std::size_t i = 1; i < labels.size(); ++i) {
    const auto& whole = regional[1 + 18 * (i - 1)];
    ASSERT_EQ(whole[1], "0");
    EXPECT_EQ(labels[i][0], whole[0]);
    for (std::size_t k = 2; k < header.size(); ++k)
      EXPECT_NEAR(std::stod(labels[i][k]), std::stod(whole[k]), 1e-12) << "row " << i;
  }
  const auto& peak = r.summary["analysis"]["peak_strain"];
  EXPECT_EQ(peak["reference"], "end_diastole");
  // lv_global_strain.csv: GLS and GCS on the LV endocardium at each sample time of the regional table;
  // the summary's peaks are its most negative values in the peak window.
  const auto lv_global = read_csv(out / "lv_global_strain.csv");
  ASSERT_EQ(lv_global[0], (std::vector<std::string>{"time_ms", "GLS_fraction", "GCS_fraction"}));
  ASSERT_EQ(lv_global.size() - 1, (regional.size() - 1) / 18);
  const double t0 = peak["window_ms"][0].get<double>(), t1 = peak["window_ms"][1].get<double>();
  double gls_min = INFINITY, gcs_min = INFINITY;
  for (std::size_t i = 1; i < lv_global.size(); ++i) {
    EXPECT_EQ(lv_global[i][0], regional[1 + 18 * (i - 1)][0]);
    const double t = std::stod(lv_global[i][0]);
    if (t < t0 || t >= t1) continue;
    gls_min = std::min(gls_min, std::stod(lv_global[i][1]));
    gcs_min = std::min(gcs_min, std::stod(lv_global[i][2]));
  }
  EXPECT_NEAR(peak["lv_endocardial"]["GLS"].get<double>(), gls_min, 1e-12);
  EXPECT_NEAR(peak["lv_endocardial"]["GCS"].get<double>(), gcs_min, 1e-12);
  // Systole shortens the endocardium along its meridian and around it.
  EXPECT_LT(gls_min, -0.02);
  EXPECT_LT(gcs_min, -0.05);
  EXPECT_GT(peak["lv_endocardial"]["faces"].get<int>(), 100);
  // Relative to end-diastole, systole shortens the LV circumferentially, longitudinally and along the
  // fibres and thickens it radially (the signs of clinical strain), in every segment.
  EXPECT_LT(peak["global"]["E_cc"].get<double>(), -0.05);
  EXPECT_LT(peak["global"]["E_ll"].get<double>(), -0.05);
  EXPECT_LT(peak["global"]["E_ff"].get<double>(), -0.05);
  EXPECT_GT(peak["global"]["E_rr"].get<double>(), 0.05);
  ASSERT_EQ(peak["segments"].size(), 17u);
  for (const auto& sgm : peak["segments"]) {
    EXPECT_LT(sgm["E_cc"].get<double>(), 0) << sgm.dump();
    EXPECT_LT(sgm["E_ll"].get<double>(), 0) << sgm.dump();
  }
  check_clinical_measures(r.summary, rows);
  fs::remove_all(out);
}

/// configs/lv_phantom.yaml as text, for tests that edit a section the overrides cannot reach.
std::string default_case_yaml() {
  std::ifstream in(std::string(CARDIO_SOURCE_DIR) + "/configs/lv_phantom.yaml");
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

/// The default case at 1.5 mm for one beat, with the base sliding in its plane instead of fixed
/// and an elastic pericardium of stiffness k on the epicardium.
pipeline::BeatRunResult sliding_beat(const std::string& stiffness, const fs::path& out,
                                     pipeline::MeshStageResult* mesh) {
  std::string yaml = default_case_yaml();
  const std::string fixed = "boundary:\n  fixed:\n    - {tag: base}\n";
  const auto at = yaml.find(fixed);
  EXPECT_NE(at, std::string::npos) << "lv_phantom.yaml no longer fixes the base";
  yaml.replace(at, fixed.size(),
               "boundary:\n  sliding:\n    - {tag: base}\n  pericardium:\n    stiffness: " + stiffness + "\n");
  auto doc = config::Document::load_string(yaml, "lv_phantom.yaml (sliding base)");
  doc->set_override("geometry.phantom.voxel_size=1.5 mm");
  doc->set_override("simulation.beats=1");
  const pipeline::HeartConfig cfg = pipeline::parse_heart_config(*doc);
  *mesh = pipeline::run_mesh_stages(cfg.mesh);
  return pipeline::run_heart_beat(*cfg.simulation, mesh->mesh, out, nullptr);
}

TEST(HeartBeat, SlidingBaseKeepsItsPlaneAndThePericardiumLimitsFilling) {
  const fs::path out = fs::temp_directory_path() / ("cardio_slide_" + std::to_string(::getpid()));
  pipeline::MeshStageResult mesh;
  const pipeline::BeatRunResult free = sliding_beat("0 kPa/mm", out / "free", &mesh);
  const pipeline::BeatRunResult held = sliding_beat("0.2 kPa/mm", out / "held", &mesh);
  const auto& m = mesh.mesh;
  pipeline::SurfaceSelector base;
  base.tag = "base";
  const auto nodes = pipeline::nodes_of(pipeline::select_quads(base, m));
  ASSERT_GT(nodes.size(), 10u);
  double slide = 0;
  for (std::int32_t n : nodes) {
    EXPECT_EQ(held.state.x(2, n), m.mesh.rest(2, n)) << "base node " << n << " left the base plane";
    slide = std::max(slide, (held.state.x.col(n) - m.mesh.rest.col(n)).norm());
  }
  EXPECT_GT(slide, 1e-2) << "the base did not slide (max in-plane displacement " << slide << " mm)";
  // The pericardium resists the outward motion of the epicardium: less filling at the same pressure.
  const double edv_free = free.summary["cavities"][0]["EDV_mL"].get<double>();
  const double edv_held = held.summary["cavities"][0]["EDV_mL"].get<double>();
  EXPECT_LT(edv_held, edv_free);
  EXPECT_GT(held.summary["cavities"][0]["EF"].get<double>(), 0.1);
  fs::remove_all(out);
}

/// The default case at 2 mm with simulation.stop_when_periodic and up to `beats` beats; `tolerance`
/// is the LV cavity's convergence_tolerance.
pipeline::BeatRunResult periodic_beat(int beats, bool stop, const std::string& tolerance, const fs::path& out,
                                      std::ostringstream& log) {
  std::string yaml = default_case_yaml();
  const std::string ramp = "      filling_ramp: 150 ms\n";
  const auto at = yaml.find(ramp);
  EXPECT_NE(at, std::string::npos) << "lv_phantom.yaml no longer has the filling ramp";
  yaml.insert(at + ramp.size(), "      convergence_tolerance: " + tolerance + "\n");
  auto doc = config::Document::load_string(yaml, "lv_phantom.yaml (periodic)");
  doc->set_override("geometry.phantom.voxel_size=2 mm");
  doc->set_override("simulation.beats=" + std::to_string(beats));
  doc->set_override(std::string("simulation.stop_when_periodic=") + (stop ? "true" : "false"));
  const pipeline::HeartConfig cfg = pipeline::parse_heart_config(*doc);
  const pipeline::MeshStageResult mesh = pipeline::run_mesh_stages(cfg.mesh);
  return pipeline::run_heart_beat(*cfg.simulation, mesh.mesh, out, &log);
}

/// Issue 16: "the beat reaches a periodic state ... and the log says after how many beats". A run
/// that stops at the periodic state is the run of that many beats, to the bit; one that does not
/// reach it runs all its beats and says so.
TEST(HeartBeat, StopsAtThePeriodicStateAndSaysAfterHowManyBeats) {
  const fs::path out = fs::temp_directory_path() / ("cardio_periodic_" + std::to_string(::getpid()));
  std::ostringstream log_stop, log_fixed, log_strict;
  const auto stopped = periodic_beat(4, true, "0.01", out / "stop", log_stop);
  const auto fixed = periodic_beat(2, false, "0.01", out / "fixed", log_fixed);
  const auto& s = stopped.summary;
  // The phantom's LV settles within 1 % from its second beat (the log of the default case).
  EXPECT_NE(log_stop.str().find("periodic after 2 beats"), std::string::npos) << log_stop.str();
  EXPECT_TRUE(s["complete"].get<bool>());
  EXPECT_TRUE(s["periodic_state"]["periodic"].get<bool>());
  EXPECT_EQ(s["periodic_state"]["beats"].get<int>(), 2);
  EXPECT_LT(s["periodic_state"]["largest_edv_change_relative"].get<double>(), 0.01);
  EXPECT_EQ(s["t_end_ms"], fixed.summary["t_end_ms"]);
  EXPECT_EQ(s["steps"], fixed.summary["steps"]);
  EXPECT_EQ(s["cavities"], fixed.summary["cavities"]);
  EXPECT_EQ(stopped.state.x, fixed.state.x);

  // Its second beat's EDV changed by 0.4 %: not periodic at a tolerance of 0.1 %.
  const auto strict = periodic_beat(2, true, "0.001", out / "strict", log_strict);
  EXPECT_NE(log_strict.str().find("not periodic after 2 beats"), std::string::npos) << log_strict.str();
  EXPECT_TRUE(strict.summary["complete"].get<bool>());
  EXPECT_FALSE(strict.summary["periodic_state"]["periodic"].get<bool>());
  EXPECT_EQ(strict.summary["cavities"][0]["beats"].size(), 2u);
  fs::remove_all(out);
}

/// activation.target measures a beat when the next one begins, so a run that ends before that onset
/// has not measured its last beat: the one-beat run (it crashed on the empty calibration history)
/// completes, and each run logs the calibration of its measured beats only, never a stale line.
TEST(HeartBeat, TensionTargetOnARunThatEndsBeforeItsNextOnset) {
  const fs::path out = fs::temp_directory_path() / ("cardio_target_" + std::to_string(::getpid()));
  for (int beats : {1, 2}) {
    auto doc = config::Document::load_string(default_case_yaml(), "lv_phantom.yaml (target)");
    doc->set_override("geometry.phantom.voxel_size=2 mm");
    doc->set_override("simulation.beats=" + std::to_string(beats));
    doc->set_override("activation.target.ejection_fraction=0.6");
    const pipeline::HeartConfig cfg = pipeline::parse_heart_config(*doc);
    const pipeline::MeshStageResult mesh = pipeline::run_mesh_stages(cfg.mesh);
    std::ostringstream log;
    const auto r = pipeline::run_heart_beat(*cfg.simulation, mesh.mesh, out / std::to_string(beats), &log);
    EXPECT_TRUE(r.summary["complete"].get<bool>()) << beats << " beats";
    const std::string text = log.str();
    int lines = 0;
    for (auto at = text.find("tension calibration:"); at != std::string::npos;
         at = text.find("tension calibration:", at + 1))
      ++lines;
    EXPECT_EQ(lines, beats - 1) << text;
    EXPECT_EQ(r.summary["tension_calibration"]["beats"].size(), std::size_t(beats - 1));
  }
  fs::remove_all(out);
}

}  // namespace
