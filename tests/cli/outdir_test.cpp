// The output directory under stress (issue 14): a full disk never leaves a partial file under a
// final name, nor a summary.json, and the error names the file; a second run, resume, mesh or
// batch into a directory in use is refused (exit 2, naming the holder's PID) without deleting
// anything; the temp files of a killed run or mesh are cleaned up by the next one.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vtkNew.h>
#include <vtkPolyData.h>
#include <vtkUnstructuredGrid.h>
#include <vtkXMLPolyDataReader.h>
#include <vtkXMLUnstructuredGridReader.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "test_support.hpp"

namespace fs = std::filesystem;

namespace {

using namespace cardio::test_support;

const std::string kConfig = std::string(CARDIO_SOURCE_DIR) + "/configs/lv_phantom.yaml";
// The default LV at 2 mm, one beat, a frame every 2 ms: meshes in about a second.
const std::vector<std::string> kSmall{"--set", "geometry.phantom.voxel_size=2 mm", "--set",       "simulation.beats=1",
                                      "--set", "simulation.output_interval=2 ms",  "--no-figures"};

std::string command(const std::vector<std::string>& args) {
  std::string cmd = shell_quote(CARDIAC_EXE);
  for (const auto& a : args) {
    cmd += ' ';
    cmd += shell_quote(a);
  }
  return cmd;
}

std::vector<std::string> with(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

/// A tmpfs of `bytes` mounted at `dir` while the object lives; `error` says why not if it failed.
class Tmpfs {
 public:
  Tmpfs(const fs::path& dir, long bytes) : m_dir(dir) {
    fs::create_directories(dir);
    const std::string opts = "size=" + std::to_string(bytes);
    if (::mount("tmpfs", dir.c_str(), "tmpfs", 0, opts.c_str()) != 0) error = std::strerror(errno);
  }
  ~Tmpfs() {
    if (error.empty()) ::umount2(m_dir.c_str(), MNT_DETACH);
  }
  std::string error;

 private:
  fs::path m_dir;
};

/// Every promise of a failed or finished run in `out`: no temp files, every VTK file readable,
/// every JSON file parses, summary.json only after success.
void expect_only_complete_files(const fs::path& out, bool succeeded, const std::string& context) {
  if (!fs::exists(out)) return;
  for (const auto& e : fs::recursive_directory_iterator(out)) {
    if (!e.is_regular_file()) continue;
    const std::string name = e.path().filename().string();
    const std::string ext = e.path().extension().string();
    EXPECT_EQ(name.find(".tmp"), std::string::npos) << context << ": temp file left: " << e.path();
    if (ext == ".vtu") {
      vtkNew<vtkXMLUnstructuredGridReader> r;
      r->SetFileName(e.path().c_str());
      r->Update();
      EXPECT_TRUE(r->GetErrorCode() == 0 && r->GetOutput()->GetNumberOfCells() > 0)
          << context << ": unreadable " << e.path();
    } else if (ext == ".vtp") {
      vtkNew<vtkXMLPolyDataReader> r;
      r->SetFileName(e.path().c_str());
      r->Update();
      EXPECT_TRUE(r->GetErrorCode() == 0 && r->GetOutput()->GetNumberOfCells() > 0)
          << context << ": unreadable " << e.path();
    } else if (ext == ".json") {
      EXPECT_TRUE(nlohmann::json::accept(slurp(e.path()))) << context << ": unparsable " << e.path();
    }
  }
  EXPECT_EQ(fs::exists(out / "summary.json"), succeeded) << context;
}

class OutdirTest : public ::testing::Test {
 protected:
  CommandResult cardiac(const std::vector<std::string>& args) const { return run_command(command(args), m_dir); }
  TempDir m_tmp{"cardio_outdir_test_"};
  fs::path m_dir = m_tmp.path();
};

// Sizes from a few pages (the first small files fail) through the mesh files to the frames.
TEST_F(OutdirTest, FullDiskLeavesNoPartialFileAndNoSummary) {
  const std::vector<std::pair<std::string, long>> cases{{"mesh", 4096},  {"mesh", 16384}, {"mesh", 65536},
                                                        {"mesh", 81920}, {"run", 200000}, {"run", 600000}};
  for (const auto& [cmd, bytes] : cases) {
    const fs::path mnt = m_dir / ("disk_" + cmd + "_" + std::to_string(bytes));
    Tmpfs disk(mnt, bytes);
    if (!disk.error.empty()) GTEST_SKIP() << "cannot mount a tmpfs (needs root): " << disk.error;
    const fs::path out = mnt / "out";
    const CommandResult r = cardiac(with({cmd, kConfig, "-o", out.string()}, kSmall));
    const std::string context = cmd + " on " + std::to_string(bytes) + " bytes";
    EXPECT_EQ(r.code, 1) << context << "\n" << r.err;
    EXPECT_EQ(first_line(r.err).find("cardiac: "), 0u) << context << "\n" << r.err;
    EXPECT_NE(first_line(r.err).find("cannot write " + mnt.string()), std::string::npos) << context << "\n" << r.err;
    EXPECT_EQ(r.err.find("ERR|"), std::string::npos) << context << ": VTK noise\n" << r.err;
    expect_only_complete_files(out, false, context);
    std::cerr << context << ": " << first_line(r.err) << "\n";
  }
}

TEST_F(OutdirTest, MeshFitsOnALargerDisk) {
  const fs::path mnt = m_dir / "disk";
  Tmpfs disk(mnt, 8 << 20);
  if (!disk.error.empty()) GTEST_SKIP() << "cannot mount a tmpfs (needs root): " << disk.error;
  const CommandResult r = cardiac(with({"mesh", kConfig, "-o", (mnt / "out").string()}, kSmall));
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* f : {"mesh.vtu", "surfaces.vtp", "cavity_lv.vtp", "mesh_report.json"})
    EXPECT_TRUE(fs::exists(mnt / "out" / f)) << f;
  expect_only_complete_files(mnt / "out", false, "mesh on 8 MB");
}

/// Start `cardiac ARGS` as a real background process (stdout/stderr to `log`); its PID.
pid_t start(const std::vector<std::string>& args, const fs::path& log) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    std::freopen(log.c_str(), "w", stdout);
    ::dup2(::fileno(stdout), 2);
    std::vector<std::string> argv_s{CARDIAC_EXE};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  return pid;
}

