// Issue 14, "Make it last": seeded mutations of every shipped config (configs/) and of the image
// corpus (the phantom written by `cardiac phantom` as NIfTI, NRRD and MetaImage; the CT mask and
// the biventricular surface in data/), each certainly invalid, run through `cardiac validate`
// (and, where cheap, `run`, `mesh` or `batch`). Every one must end with exit 1 or 2 (never 0,
// never a signal), one error naming the key, the file or a voxel, on stderr only, and no
// summary.json. docs/validation.md ("Fuzz test") lists the categories and what each checks.
// CARDIO_FUZZ_SEED and CARDIO_FUZZ_PER_CATEGORY change the draw (default 14 and 2);
// CARDIO_FUZZ_LOG=FILE appends every mutant, its exit code and its message to FILE.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <thread>

#include "fuzz.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
using namespace cardio::fuzz;

namespace {

using cardio::test_support::slurp;
using cardio::test_support::TempDir;

const fs::path kSource = CARDIO_SOURCE_DIR;

std::uint64_t env_or(const char* name, std::uint64_t fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtoull(v, nullptr, 10) : fallback;
}

/// One run of cardiac on a mutant, in its own folder.
struct Job {
  Mutant mutant;
  fs::path dir;
  std::vector<std::string> args;  ///< after the program
  Outcome outcome;
};

void write(const fs::path& p, const std::string& bytes) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << bytes;
}

/// Runs the jobs two at a time (the suite's machines have two cores).
void run_all(std::vector<Job>& jobs) {
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t i; (i = next++) < jobs.size();) {
      std::vector<std::string> argv{CARDIAC_EXE};
      argv.insert(argv.end(), jobs[i].args.begin(), jobs[i].args.end());
      jobs[i].outcome = run_in(jobs[i].dir, argv);
    }
  };
  std::thread a(worker), b(worker);
  a.join();
  b.join();
}

/// Every promise of the fuzz test for one job; "" if all hold.
std::string broken_promise(const Job& j) {
  const Outcome& o = j.outcome;
  if (o.code != 1 && o.code != 2)
    return o.code == 0    ? "exit 0 for an invalid input"
           : o.code > 128 ? "killed by a signal"
                          : "exit " + std::to_string(o.code);
  bool named = false;
  for (const auto& n : j.mutant.needles) named = named || o.err.find(n) != std::string::npos;
  if (!named) return "the message names none of the key, the file or a voxel";
  const std::string first = o.err.substr(0, o.err.find('\n'));
  if (first.rfind("cardiac", 0) != 0) return "the first line on stderr is not cardiac's message";
  if (o.out.find(first) != std::string::npos) return "the error is printed on stdout too";
  for (const auto& e : fs::recursive_directory_iterator(j.dir))
    if (e.path().filename() == "summary.json" || e.path().filename() == "mesh_report.json")
      return "left " + e.path().filename().string();
  if (fs::exists(j.dir / "out") || fs::exists(j.dir / "results")) return "an output directory was created";
  return {};
}

/// Runs the jobs and reports every broken promise, with per-category counts.
void check(std::vector<Job>& jobs, const std::string& title) {
  const auto t0 = std::chrono::steady_clock::now();
  run_all(jobs);
  std::map<std::string, int> count, exit2;
  const char* log_file = std::getenv("CARDIO_FUZZ_LOG");  // every mutant and its message, to read them
  std::ofstream log;
  if (log_file && *log_file) log.open(log_file, std::ios::app);
  for (const Job& j : jobs) {
    if (log.is_open())
      log << j.mutant.category << " | " << j.mutant.what << " | " << j.args.front() << " | exit " << j.outcome.code
          << " | " << j.outcome.err.substr(0, j.outcome.err.find('\n')) << "\n";
    ++count[j.mutant.category];
    exit2[j.mutant.category] += j.outcome.code == 2;
    const std::string why = broken_promise(j);
    std::string cmd = "cardiac";
    for (const auto& a : j.args) cmd += " " + a;
    EXPECT_TRUE(why.empty()) << j.mutant.category << ": " << j.mutant.what << "\n  " << cmd << " (in " << j.dir.string()
                             << ")\n  " << why << "; exit " << j.outcome.code << "\n  stderr: " << j.outcome.err
                             << "  stdout: " << j.outcome.out.substr(0, 300);
  }
  std::cout << title << ": " << jobs.size() << " mutants in "
            << std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() << " s\n";
  for (const auto& [c, n] : count) std::cout << "  " << c << ": " << n << " (exit 2: " << exit2[c] << ")\n";
}

