// Cohorts (docs/cohorts.md): `cardiac batch` manifest checks, the local executor with a failing
// case, and `cardiac collect`. The Slurm executor is tested against a real cluster by
// tests/batch_slurm_test.sh.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cardio/core/parallel.hpp"
#include "test_support.hpp"

#ifndef CARDIAC_EXE
#error "CARDIAC_EXE (path of the cardiac executable) must be defined"
#endif

namespace fs = std::filesystem;

namespace {

using namespace cardio::test_support;

struct Result : CommandResult {
  double seconds = 0;
};

void write(const fs::path& p, const std::string& s) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << s;
}

/// Split CSV text into rows of fields (RFC 4180 quoting).
std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows(1);
  std::string field;
  bool quoted = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"')
        field += '"', ++i;
      else if (c == '"')
        quoted = false;
      else
        field += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      rows.back().push_back(field), field.clear();
    } else if (c == '\n') {
      rows.back().push_back(field), field.clear();
      rows.emplace_back();
    } else {
      field += c;
    }
  }
  if (rows.back().empty()) rows.pop_back();
  return rows;
}

class BatchTest : public ::testing::Test {
 protected:
  Result cardiac(const std::string& args, const std::string& env = "CARDIAC_SCRIPTS_DIR=/nonexistent") {
    const std::string cmd =
        "cd " + shell_quote(m_dir.string()) + " && env " + env + " " + shell_quote(CARDIAC_EXE) + " " + args;
    const auto t0 = std::chrono::steady_clock::now();
    Result r{run_command(cmd, m_dir)};
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
  }
  TempDir m_tmp{"cardio_batch_test_"};
  fs::path m_dir = m_tmp.path();
};

const fs::path kSource = CARDIO_SOURCE_DIR;
const fs::path kBase = kSource / "configs" / "lv_phantom.yaml";