bool running(pid_t pid) {
  int status = 0;
  return ::waitpid(pid, &status, WNOHANG) == 0;
}

/// Wait until `file` exists and contains `text` (up to 60 s).
bool wait_for(const fs::path& file, const std::string& text) {
  for (int i = 0; i < 600; ++i) {
    if (slurp(file).find(text) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

TEST_F(OutdirTest, SecondRunResumeMeshAndBatchAreRefusedWhileARunHoldsTheDirectory) {
  const fs::path out = m_dir / "out";
  const pid_t holder =
      start(with({"run", kConfig, "-o", out.string(), "--threads", "1"}, kSmall), m_dir / "holder.log");
  ASSERT_GT(holder, 0);
  const std::string pid_text = "pid " + std::to_string(holder);
  ASSERT_TRUE(wait_for(out / ".cardiac.lock", pid_text)) << slurp(m_dir / "holder.log");
  ASSERT_TRUE(wait_for(out / "invocation.json", "config"));
  std::vector<fs::path> before;
  for (const auto& e : fs::directory_iterator(out))  // the holder's own temp files come and go
    if (e.path().filename().string().find(".tmp") == std::string::npos) before.push_back(e.path());
  EXPECT_GE(before.size(), 3u);  // at least the lock, config.resolved.yaml, invocation.json

  const std::string manifest = std::string(CARDIO_SOURCE_DIR) + "/configs/cohort_example.yaml";
  for (const auto& args :
       {with({"run", kConfig, "-o", out.string()}, kSmall), std::vector<std::string>{"run", "--resume", out.string()},
        with({"mesh", kConfig, "-o", out.string()}, kSmall),
        std::vector<std::string>{"batch", manifest, "-o", out.string()}}) {
    const CommandResult r = cardiac(args);
    EXPECT_EQ(r.code, 2) << args[0] << " " << args[1] << "\n" << r.err;
    EXPECT_HAS(r.err, out.string() + " is in use by another cardiac process (" + pid_text + ": cardiac run ");
  }
  for (const auto& f : before) EXPECT_TRUE(fs::exists(f)) << "the refused commands deleted " << f;
  EXPECT_TRUE(running(holder)) << "the first run stopped:\n" << slurp(m_dir / "holder.log");

  // SIGKILL: the kernel drops the lock; the next run also removes the temp files of the killed one.
  ::kill(holder, SIGKILL);
  ::waitpid(holder, nullptr, 0);
  fs::create_directories(out / "frames");
  for (const fs::path& f : {out / ".mesh.vtu.tmp999999", out / "frames" / ".frame_00003.vtu.tmp999999"})
    std::ofstream(f) << "partial";
  const CommandResult r = cardiac(with({"mesh", kConfig, "-o", out.string()}, kSmall));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_FALSE(fs::exists(out / ".mesh.vtu.tmp999999"));
  EXPECT_FALSE(fs::exists(out / "frames" / ".frame_00003.vtu.tmp999999"));
  expect_only_complete_files(out, false, "mesh after a killed run");
}

/// A temp file of an atomic write anywhere under `dir` (".NAME.tmpPID", ".tmpPID-N-NAME") whose
/// name starts with `prefix`, or "".
fs::path find_temp_file(const fs::path& dir, const std::string& prefix = ".") {
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind(prefix, 0) == 0 && name.size() > 1 && name[0] == '.' && name.find(".tmp") != std::string::npos)
      return it->path();
  }
  return {};
}

// Issue 14: a `cardiac mesh` killed by SIGKILL while it writes leaves its temp file; the next
// process that locks the directory removes it (all of them: see remove_stale_temp_files).
TEST_F(OutdirTest, ARealSigkillDuringMeshLeavesATempFileThatTheNextMeshRemoves) {
  const fs::path out = m_dir / "out";
  fs::path temp;
  pid_t pid = 0;
  // The case of the issue: killed while writing mesh.vtu (5 MB at 0.4 mm, some 100 ms): caught at
  // once in practice; a file renamed between the look and the kill is tried again.
  for (int attempt = 0; attempt < 5 && temp.empty(); ++attempt) {
    fs::remove_all(out);
    pid =
        start({"mesh", kConfig, "-o", out.string(), "--set", "geometry.phantom.voxel_size=0.4 mm"}, m_dir / "kill.log");
    ASSERT_GT(pid, 0);
    while (running(pid)) {
      if (!(temp = find_temp_file(out, ".mesh.vtu.tmp")).empty()) {
        ::kill(pid, SIGKILL);
        break;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
    ::waitpid(pid, nullptr, 0);
    if (!temp.empty() && !fs::exists(temp)) temp.clear();
  }
  ASSERT_FALSE(temp.empty()) << "no temp file seen in 5 runs of cardiac mesh:\n" << slurp(m_dir / "kill.log");
  EXPECT_EQ(temp.filename().string(), ".mesh.vtu.tmp" + std::to_string(pid));
  EXPECT_TRUE(fs::exists(out / ".cardiac.lock"));  // left behind, unlocked
  EXPECT_FALSE(fs::exists(out / "mesh_report.json"));

  const CommandResult r = cardiac(with({"mesh", kConfig, "-o", out.string()}, kSmall));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_FALSE(fs::exists(temp)) << temp;
  EXPECT_EQ(find_temp_file(out), fs::path());
  EXPECT_FALSE(fs::exists(out / ".cardiac.lock"));
  EXPECT_TRUE(fs::exists(out / "mesh_report.json"));
  expect_only_complete_files(out, false, "mesh after a SIGKILL during mesh");
}

}  // namespace
