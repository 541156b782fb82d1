// `cardiac collect`: BATCH_DIR/cohort.csv, a row per case with its status and the main results of
// its summary.json, then the cohort figures (best effort).
#include <unistd.h>

#include <algorithm>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <sstream>
#include <utility>

#include "cardio/core/atomic_file.hpp"
#include "cohort/batch.hpp"
#include "cohort/batch_dir.hpp"
#include "cohort/case_exit.hpp"
#include "cohort/text.hpp"
#include "common/figures.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace cardio::pipeline::batch {

namespace {

struct Row {
  std::string name, status, reason;
  std::optional<int> exit_code;
  json summary;
};

/// The cases of batch.json, in manifest order; throws on a malformed file.
std::vector<Row> rows_of_batch_json(const fs::path& file) {
  std::vector<Row> rows;
  const json batch = json::parse(slurp(file));
  for (const auto& c : batch.at("cases")) {
    Row r;
    r.name = c.at("name").get<std::string>();
    r.status = c.value("status", "pending");
    r.reason = c.value("reason", "");
    if (c.contains("exit_code") && c["exit_code"].is_number_integer()) r.exit_code = c["exit_code"].get<int>();
    rows.push_back(r);
  }
  return rows;
}

/// Without batch.json: the sub-directories that look like cases, by name.
std::vector<Row> rows_of_case_folders(const fs::path& dir) {
  std::error_code ec;
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string n = e.path().filename().string();
    if (!e.is_directory() || kReserved.count(n)) continue;
    for (const char* f : {"summary.json", "config.resolved.yaml", "batch.log", "exit_code"})
      if (fs::exists(e.path() / f)) {
        names.push_back(n);
        break;
      }
  }
  std::sort(names.begin(), names.end());
  std::vector<Row> rows;
  for (const auto& n : names) rows.push_back({n, "pending", "", std::nullopt, {}});
  return rows;
}