TEST_F(BatchTest, ManifestProblemsAreReportedPerCaseAndNothingIsCreated) {
  write(m_dir / "data" / "labels.nii.gz", "not read: the phantom has no label input");
  write(m_dir / "cohort.yaml",
        "base_config: " + kBase.string() +
            "\n"
            "set: {geometry.phantom.voxel_size: 2 mm, simulation.beats: 1}\n"
            "cases:\n"
            "  - name: good\n"
            "  - name: no_input\n"
            "    inputs: {geometry.labels: data/missing.nii.gz}\n"
            "  - name: twice\n"
            "  - name: twice\n"
            "  - name: ../escape\n"
            "  - name: negative_C\n"
            "    set: {material.C: -2 kPa}\n"
            "  - name: misspelt\n"
            "    set: {material.bulk_modulos: 10 kPa}\n"
            "  - name: not_a_list_item\n"
            "    set:\n"  // (a key with [i] in a flow map {...} would need quotes)
            "      circulation.cavities[3].windkessel.compliance: 1 mL/mmHg\n");
  Result r = cardiac("batch cohort.yaml -o out -j 2");
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_FALSE(fs::exists(m_dir / "out")) << "nothing may be created for a bad manifest";
  EXPECT_HAS(r.err, "6 problem(s); nothing was run or submitted");
  EXPECT_HAS(r.err, "case 'no_input': input geometry.labels: " + (m_dir / "data" / "missing.nii.gz").string() +
                        " does not exist");
  EXPECT_HAS(r.err, "case 'twice': duplicate case name (cases[2] and cases[3])");
  EXPECT_HAS(r.err, "case '../escape': not a safe directory name");
  EXPECT_HAS(r.err, "case 'negative_C': invalid config: --set 'material.C=-2 kPa'");
  EXPECT_HAS(r.err,
             "case 'misspelt': invalid config: --set 'material.bulk_modulos=10 kPa': unknown key "
             "'material.bulk_modulos'; did you mean 'bulk_modulus'?");
  EXPECT_HAS(r.err, "case 'not_a_list_item': invalid config: --set");
  EXPECT_HAS(r.err, "no item 3");
  EXPECT_EQ(r.err.find("case 'good'"), std::string::npos) << r.err;

  // A base config that fails validation: reported for every case, with its file position.
  write(m_dir / "bad_base.yaml", slurp(kBase) + "typo_section: {a: 1}\n");
  write(m_dir / "cohort2.yaml",
        "base_config: bad_base.yaml\nresources: {memory: 2 GB, time_limit: '00:10:00'}\n"
        "cases: [{name: a}, {name: b}]\n");
  r = cardiac("batch cohort2.yaml -o out2 --executor slurm");
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_FALSE(fs::exists(m_dir / "out2"));
  EXPECT_HAS(r.err, "case 'a': invalid config: " + (m_dir / "bad_base.yaml").string());
  EXPECT_HAS(r.err, "case 'b': invalid config: " + (m_dir / "bad_base.yaml").string());
  EXPECT_HAS(r.err, "unknown key 'typo_section'");

  // Errors of the manifest itself: file:line:column and did-you-mean, bad resources.
  write(m_dir / "cohort3.yaml",
        "base_config: " + kBase.string() + "\nresources: {memory: lots, time_limit: '00:10:00'}\ncases: [{name: a}]\n");
  r = cardiac("batch cohort3.yaml -o out3");
  EXPECT_EQ(r.code, 2);
  EXPECT_HAS(r.err, "cohort3.yaml:2:");
  EXPECT_HAS(r.err, "resources.memory: expected an amount of memory like '2 GB'");
  write(m_dir / "cohort4.yaml", "base_config: " + kBase.string() + "\ncasse: [{name: a}]\n");
  r = cardiac("batch cohort4.yaml -o out4");
  EXPECT_EQ(r.code, 2);
  EXPECT_HAS(r.err, "cases");
  write(m_dir / "cohort5.yaml", "base_config: missing.yaml\ncases: [{name: a}]\n");
  r = cardiac("batch cohort5.yaml -o out5");
  EXPECT_EQ(r.code, 2);
  EXPECT_HAS(r.err, "base_config: ");
  EXPECT_FALSE(fs::exists(m_dir / "out3") || fs::exists(m_dir / "out4") || fs::exists(m_dir / "out5"));

  // The Slurm script of a valid manifest, without submitting.
  r = cardiac("batch " + shell_quote((kSource / "configs" / "cohort_example.yaml").string()) +
              " -o sl --executor slurm");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const std::string sb = slurp(m_dir / "sl" / "batch.sbatch");
  EXPECT_HAS(sb, "#SBATCH --array=0-2\n");
  EXPECT_HAS(sb, "#SBATCH --cpus-per-task=1\n");
  EXPECT_HAS(sb, "#SBATCH --mem=1024M\n");
  EXPECT_HAS(sb, "#SBATCH --time=00:20:00\n");
  EXPECT_HAS(sb, "#SBATCH --requeue\n");
  EXPECT_HAS(sb, "run --resume");
  EXPECT_HAS(sb, "OMP_NUM_THREADS");
  EXPECT_HAS(sb, "'circulation.cavities[0].windkessel.peripheral_resistance=40 mmHg*s/mL'");
  EXPECT_HAS(sb, std::string("CARDIAC=") + CARDIAC_EXE);
  const int bash = std::system(("bash -n " + shell_quote((m_dir / "sl" / "batch.sbatch").string())).c_str());
  EXPECT_EQ(bash, 0) << "batch.sbatch is not valid bash";
  EXPECT_TRUE(fs::exists(m_dir / "sl" / "cases" / "baseline.sh"));
}