class Fuzz : public ::testing::Test {
 protected:
  TempDir m_tmp{"cardio_fuzz_test_"};
  fs::path m_dir = m_tmp.path();
  Rng m_rng{env_or("CARDIO_FUZZ_SEED", 14)};
  int m_per_category = static_cast<int>(env_or("CARDIO_FUZZ_PER_CATEGORY", 2));
};

/// The shipped configs: their files, and whether a `run` of one is cheap (a second or less).
std::vector<std::pair<fs::path, bool>> shipped_configs() {
  std::vector<std::pair<fs::path, bool>> out;
  for (const char* dir : {"configs", "configs/experiments", "configs/benchmarks"})
    for (const auto& e : fs::directory_iterator(kSource / dir))
      if (e.path().extension() == ".yaml")
        out.emplace_back(e.path(), std::string(dir) == "configs/experiments" || e.path().stem() == "land2015_problem1");
  std::sort(out.begin(), out.end());
  return out;
}

bool is_manifest(const fs::path& p) { return slurp(p).find("\nbase_config:") != std::string::npos; }

/// The command that checks `file`: batch for a manifest (the slurm executor writes a script
/// only, and only for a valid manifest), else validate.
std::vector<std::string> check_command(const fs::path& config, const std::string& file) {
  if (is_manifest(config)) return {"batch", file, "-o", "out", "--executor", "slurm"};
  return {"validate", file};
}

// The mutants are meaningful only if the unmutated configs, as re-emitted, are valid.
TEST_F(Fuzz, EveryShippedConfigIsValidAsTheMutationsStart) {
  std::vector<Job> jobs;
  for (const auto& [config, cheap] : shipped_configs()) {
    const fs::path dir = m_dir / config.stem();
    write(dir / config.filename(), with_absolute_paths(config));
    jobs.push_back({{"none", config.string(), "", {}}, dir, check_command(config, config.filename().string()), {}});
  }
  run_all(jobs);
  ASSERT_GE(jobs.size(), 12u);
  for (const Job& j : jobs) EXPECT_EQ(j.outcome.code, 0) << j.mutant.what << ": " << j.outcome.err;
}

TEST_F(Fuzz, ConfigMutationsAreRefusedNamingTheKeyOrFile) {
  const KeyDocs docs(kSource / "docs" / "config.md");
  std::vector<Job> jobs;
  for (const auto& [config, cheap] : shipped_configs()) {
    const std::string name = config.filename().string();
    int k = 0;
    for (Mutant& m : mutate_config(with_absolute_paths(config), name, docs, m_rng, m_per_category)) {
      const fs::path dir = m_dir / (config.stem().string() + "_" + std::to_string(k++));
      write(dir / name, m.text);
      m.what = name + ": " + m.what;
      jobs.push_back({m, dir, check_command(config, name), {}});
      if (cheap && k % 3 == 0) {  // the same mutant through `run`, which must refuse it as validate does
        write(dir / "run" / name, m.text);
        jobs.push_back({m, dir / "run", {"run", name, "-o", "out", "--no-figures"}, {}});
      }
    }
  }
  check(jobs, "config mutations");
}

/// The jobs of the image mutants: each written into its own folder with a heart config reading it.
class ImageJobs {
 public:
  explicit ImageJobs(fs::path dir) : m_dir(std::move(dir)) {}