/// The row's status from what its folder holds now: summary.json, else a Slurm task's exit_code.
void read_outcome(Row& r, const fs::path& cd) {
  std::error_code ec;
  if (r.status == "invalid") {  // not run (--skip-invalid): a summary.json there is an older config's
  } else if (fs::exists(cd / "summary.json", ec)) {
    try {
      r.summary = json::parse(slurp(cd / "summary.json"));
      r.status = "ok";
      r.reason.clear();
      if (!r.exit_code) r.exit_code = 0;
    } catch (const std::exception& e) {
      r.status = "failed";
      r.reason = "unreadable summary.json: " + std::string(e.what());
    }
  } else if (const auto code = read_exit_code(cd / "exit_code")) {  // a Slurm task
    r.exit_code = code;
    r.status = *code == 0 ? "failed" : status_of(*code);
    r.reason = *code == 0 ? "exit code 0 but no summary.json" : exit_reason(*code, cd);
  } else if (r.status == "ok") {
    r.status = "failed";
    r.reason = "summary.json missing";
  } else if (r.status == "pending") {
    r.reason = fs::exists(cd / "checkpoint.bin", ec) ? "not finished (checkpoint.bin present: resumable)"
                                                     : "not finished (no summary.json, no exit code)";
  }
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string num(const json& v) {
  if (v.is_number()) {
    std::ostringstream os;
    os << std::setprecision(10) << v.get<double>();
    return os.str();
  }
  if (v.is_object() && v.contains("value")) return num(v["value"]);
  return {};
}

const json* at_path(const json& j, std::initializer_list<const char*> keys) {
  const json* p = &j;
  for (const char* k : keys) {
    if (!p->is_object() || !p->contains(k)) return nullptr;
    p = &(*p)[k];
  }
  return p;
}

/// The summary's entry of cavity `name` (nullptr if none).
const json* cavity_of(const Row& r, const std::string& name) {
  if (const json* cs = at_path(r.summary, {"cavities"}); cs && cs->is_array())
    for (const auto& x : *cs)
      if (x.value("name", "") == name) return &x;
  return nullptr;
}

/// The cavity names of all summaries, in the order they first appear.
std::vector<std::string> cavities_of(const std::vector<Row>& rows) {
  std::vector<std::string> cavities;
  for (const auto& r : rows)
    if (const json* cs = at_path(r.summary, {"cavities"}); cs && cs->is_array())
      for (const auto& c : *cs)
        if (c.contains("name") && c["name"].is_string()) {
          const std::string n = c["name"].get<std::string>();
          if (std::find(cavities.begin(), cavities.end(), n) == cavities.end()) cavities.push_back(n);
        }
  return cavities;
}

/// summary.json heart.* values a cohort compares with the clinic (clinical_summary.hpp).
constexpr const char* kClinicalHeart[] = {"GLS_percent", "GCS_percent", "GRS_percent", "wall_thickening_percent",
                                          "twist_deg"};
/// cavities[].haemodynamics.* per cavity.
constexpr const char* kHaemodynamics[] = {"peak_pressure_mmHg", "arterial_systolic_pressure_mmHg",
                                          "arterial_diastolic_pressure_mmHg", "cardiac_output_L_per_min"};

/// The values a run calibrated for its patient (heartbeat.md, "Your patient's heart"), by JSON pointer
/// into summary.json: empty where the run did not calibrate them.
constexpr std::pair<const char*, const char*> kCalibrated[] = {
    {"calibrated_peak_tension_kPa", "/tension_calibration/peak_tension_kPa"},
    {"blood_volume_added_mL", "/circulation/blood_volume_added_mL"},
    {"systemic_resistance_mmHg_s_per_mL", "/circulation/afterload/systemic_arteries/resistance_mmHg_s_per_mL"},
    {"systemic_compliance_mL_per_mmHg", "/circulation/afterload/systemic_arteries/compliance_mL_per_mmHg"}};

std::vector<std::string> csv_header(const std::vector<std::string>& cavities) {
  std::vector<std::string> header{"case", "status", "exit_code", "reason"};
  for (const auto& c : cavities)
    for (const char* q : {"EDV_mL", "ESV_mL", "SV_mL", "EF"}) header.push_back(c + "_" + q);
  for (const char* q : {"max_tissue_volume_change_percent", "fibre_shortening_end_systole", "wall_thickening",
                        "simulate_time_s", "peak_E_cc", "peak_E_ll", "peak_E_rr", "peak_E_ff"})
    header.push_back(q);
  for (const char* q : kClinicalHeart) header.push_back(q);
  for (const auto& c : cavities)
    for (const char* q : kHaemodynamics) header.push_back(c + "_" + q);
  header.push_back("clinical_inside");
  header.push_back("clinical_compared");
  for (const auto& [column, pointer] : kCalibrated) header.push_back(column);
  return header;
}

/// The clinical columns of a row: heart.*, haemodynamics per cavity, and how many quantities of
/// clinical_comparison are inside their normal range, of how many compared.
void clinical_fields(const Row& r, const std::vector<std::string>& cavities, std::vector<std::string>& f) {
  for (const char* q : kClinicalHeart) {
    const json* v = at_path(r.summary, {"heart", q});
    f.push_back(v ? num(*v) : "");
  }
  for (const auto& c : cavities) {
    const json* cav = cavity_of(r, c);
    for (const char* q : kHaemodynamics) {
      const json* v = cav ? at_path(*cav, {"haemodynamics", q}) : nullptr;
      f.push_back(v ? num(*v) : "");
    }
  }
  const json* cmp = at_path(r.summary, {"clinical_comparison"});
  if (!cmp || !cmp->is_array()) {
    f.insert(f.end(), {"", ""});
    return;
  }
  long inside = 0;
  for (const auto& q : *cmp) inside += q.value("inside", false);
  f.push_back(std::to_string(inside));
  f.push_back(std::to_string(cmp->size()));
}

/// The fields of a row, in the order of csv_header (empty where the summary has no value).
std::vector<std::string> csv_fields(const Row& r, const std::vector<std::string>& cavities) {
  std::vector<std::string> f{r.name, r.status, r.exit_code ? std::to_string(*r.exit_code) : "", r.reason};
  for (const auto& c : cavities) {
    const json* cav = cavity_of(r, c);
    for (const char* q : {"EDV_mL", "ESV_mL", "SV_mL", "EF"})
      f.push_back(cav && cav->contains(q) ? num((*cav)[q]) : "");
  }
  for (const char* q : {"max_tissue_volume_change_percent", "fibre_shortening_end_systole", "wall_thickening"}) {
    const json* v = at_path(r.summary, {"heart", q});
    f.push_back(v ? num(*v) : "");
  }
  const json* st = at_path(r.summary, {"simulate_time_s"});
  f.push_back(st ? num(*st) : "");
  for (const char* q : {"E_cc", "E_ll", "E_rr", "E_ff"}) {
    const json* v = at_path(r.summary, {"analysis", "peak_strain", "global", q});
    f.push_back(v ? num(*v) : "");
  }
  clinical_fields(r, cavities, f);
  for (const auto& [column, pointer] : kCalibrated) {
    const json::json_pointer at(pointer);
    f.push_back(r.summary.contains(at) ? num(r.summary.at(at)) : "");
  }
  return f;
}

std::string cohort_csv(const std::vector<Row>& rows) {
  const std::vector<std::string> cavities = cavities_of(rows);
  std::ostringstream csv;
  auto line = [&](const std::vector<std::string>& fields, bool quote) {
    for (std::size_t k = 0; k < fields.size(); ++k) csv << (k ? "," : "") << (quote ? csv_field(fields[k]) : fields[k]);
    csv << "\n";
  };
  line(csv_header(cavities), false);
  for (const auto& r : rows) line(csv_fields(r, cavities), true);
  return csv.str();
}

/// scripts/figures/cohort_figures.py on BATCH_DIR, best effort: a warning when it cannot run or fails.
void cohort_figures(const fs::path& dir, std::ostream& out, std::ostream& err) {
  const fs::path script = figures::script_path("cohort_figures.py");
  std::error_code ec;
  if (!fs::exists(script, ec)) {
    err << "cardiac collect: warning: no cohort figures: " << script.string() << " not found\n";
    return;
  }
  if (::access(figures::kPython, X_OK) != 0) {
    err << "cardiac collect: warning: no cohort figures: " << figures::kPython << " not found\n";
    return;
  }
  std::string errors;  // shown only when the script fails
  const ProcessStatus s = figures::launch_figure_script(
      "cohort_figures.py", fs::absolute(dir), [&](std::string_view line) { out << line << std::flush; },
      [&](std::string_view line) { errors += line; });
  if (s.code() != 0)
    err << errors << "cardiac collect: warning: the cohort figures failed (" << script.string() << ", exit code "
        << s.code() << "); cohort.csv is written\n";
}

}  // namespace