TEST_F(BatchTest, LocalCohortWithAFailingCaseAndCollect) {
  // The example cohort plus a case that passes validation but fails when run (a pacing site
  // outside the heart is found by the beat's input checks).
  std::string manifest = slurp(kSource / "configs" / "cohort_example.yaml");
  const std::string from = "base_config: lv_phantom.yaml";
  ASSERT_NE(manifest.find(from), std::string::npos);
  manifest.replace(manifest.find(from), from.size(), "base_config: " + kBase.string());
  manifest +=
      "  - name: bad_pacing\n"
      "    set:\n"
      "      activation.sites[0].point: [0 mm, 0 mm, 200 mm]\n";
  write(m_dir / "cohort.yaml", manifest);
  Result r = cardiac("batch cohort.yaml -o out -j 2");
  std::cout << "local batch (4 cases, -j 2): " << r.seconds << " s\n" << r.out;
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_HAS(r.err, "bad_pacing: failed: exit code 1: ");
  const nlohmann::json b = nlohmann::json::parse(slurp(m_dir / "out" / "batch.json"));
  ASSERT_EQ(b["cases"].size(), 4u);
  std::map<std::string, nlohmann::json> cases;
  for (const auto& c : b["cases"]) cases[c["name"]] = c;
  for (const char* n : {"baseline", "weak_contraction", "high_afterload"}) {
    EXPECT_EQ(cases[n]["status"], "ok") << n << ": " << cases[n].dump();
    EXPECT_EQ(cases[n]["exit_code"], 0);
    EXPECT_GT(cases[n]["runtime_s"].get<double>(), 0);
    EXPECT_TRUE(fs::exists(m_dir / "out" / n / "summary.json")) << n;
    EXPECT_HAS(slurp(m_dir / "out" / n / "batch.log"), "=== cardiac batch");
    EXPECT_TRUE(fs::exists(m_dir / "out" / "cases" / (std::string(n) + ".sh")));
  }
  EXPECT_EQ(cases["bad_pacing"]["status"], "failed");
  EXPECT_EQ(cases["bad_pacing"]["exit_code"], 1);
  EXPECT_HAS(cases["bad_pacing"]["reason"].get<std::string>(), "exit code 1: cardiac: run failed:");
  EXPECT_EQ(b["jobs"], 2);
  // The overrides reached the runs.
  EXPECT_HAS(slurp(m_dir / "out" / "weak_contraction" / "config.resolved.yaml"), "peak_tension: 40 kPa");
  EXPECT_HAS(slurp(m_dir / "out" / "high_afterload" / "config.resolved.yaml"),
             "peripheral_resistance: 5.33289");  // 40 mmHg*s/mL in kPa*ms/mm^3 (the base has 20)

  // collect: one row per case, failed included; the figure script is absent here (a warning).
  r = cardiac("collect out");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_HAS(r.err, "warning: no cohort figures");
  const auto rows = parse_csv(slurp(m_dir / "out" / "cohort.csv"));
  ASSERT_EQ(rows.size(), 5u);
  const auto& h = rows[0];
  auto col = [&](const std::string& name) {
    const auto it = std::find(h.begin(), h.end(), name);
    EXPECT_NE(it, h.end()) << name;
    return static_cast<std::size_t>(it - h.begin());
  };
  std::istringstream columns(
      "case status reason lv_EDV_mL lv_ESV_mL lv_SV_mL lv_EF max_tissue_volume_change_percent "
      "fibre_shortening_end_systole wall_thickening simulate_time_s peak_E_cc peak_E_ll peak_E_rr peak_E_ff "
      "GLS_percent GCS_percent GRS_percent wall_thickening_percent twist_deg lv_peak_pressure_mmHg "
      "lv_cardiac_output_L_per_min clinical_inside clinical_compared");
  for (std::string c; columns >> c;) (void)col(c);
  std::map<std::string, std::vector<std::string>> by_case;
  for (std::size_t i = 1; i < rows.size(); ++i) {
    ASSERT_EQ(rows[i].size(), h.size()) << "row " << i;
    by_case[rows[i][0]] = rows[i];
  }
  for (const char* n : {"baseline", "weak_contraction", "high_afterload"}) {
    ASSERT_TRUE(by_case.count(n)) << n;
    EXPECT_EQ(by_case[n][col("status")], "ok");
    const double ef = std::stod(by_case[n][col("lv_EF")]);
    EXPECT_GT(ef, 0.05) << n;
    EXPECT_LT(ef, 0.95) << n;
    // The clinical columns carry the summary's values: a beating LV shortens and builds pressure.
    EXPECT_LT(std::stod(by_case[n][col("GLS_percent")]), 0) << n;
    EXPECT_GT(std::stod(by_case[n][col("lv_peak_pressure_mmHg")]), 10) << n;
    const int compared = std::stoi(by_case[n][col("clinical_compared")]);
    EXPECT_GE(compared, 8) << n;
    EXPECT_LE(std::stoi(by_case[n][col("clinical_inside")]), compared) << n;
  }
  EXPECT_LT(std::stod(by_case["weak_contraction"][col("lv_EF")]), std::stod(by_case["baseline"][col("lv_EF")]))
      << "weaker contraction should eject less";
  EXPECT_EQ(by_case["bad_pacing"][col("status")], "failed");
  EXPECT_HAS(by_case["bad_pacing"][col("reason")], "exit code 1");
  EXPECT_EQ(by_case["bad_pacing"][col("lv_EF")], "");

  // Running the batch again: finished cases are kept, the failing one is run again.
  r = cardiac("batch cohort.yaml -o out -j 2");
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_HAS(r.out, "baseline: already finished");
  const nlohmann::json b2 = nlohmann::json::parse(slurp(m_dir / "out" / "batch.json"));
  for (const auto& c : b2["cases"]) EXPECT_EQ(c["reused"].get<bool>(), c["name"] != "bad_pacing") << c.dump();
}