  /// A config of an image source reading `labels`, with `fibres` as its fibres section.
  static std::string heart(const std::string& labels, const std::string& fibres) {
    return "geometry:\n  source: image\n  labels: " + labels +
           "\n  roles: {myocardium: [1], cavities: [{name: lv, labels: [2]}]}\nfibres: " + fibres + "\n";
  }

  /// `m` written as `file` beside `config`; validated, and with `mesh` meshed too.
  void add(Mutant m, const std::string& file, const std::string& config, bool mesh) {
    const fs::path dir = m_dir / ("image_" + std::to_string(jobs.size()));
    write(dir / file, m.text);
    write(dir / "heart.yaml", config);
    m.needles = {file};
    jobs.push_back({m, dir, {"validate", "heart.yaml"}, {}});
    if (!mesh) return;
    fs::create_directories(dir / "mesh");  // its own folder: the two may run at once
    jobs.push_back({m, dir / "mesh", {"mesh", "../heart.yaml", "-o", "out"}, {}});
  }

  std::vector<Job> jobs;

 private:
  fs::path m_dir;
};

/// The biventricular surface of data/: cut short, and its class array renamed.
void add_surface_mutants(ImageJobs& jobs, Rng& rng) {
  const std::string vtp = slurp(kSource / "data" / "biv_meanshape_surface.vtp");
  std::string config = slurp(kSource / "configs" / "biv_surface.yaml");
  const std::string from = "../data/biv_meanshape_surface.vtp";
  config.replace(config.find(from), from.size(), "biv.vtp");
  const std::size_t cut = vtp.size() / 4 + rng.below(vtp.size() / 2);
  jobs.add({"surface truncated", "cut at byte " + std::to_string(cut), vtp.substr(0, cut), {}}, "biv.vtp", config,
           false);
  std::string renamed = vtp;
  const std::string name = "Name=\"class\"";
  for (std::size_t at; (at = renamed.find(name)) != std::string::npos;)
    renamed.replace(at, name.size(), "Name=\"klass\"");
  jobs.add({"surface content", "class array renamed", renamed, {}}, "biv.vtp", config, false);
}

TEST_F(Fuzz, ImageMutationsAreRefusedNamingTheFile) {
  // The corpus: the LV phantom at 3 mm in three formats and its fibre image, the CT mask, the surface.
  std::map<std::string, std::string> corpus;
  for (const std::string ext : {"nii", "nrrd", "mha"}) {
    const Outcome o =
        run_in(m_dir, {CARDIAC_EXE, "phantom", "lv", "-o", "corpus", "--voxel-size", "3", "--format", ext});
    ASSERT_EQ(o.code, 0) << o.err;
    corpus["." + ext] = slurp(m_dir / "corpus" / ("labels." + ext));
  }
  ImageJobs jobs(m_dir);
  for (const auto& [ext, bytes] : corpus)
    for (const Mutant& m : mutate_image(bytes, ext, m_rng))
      jobs.add(m, "labels" + ext, ImageJobs::heart("labels" + ext, "{source: rule}"), jobs.jobs.size() % 2 == 0);
  // The fibre image of a `vectors` config: a third of its truncated or corrupt-header mutants.
  const std::string labels = fs::absolute(m_dir / "corpus" / "labels.nii").string();
  int fibres = 0;
  for (const Mutant& m : mutate_image(slurp(m_dir / "corpus" / "fibre.nii"), ".nii", m_rng))
    if (m.category != "image content" && fibres++ % 3 == 0)
      jobs.add(m, "fibre.nii", ImageJobs::heart(labels, "{source: vectors, fibre: fibre.nii}"), false);
  // The CT mask of the tests (37 million voxels: two mutants).
  const std::vector<Mutant> ct = mutate_image(slurp(kSource / "data" / "ct_heart_mask_0187.nrrd"), ".nrrd", m_rng);
  for (int i = 0; i < 2; ++i)
    jobs.add(ct[m_rng.below(ct.size())], "ct.nrrd", ImageJobs::heart("ct.nrrd", "{source: rule}"), false);
  add_surface_mutants(jobs, m_rng);
  check(jobs.jobs, "image mutations");
}

}  // namespace
