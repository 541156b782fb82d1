// write_file_atomic / write_via_temp: the target appears complete or not at all.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cardio/core/atomic_file.hpp"
#include "cardio/core/error.hpp"

namespace fs = std::filesystem;
using namespace std::string_literals;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> entries(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  return out;
}

// A fresh, empty directory per test, removed afterwards.
class AtomicFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    m_dir = fs::temp_directory_path() /
            ("cardio_atomic_test_" + std::to_string(::getpid()) + "_" + std::string(info->name()));
    fs::remove_all(m_dir);
    fs::create_directories(m_dir);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(m_dir, ec);
  }
  fs::path m_dir;
};

TEST_F(AtomicFileTest, WritesContentAndLeavesNoTempFile) {
  const fs::path f = m_dir / "out.txt";
  const std::string content = "line 1\nline 2\n\0binary\xff"s;
  cardio::write_file_atomic(f, content);
  ASSERT_TRUE(fs::exists(f));
  EXPECT_EQ(slurp(f), content);
  EXPECT_EQ(entries(m_dir), std::vector<std::string>{"out.txt"});
}

TEST_F(AtomicFileTest, EmptyContent) {
  const fs::path f = m_dir / "empty.json";
  cardio::write_file_atomic(f, "");
  ASSERT_TRUE(fs::exists(f));
  EXPECT_EQ(fs::file_size(f), 0u);
  EXPECT_EQ(entries(m_dir).size(), 1u);
}

TEST_F(AtomicFileTest, ReplacesExistingFile) {
  const fs::path f = m_dir / "out.txt";
  cardio::write_file_atomic(f, std::string(10000, 'a'));
  cardio::write_file_atomic(f, "short");
  EXPECT_EQ(slurp(f), "short");
  EXPECT_EQ(entries(m_dir), std::vector<std::string>{"out.txt"});
}

TEST_F(AtomicFileTest, MissingDirectoryThrowsCardioError) {
  const fs::path f = m_dir / "no" / "such" / "dir" / "out.txt";
  try {
    cardio::write_file_atomic(f, "x");
    FAIL() << "expected cardio::Error";
  } catch (const cardio::Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("cannot write " + f.string() + ": ", 0), 0u) << e.what();
  }
  EXPECT_FALSE(fs::exists(f));
  EXPECT_TRUE(entries(m_dir).empty());
}

TEST_F(AtomicFileTest, WriteViaTempRenamesTheWritersFile) {
  const fs::path f = m_dir / "mesh.vtu";
  fs::path seen;
  cardio::write_via_temp(f, [&](const fs::path& tmp) {
    seen = tmp;
    EXPECT_NE(tmp, f);
    EXPECT_EQ(tmp.parent_path(), f.parent_path()) << "temp file must be in the target directory (same filesystem)";
    EXPECT_FALSE(fs::exists(f)) << "target must not exist while being written";
    std::ofstream(tmp) << "payload";
  });
  EXPECT_FALSE(fs::exists(seen));
  EXPECT_EQ(slurp(f), "payload");
  EXPECT_EQ(entries(m_dir), std::vector<std::string>{"mesh.vtu"});
}

TEST_F(AtomicFileTest, WriteViaTempRemovesTempAndLeavesNoTargetWhenWriterThrows) {
  const fs::path f = m_dir / "mesh.vtu";
  fs::path seen;
  EXPECT_THROW(cardio::write_via_temp(f,
                                      [&](const fs::path& tmp) {
                                        seen = tmp;
                                        std::ofstream(tmp) << "partial";
                                        ASSERT_TRUE(fs::exists(tmp));
                                        throw std::runtime_error("writer failed");
                                      }),
               std::runtime_error);
  EXPECT_FALSE(seen.empty());
  EXPECT_FALSE(fs::exists(seen));
  EXPECT_FALSE(fs::exists(f));
  EXPECT_TRUE(entries(m_dir).empty());
}

TEST_F(AtomicFileTest, WriteViaTempKeepsOldTargetWhenWriterThrows) {
  const fs::path f = m_dir / "summary.json";
  cardio::write_file_atomic(f, "old");
  EXPECT_THROW(cardio::write_via_temp(f,
                                      [&](const fs::path& tmp) {
                                        std::ofstream(tmp) << "new but incomplete";
                                        throw cardio::Error("boom");
                                      }),
               cardio::Error);
  EXPECT_EQ(slurp(f), "old");
  EXPECT_EQ(entries(m_dir), std::vector<std::string>{"summary.json"});
}

TEST_F(AtomicFileTest, WriteViaTempWriterThatCreatesNothingFailsCleanly) {
  // A writer that "succeeds" without producing the temp file: the rename fails with an error.
  const fs::path f = m_dir / "out.txt";
  EXPECT_THROW(cardio::write_via_temp(f, [](const fs::path&) {}), cardio::Error);
  EXPECT_FALSE(fs::exists(f));
  EXPECT_TRUE(entries(m_dir).empty());
}

TEST_F(AtomicFileTest, TempNamesAreRecognised) {
  for (const char* name : {".mesh.vtu.tmp123", ".summary.json.tmp7", ".tmp42-0-labels.nii.gz"})
    EXPECT_TRUE(cardio::is_temp_file_name(name)) << name;
  for (const char* name : {"mesh.vtu", ".mesh.vtu.tmp", ".mesh.vtu.tmpx1", "a.tmp12", ".cardiac.lock", ".tmp42-labels",
                           ".tmp42-0-", ".tmp"})
    EXPECT_FALSE(cardio::is_temp_file_name(name)) << name;
}

TEST_F(AtomicFileTest, StaleTempFilesAreRemovedOthersKept) {
  for (const char* name : {".mesh.vtu.tmp99999", ".tmp99999-3-fibre.nii.gz", "mesh.vtu", ".cardiac.lock"})
    std::ofstream(m_dir / name) << "x";
  fs::create_directories(m_dir / ".frames.tmp1");  // directories are never touched
  EXPECT_EQ(cardio::remove_stale_temp_files(m_dir), 2);
  auto left = entries(m_dir);
  std::sort(left.begin(), left.end());
  EXPECT_EQ(left, (std::vector<std::string>{".cardiac.lock", ".frames.tmp1", "mesh.vtu"}));
}

}  // namespace