// Interrupting a batch (SIGTERM, as Slurm or a Ctrl-C would) leaves resumable cases; running the
// batch again resumes them from their checkpoints (cardiac run --resume).
// The values each patient's run calibrated are columns of the cohort table: read from summaries written
// by hand (a folder of finished runs without batch.json), empty where a run did not calibrate them.
TEST_F(BatchTest, CollectTabulatesWhatEachRunCalibrated) {
  write(m_dir / "runs" / "calibrated" / "summary.json",
        R"({"tension_calibration": {"peak_tension_kPa": 119.7},
            "circulation": {"blood_volume_added_mL": 338.9,
                            "afterload": {"systemic_arteries": {"resistance_mmHg_s_per_mL": 0.626,
                                                                "compliance_mL_per_mmHg": 1.87}}}})");
  write(m_dir / "runs" / "plain" / "summary.json", R"({"cavities": [{"name": "lv", "EF": 0.55}]})");
  const Result r = cardiac("collect runs --no-figures");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const auto rows = parse_csv(slurp(m_dir / "runs" / "cohort.csv"));
  ASSERT_EQ(rows.size(), 3u);
  std::map<std::string, std::map<std::string, std::string>> by_case;
  for (std::size_t i = 1; i < rows.size(); ++i)
    for (std::size_t k = 0; k < rows[0].size() && k < rows[i].size(); ++k) by_case[rows[i][0]][rows[0][k]] = rows[i][k];
  EXPECT_EQ(by_case["calibrated"]["calibrated_peak_tension_kPa"], "119.7");
  EXPECT_EQ(by_case["calibrated"]["blood_volume_added_mL"], "338.9");
  EXPECT_EQ(by_case["calibrated"]["systemic_resistance_mmHg_s_per_mL"], "0.626");
  EXPECT_EQ(by_case["calibrated"]["systemic_compliance_mL_per_mmHg"], "1.87");
  for (const char* column : {"calibrated_peak_tension_kPa", "blood_volume_added_mL",
                             "systemic_resistance_mmHg_s_per_mL", "systemic_compliance_mL_per_mmHg"}) {
    ASSERT_TRUE(by_case["plain"].count(column)) << column;
    EXPECT_EQ(by_case["plain"][column], "") << column;
  }
  EXPECT_EQ(by_case["plain"]["lv_EF"], "0.55");
}

