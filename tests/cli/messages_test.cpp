// Messages and exit codes that said something else than what was wrong (issue 14, "Misleading
// messages and exit codes"): each case runs `cardiac` as a user would and checks the exit code,
// the message, where it is printed (once, on stderr; and in run.log where there is one), and that
// nothing that looks like a result is left.
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace fs = std::filesystem;

namespace {

using namespace cardio::test_support;

const fs::path kSource = CARDIO_SOURCE_DIR;

// A small valid block experiment (64 elements, quasi-static).
const char* kTiny =
    "name: tiny\n"
    "experiment: {type: elongation, strain: 0.01}\n"
    "block: {voxels: [2, 2, 2], voxel_size: 1 mm}\n"
    "material: {model: isotropic, youngs_modulus: 10 kPa, poisson_ratio: 0.3, density: 1.06 mg/mm^3}\n"
    "solver: {residual_tol: 1e-6}\n";

class MessagesTest : public ::testing::Test {
 protected:
  CommandResult cardiac(const std::vector<std::string>& args) const {
    std::string cmd = "cd " + shell_quote(m_dir.string()) + " && " + shell_quote(CARDIAC_EXE);
    for (const auto& a : args) {
      cmd += ' ';  // (not " " + ...: GCC 12's -Wrestrict misfires on it)
      cmd += shell_quote(a);
    }
    return run_command(cmd, m_dir);
  }
  fs::path write(const std::string& name, const std::string& content) const {
    const fs::path p = m_dir / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << content;
    return p;
  }
  // The ct mask config with the data path made absolute, so that it can be written anywhere.
  std::string ct_mask() const {
    std::string s = slurp(kSource / "configs" / "ct_mask.yaml");
    const std::string from = "../data/";
    s.replace(s.find(from), from.size(), (kSource / "data").string() + "/");
    return s;
  }
  TempDir m_tmp{"cardio_messages_test_"};
  fs::path m_dir = m_tmp.path();
};

/// Exactly one error line on stderr, starting with `prefix`; nothing of it on stdout.
void expect_one_error(const CommandResult& r, const std::string& prefix) {
  EXPECT_EQ(r.err.rfind(prefix, 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(r.out.find("cardiac: "), std::string::npos) << "an error on stdout too:\n" << r.out;
}

TEST_F(MessagesTest, AConfigPathThatIsADirectoryIsNamedAsOne) {
  fs::create_directories(m_dir / "cfgdir");
  for (const char* command : {"validate", "run", "mesh"}) {
    const CommandResult r =
        std::string(command) == "validate" ? cardiac({command, "cfgdir"}) : cardiac({command, "cfgdir", "-o", "out"});
    EXPECT_EQ(r.code, 2) << command;
    expect_one_error(r, "cardiac: invalid config: cfgdir: is a directory; expected a YAML config file");
    EXPECT_EQ(r.err.find("required section"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(m_dir / "out"));
  }
}

TEST_F(MessagesTest, AnEmptyKeyInSetIsBlamedOnTheArgument) {
  write("cfg.yaml", kTiny);
  for (const char* set : {"material.=2", ".material=2", "material..model=2"}) {
    const CommandResult r = cardiac({"validate", "cfg.yaml", "--set", set});
    EXPECT_EQ(r.code, 2) << set;
    expect_one_error(r, std::string("cardiac: invalid config: --set '") + set + "': empty key in");
    EXPECT_EQ(r.err.find("cfg.yaml:1"), std::string::npos) << r.err;
  }
}

TEST_F(MessagesTest, AMapWhereANumberBelongsIsCalledAMap) {
  std::string s = slurp(kSource / "configs" / "lv_phantom.yaml");
  s.replace(s.find("  b_f: 8\n"), 9, "  b_f: {a: 1}\n");
  write("cfg.yaml", s);
  const CommandResult r = cardiac({"validate", "cfg.yaml"});
  EXPECT_EQ(r.code, 2);
  expect_one_error(r, "cardiac: invalid config: cfg.yaml:");
  EXPECT_HAS(r.err, "material.b_f: expected a number such as '1', found a map ({a: 1})");
}

TEST_F(MessagesTest, TheIterationLimitIsNamedWithTheResidualReached) {
  write("cfg.yaml", kTiny);
  const CommandResult r = cardiac({"run", "cfg.yaml", "-o", "out", "--set", "solver.max_iterations=1"});
  EXPECT_EQ(r.code, 1);
  expect_one_error(r,
                   "cardiac: run failed: quasi-static solve did not converge: the iteration limit "
                   "solver.max_iterations = 1 was reached in load step 1 of 1 with the relative residual at ");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.err, m, std::regex(R"(residual at ([0-9.eE+-]+) )"))) << r.err;
  EXPECT_GT(std::stod(m[1]), 1e-6) << "the residual reached, not one never computed";
  EXPECT_FALSE(fs::exists(m_dir / "out" / "summary.json"));
  // In run.log as well, once.
  const std::string log = slurp(m_dir / "out" / "run.log");
  EXPECT_HAS(log, "the iteration limit solver.max_iterations = 1");
  EXPECT_EQ(log.find("iteration limit"), log.rfind("iteration limit")) << log;
  // Newton on a heart config (Land et al.'s beam at 0.5 mm): the limit per increment, and the residual.
  const CommandResult h =
      cardiac({"run", (kSource / "configs" / "benchmarks" / "land2015_problem1.yaml").string(), "-o", "beam", "--set",
               "geometry.box.voxel_size=0.5 mm", "--set", "simulation.max_iterations=1"});
  EXPECT_EQ(h.code, 1);
  expect_one_error(h,
                   "cardiac: run failed: quasi-static solve (newton) did not converge: the iteration limit "
                   "simulation.max_iterations = 1 per increment was reached after simulation.load_step_cuts = ");
  ASSERT_TRUE(std::regex_search(h.err, m, std::regex(R"(residual at ([0-9.eE+-]+) )"))) << h.err;
  EXPECT_GT(std::stod(m[1]), 1e-6);
  EXPECT_FALSE(fs::exists(m_dir / "beam" / "summary.json"));
  EXPECT_HAS(slurp(m_dir / "beam" / "run.log"), "the iteration limit simulation.max_iterations = 1");
}

TEST_F(MessagesTest, AMissingInputFileIsExit2FromEveryCommand) {
  write("heart.yaml", "geometry: {source: image, labels: gone.nrrd, roles: {myocardium: [1]}}\n");
  write("cohort.yaml", "base_config: heart.yaml\ncases: [{name: a}]\n");
  const std::string message = "geometry.labels: gone.nrrd: input file does not exist";
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"validate", "heart.yaml"}, {"run", "heart.yaml", "-o", "out"}, {"mesh", "heart.yaml", "-o", "out"}}) {
    const CommandResult r = cardiac(args);
    EXPECT_EQ(r.code, 2) << args[0];
    expect_one_error(r, "cardiac: invalid input: heart.yaml:1:");
    EXPECT_HAS(r.err, message);
    EXPECT_FALSE(fs::exists(m_dir / "out")) << args[0];
  }
  const CommandResult b = cardiac({"batch", "cohort.yaml", "-o", "out"});
  EXPECT_EQ(b.code, 2);
  EXPECT_HAS(b.err, "case 'a': invalid input: ");
  EXPECT_HAS(b.err, "geometry.labels: " + (m_dir / "gone.nrrd").string() + ": input file does not exist");
  EXPECT_FALSE(fs::exists(m_dir / "out"));
}