int collect(const CollectOptions& o, std::ostream& out, std::ostream& err) {
  const fs::path dir = o.batch_dir;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    err << "cardiac collect: " << dir.string() << " is not a directory\n";
    return kExitUsage;
  }
  // Cases: those of batch.json in manifest order, else the sub-directories that look like cases.
  std::vector<Row> rows;
  if (fs::exists(dir / "batch.json", ec)) {
    try {
      rows = rows_of_batch_json(dir / "batch.json");
    } catch (const std::exception& e) {
      err << "cardiac collect: " << (dir / "batch.json").string() << ": " << e.what() << "\n";
      return kExitUsage;
    }
  } else {
    rows = rows_of_case_folders(dir);
  }
  if (rows.empty()) {
    err << "cardiac collect: no cases in " << dir.string() << " (no batch.json and no case folders)\n";
    return kExitUsage;
  }
  for (auto& r : rows) read_outcome(r, dir / r.name);
  const fs::path file = dir / "cohort.csv";
  try {
    write_file_atomic(file, cohort_csv(rows));
  } catch (const std::exception& e) {
    err << "cardiac collect: " << e.what() << "\n";
    return kExitFailed;
  }
  const auto ok = std::count_if(rows.begin(), rows.end(), [](const Row& r) { return r.status == "ok"; });
  out << "wrote " << file.string() << " (" << rows.size() << " case(s), " << ok << " ok)\n";
  for (const auto& r : rows)
    if (r.status != "ok")
      out << "  " << r.name << ": " << r.status << (r.reason.empty() ? "" : ": " + r.reason) << "\n";
  if (o.figures) cohort_figures(dir, out, err);
  return kExitOk;
}

}  // namespace cardio::pipeline::batch
