// Outputs on a full disk (issue 14): every writer either leaves a complete file under its final
// name or none (no temp files either), and throws a cardio::Error whose first words name the file;
// VTK prints nothing of its own. Fault injection: RLIMIT_FSIZE makes writes beyond N bytes fail
// (EFBIG) exactly like a full disk, at any size, without root.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>
#include <vtkNew.h>
#include <vtkPolyData.h>
#include <vtkUnstructuredGrid.h>
#include <vtkXMLPolyDataReader.h>
#include <vtkXMLUnstructuredGridReader.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>

#include "cardio/core/error.hpp"
#include "cardio/io/json.hpp"
#include "cardio/io/series.hpp"
#include "cardio/io/vtu.hpp"
#include "cardio/mechanics/block.hpp"

namespace fs = std::filesystem;
namespace mech = cardio::mechanics;

namespace {

class FullDiskTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    m_dir = fs::temp_directory_path() / ("cardio_full_disk_" + std::to_string(::getpid()) + "_" + info->name());
    fs::remove_all(m_dir);
    fs::create_directories(m_dir);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(m_dir, ec);
  }
  fs::path m_dir;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// Run `write` with files limited to `limit` bytes and stderr captured; the error message
/// ("" if it succeeded) and what was printed on stderr.
struct Outcome {
  std::string error, stderr_text;
};
Outcome with_file_size_limit(rlim_t limit, const fs::path& capture, const std::function<void()>& write) {
  Outcome o;
  rlimit old{};
  ::getrlimit(RLIMIT_FSIZE, &old);
  auto* old_handler = ::signal(SIGXFSZ, SIG_IGN);  // the write fails with EFBIG instead of killing us
  std::fflush(stderr);
  const int saved = ::dup(2);
  FILE* cap = std::fopen(capture.c_str(), "w");
  ::dup2(::fileno(cap), 2);
  rlimit lim = old;
  lim.rlim_cur = limit;
  ::setrlimit(RLIMIT_FSIZE, &lim);
  try {
    write();
  } catch (const cardio::Error& e) {
    o.error = e.what();
  }
  ::setrlimit(RLIMIT_FSIZE, &old);
  std::fflush(stderr);
  ::dup2(saved, 2);
  ::close(saved);
  std::fclose(cap);
  ::signal(SIGXFSZ, old_handler);
  o.stderr_text = slurp(capture);
  return o;
}

mech::HexMesh block(int n) {
  mech::FibreField f;
  return mech::make_block({n, n, n, 1.0, Eigen::Vector3d::Zero()}, f);
}

bool vtu_readable(const fs::path& file, vtkIdType cells) {
  vtkNew<vtkXMLUnstructuredGridReader> r;
  r->SetFileName(file.c_str());
  r->Update();
  return r->GetErrorCode() == 0 && r->GetOutput()->GetNumberOfCells() == cells;
}

// The files of the directory other than the capture file.
std::vector<std::string> entries(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename() != "stderr.txt") out.push_back(e.path().filename().string());
  return out;
}

TEST_F(FullDiskTest, VtuIsCompleteOrAbsentAtEverySize) {
  const mech::HexMesh mesh = block(12);
  const Eigen::Matrix3Xd v = Eigen::Matrix3Xd::Random(3, mesh.n_nodes());  // random: VTK's zlib cannot shrink it
  const fs::path file = m_dir / "frame_00002.vtu";
  int failed = 0;
  for (const auto storage : {cardio::io::Storage::full, cardio::io::Storage::frame})
    for (rlim_t limit : {rlim_t(0), rlim_t(100), rlim_t(4096), rlim_t(30000), rlim_t(90000), rlim_t(10000000)}) {
      fs::remove(file);
      const Outcome o = with_file_size_limit(limit, m_dir / "stderr.txt", [&] {
        cardio::io::write_vtu(file, mesh, mesh.rest + v, {{"velocity", v}}, {}, storage);
      });
      if (o.error.empty()) {
        EXPECT_TRUE(vtu_readable(file, mesh.n_elements())) << "limit " << limit;
      } else {
        ++failed;
        EXPECT_EQ(o.error.rfind("cannot write " + file.string() + ": ", 0), 0u) << o.error;
        EXPECT_FALSE(fs::exists(file)) << "partial file under the final name at limit " << limit;
      }
      EXPECT_EQ(o.stderr_text, "") << "VTK printed at limit " << limit;
      const auto left = entries(m_dir);
      EXPECT_LE(left.size(), 1u) << "temp file left at limit " << limit << ": " << left.back();
    }
  EXPECT_EQ(failed, 10);
}

TEST_F(FullDiskTest, VtpFailsNamingTheFile) {
  Eigen::Matrix3Xd pts = Eigen::Matrix3Xd::Random(3, 4000);
  std::vector<std::vector<std::int64_t>> tris;
  for (std::int64_t i = 0; i + 2 < 4000; ++i) tris.push_back({i, i + 1, i + 2});
  const fs::path file = m_dir / "cavity_lv.vtp";
  cardio::io::write_vtp(file, pts, tris, {});  // an old complete file must survive a failed rewrite
  const std::string old = slurp(file);
  const Outcome o =
      with_file_size_limit(20000, m_dir / "stderr.txt", [&] { cardio::io::write_vtp(file, pts, tris, {}); });
  EXPECT_EQ(o.error.rfind("cannot write " + file.string() + ": ", 0), 0u) << o.error;
  EXPECT_EQ(o.stderr_text, "");
  EXPECT_EQ(slurp(file), old);
  EXPECT_EQ(entries(m_dir), std::vector<std::string>{"cavity_lv.vtp"});
}

TEST_F(FullDiskTest, CsvJsonAndPvdFailNamingTheFile) {
  cardio::io::CsvTable table{{"time_ms", "volume_mL"}, {}};
  for (int i = 0; i < 2000; ++i) table.add_row({std::to_string(i), "123.456"});
  const nlohmann::json j = {{"values", std::vector<double>(2000, 1.25)}};
  std::vector<cardio::io::PvdFrame> frames;
  for (int i = 0; i < 500; ++i) frames.push_back({double(i), "frames/frame_" + std::to_string(i) + ".vtu"});
  const std::vector<std::pair<std::string, std::function<void(const fs::path&)>>> writers{
      {"timeseries.csv", [&](const fs::path& f) { cardio::io::write_csv(f, table); }},
      {"summary.json", [&](const fs::path& f) { cardio::io::write_json(f, j); }},
      {"series.pvd", [&](const fs::path& f) { cardio::io::write_pvd(f, frames); }}};
  for (const auto& [name, write] : writers) {
    const fs::path file = m_dir / name;
    const Outcome o = with_file_size_limit(5000, m_dir / "stderr.txt", [&] { write(file); });
    EXPECT_EQ(o.error.rfind("cannot write " + file.string() + ": ", 0), 0u) << o.error;
    EXPECT_FALSE(fs::exists(file)) << name;
    EXPECT_TRUE(entries(m_dir).empty()) << name;
  }
}

}  // namespace