// `validate` reads what `mesh` would: the labels of every role, a surface's classes, the images.
TEST_F(MessagesTest, ValidateFindsWhatMeshWouldReject) {
  write("ct.yaml", ct_mask());
  write("biv.yaml", std::regex_replace(slurp(kSource / "configs" / "biv_surface.yaml"), std::regex(R"(\.\./data/)"),
                                       (kSource / "data").string() + "/"));
  write("fibre.nii", "not an image\n");
  struct Case {
    std::string config, set, needle;
    std::string where;  // the surface's checks are located at its file key
  };
  const std::vector<Case> cases{
      {"ct.yaml", "geometry.roles.myocardium=[7]",
       "geometry.roles.myocardium: no voxel of " + (kSource / "data" / "ct_heart_mask_0187.nrrd").string() +
           " has a myocardium label (7); labels present (voxel counts): 0 (",
       ""},
      {"ct.yaml", "geometry.roles.cavities=[{name: lv, labels: [5]}]",
       "geometry.roles.cavities[0].labels: no voxel of " + (kSource / "data" / "ct_heart_mask_0187.nrrd").string() +
           " has a label of cavity 'lv' (5)",
       ""},
      {"biv.yaml", "geometry.surface.endocardia[1].class=9", "class 4 of array 'class' is none of the configured",
       "biv.yaml:12:11: geometry.surface.file: surface file "},
      {"biv.yaml", "geometry.surface.class_array=klass", "has no class array 'klass'",
       "biv.yaml:12:11: geometry.surface.file: surface file "},
      {"ct.yaml", "fibres={source: vectors, fibre: fibre.nii}", "fibres.fibre: ", ""},
  };
  for (const Case& c : cases) {
    for (const char* command : {"validate", "mesh"}) {
      std::vector<std::string> args{command, c.config, "--set", c.set};
      if (std::string(command) == "mesh") args.insert(args.end(), {"-o", "out"});
      const CommandResult r = cardiac(args);
      EXPECT_EQ(r.code, 2) << command << " " << c.set << ": " << r.err;
      expect_one_error(r, "cardiac: invalid input: " + (c.where.empty() ? "--set '" + c.set + "': " : c.where));
      EXPECT_HAS(r.err, c.needle);
      EXPECT_FALSE(fs::exists(m_dir / "out")) << command << " " << c.set;
    }
  }
  const CommandResult r = cardiac({"validate", "ct.yaml"});
  EXPECT_EQ(r.code, 0) << r.err;
}