TEST_F(BatchTest, InterruptedCasesAreResumed) {
  write(m_dir / "cohort.yaml", "base_config: " + kBase.string() +
                                   "\nset: {geometry.phantom.voxel_size: 2 mm, simulation.beats: 1}\n"
                                   "cases: [{name: a}, {name: b, set: {activation.twitch.peak_tension: 50 kPa}}]\n");
  if (cardio::available_cpus() < 2) GTEST_SKIP() << "-j 2 needs 2 CPUs (batch refuses more workers than CPUs)";
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (::chdir(m_dir.c_str()) != 0) ::_exit(126);
    if (!std::freopen("first.out", "w", stdout) || !std::freopen("first.out", "a", stderr)) ::_exit(126);
    ::execl(CARDIAC_EXE, CARDIAC_EXE, "batch", "cohort.yaml", "-o", "out", "-j", "2", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  // Wait until both cases have written a checkpoint, then stop the batch as Slurm or kill would.
  const auto t0 = std::chrono::steady_clock::now();
  int status = 0;
  while (!(fs::exists(m_dir / "out" / "a" / "checkpoint.bin") && fs::exists(m_dir / "out" / "b" / "checkpoint.bin"))) {
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > 120) ::kill(pid, SIGKILL);
    ASSERT_EQ(::waitpid(pid, &status, WNOHANG), 0) << "the batch ended before it could be interrupted:\n"
                                                   << slurp(m_dir / "first.out");
    ::usleep(100000);
  }
  ASSERT_EQ(::kill(pid, SIGTERM), 0);
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1) << slurp(m_dir / "first.out");
  nlohmann::json b = nlohmann::json::parse(slurp(m_dir / "out" / "batch.json"));
  for (const auto& c : b["cases"]) {
    EXPECT_EQ(c["status"], "interrupted") << c.dump();
    EXPECT_EQ(c["exit_code"], 75) << c.dump();
    EXPECT_HAS(c["reason"].get<std::string>(), "resumable");
  }
  const Result r = cardiac("batch cohort.yaml -o out -j 2");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_HAS(r.out, "start a (resuming from its checkpoint)");
  b = nlohmann::json::parse(slurp(m_dir / "out" / "batch.json"));
  for (const auto& c : b["cases"]) {
    EXPECT_EQ(c["status"], "ok") << c.dump();
    EXPECT_TRUE(c["resumed"].get<bool>()) << c.dump();
    EXPECT_TRUE(fs::exists(m_dir / "out" / c["name"].get<std::string>() / "summary.json"));
  }
  EXPECT_HAS(slurp(m_dir / "out" / "b" / "batch.log"), "run --resume");
}