// The output directory on a read-only mount (root: a real read-only tmpfs), or one without write
// permission (other users).
TEST_F(MessagesTest, AnOutputDirectoryThatIsNotWritableIsNamed) {
  const fs::path ro = m_dir / "ro";
  fs::create_directories(ro / "out");
  std::ofstream(ro / "out" / "summary.json") << "{}";  // a stale result, to be removed first
  bool mounted = false;
  if (::geteuid() == 0) {
    ASSERT_EQ(::mount(ro.c_str(), ro.c_str(), nullptr, MS_BIND, nullptr), 0) << std::strerror(errno);
    mounted = ::mount(nullptr, ro.c_str(), nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY, nullptr) == 0;
    if (!mounted) {
      // Root ignores permission bits, so without a read-only mount there is nothing to test.
      const int remount_errno = errno;
      ::umount2(ro.c_str(), MNT_DETACH);
      GTEST_SKIP() << "root here may not remount read-only (" << std::strerror(remount_errno)
                   << "), and permission bits do not stop root";
    }
  } else {
    ::chmod((ro / "out").c_str(), 0555);
  }
  write("cfg.yaml", kTiny);
  for (const fs::path& config : {m_dir / "cfg.yaml", kSource / "configs" / "lv_phantom.yaml"}) {
    const CommandResult r = cardiac({"run", config, "-o", "ro/out"});
    EXPECT_EQ(r.code, 2) << r.err;
    expect_one_error(r, "cardiac: output directory ro/out is not writable: ");
  }
  const CommandResult b =
      cardiac({"batch", (kSource / "configs" / "cohort_example.yaml").string(), "-o", "ro/out", "--executor", "slurm"});
  EXPECT_EQ(b.code, 2) << b.err;
  EXPECT_HAS(b.err, "cardiac batch: output directory ");
  EXPECT_HAS(b.err, "ro/out is not writable: ");
  if (mounted) ::umount2(ro.c_str(), MNT_DETACH);
  ::chmod((ro / "out").c_str(), 0755);
}

}  // namespace