// --skip-invalid (issue 14): the valid cases of a manifest run, each invalid one is reported (stderr,
// batch.json, cohort.csv), and the exit code is 2. Without it nothing runs. Cases of Land et al.'s
// beam at 0.5 mm: about a second each.
TEST_F(BatchTest, SkipInvalidRunsTheValidCasesAndReportsEachInvalidOne) {
  const fs::path base = kSource / "configs" / "benchmarks" / "land2015_problem1.yaml";
  write(m_dir / "cohort.yaml", "base_config: " + base.string() +
                                   "\nset: {geometry.box.voxel_size: 0.5 mm}\n"
                                   "cases:\n"
                                   "  - {name: soft, set: {material.C: 1 kPa}}\n"
                                   "  - {name: negative_C, set: {material.C: -2 kPa}}\n"
                                   "  - {name: stiff, set: {material.C: 4 kPa}}\n"
                                   "  - {name: no_input, inputs: {geometry.labels: data/missing.nii.gz}}\n"
                                   "  - {name: misspelt, set: {material.CC: 2 kPa}}\n");
  Result r = cardiac("batch cohort.yaml -o out");
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_HAS(r.err, "3 problem(s); nothing was run or submitted");
  EXPECT_FALSE(fs::exists(m_dir / "out")) << "the default is unchanged: nothing runs";

  r = cardiac("batch cohort.yaml -o out --skip-invalid");
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_HAS(r.err, "3 invalid case(s) not run (--skip-invalid):");
  EXPECT_HAS(r.err, "  negative_C: invalid: invalid config: --set 'material.C=-2 kPa': material.C: value -2 kPa");
  EXPECT_HAS(r.err, "  no_input: invalid: input geometry.labels: " + (m_dir / "data" / "missing.nii.gz").string() +
                        " does not exist");
  EXPECT_HAS(r.err, "  misspelt: invalid: invalid config: --set 'material.CC=2 kPa': unknown key 'material.CC'");
  EXPECT_HAS(r.out, "cardiac batch: 2 of 5 case(s) ok (3 invalid, not run)");
  const nlohmann::json b = nlohmann::json::parse(slurp(m_dir / "out" / "batch.json"));
  ASSERT_EQ(b["cases"].size(), 5u);
  std::map<std::string, nlohmann::json> cases;
  for (const auto& c : b["cases"]) cases[c["name"]] = c;
  for (const char* n : {"soft", "stiff"}) {
    EXPECT_EQ(cases[n]["status"], "ok") << cases[n].dump();
    EXPECT_TRUE(fs::exists(m_dir / "out" / n / "summary.json")) << n;
  }
  for (const char* n : {"negative_C", "no_input", "misspelt"}) {
    EXPECT_EQ(cases[n]["status"], "invalid") << cases[n].dump();
    EXPECT_TRUE(cases[n]["exit_code"].is_null());
    EXPECT_FALSE(cases[n]["reason"].get<std::string>().empty());
    EXPECT_FALSE(fs::exists(m_dir / "out" / n)) << n << ": an invalid case gets no directory";
    EXPECT_FALSE(fs::exists(m_dir / "out" / "cases" / (std::string(n) + ".sh"))) << n;
  }
  r = cardiac("collect out --no-figures");
  EXPECT_EQ(r.code, 0) << r.err;
  const std::string csv = slurp(m_dir / "out" / "cohort.csv");
  EXPECT_HAS(csv, "\nnegative_C,invalid,,");
  EXPECT_HAS(csv, "\nsoft,ok,0,");

  // The Slurm array holds the valid cases only.
  r = cardiac("batch cohort.yaml -o sl --executor slurm --skip-invalid");
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_HAS(slurp(m_dir / "sl" / "batch.sbatch"), "#SBATCH --array=0-1\n");
  // No valid case, or a problem of the manifest itself: nothing runs, with or without the option.
  write(m_dir / "bad.yaml", "base_config: " + base.string() + "\ncases: [{name: a, set: {material.C: -1 kPa}}]\n");
  write(m_dir / "bad2.yaml", "base_config: " + base.string() + "\nresources: {memory: lots}\ncases: [{name: a}]\n");
  for (const char* manifest : {"bad.yaml", "bad2.yaml"}) {
    r = cardiac(std::string("batch ") + manifest + " -o out3 --skip-invalid");
    EXPECT_EQ(r.code, 2) << manifest << ": " << r.out << r.err;
    EXPECT_HAS(r.err, "nothing was run or submitted (--skip-invalid needs a valid manifest and a valid case)");
    EXPECT_FALSE(fs::exists(m_dir / "out3")) << manifest;
  }
  EXPECT_EQ(cardiac("validate cohort.yaml --skip-invalid").code, 2);  // an option of batch only
}

}  // namespace
