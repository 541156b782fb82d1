// DirectoryLock: one holder at a time, refusals name the holder's PID, freed by exit and SIGKILL.
#include "cardio/core/dir_lock.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

namespace fs = std::filesystem;

namespace {

class DirLockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    m_dir = fs::temp_directory_path() / ("cardio_lock_test_" + std::to_string(::getpid()) + "_" + info->name());
    fs::remove_all(m_dir);
    fs::create_directories(m_dir);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(m_dir, ec);
  }
  fs::path m_dir;
};

std::string busy_message(const fs::path& dir) {
  try {
    cardio::DirectoryLock again(dir, "second");
  } catch (const cardio::DirectoryBusy& e) {
    return e.what();
  }
  return {};
}

TEST_F(DirLockTest, SecondHolderIsRefusedWithThePid) {
  cardio::DirectoryLock lock(m_dir, "cardiac run a.yaml");
  const std::string e = busy_message(m_dir);  // another open file description: flock conflicts
  EXPECT_NE(e.find(m_dir.string() + " is in use by another cardiac process (pid " + std::to_string(::getpid()) +
                   ": cardiac run a.yaml"),
            std::string::npos)
      << e;
  lock.release();
  EXPECT_NO_THROW(cardio::DirectoryLock(m_dir, "third"));
}

TEST_F(DirLockTest, MovedLockStaysHeld) {
  cardio::DirectoryLock a(m_dir, "a");
  cardio::DirectoryLock b = std::move(a);
  EXPECT_FALSE(busy_message(m_dir).empty());
}

TEST_F(DirLockTest, MissingDirectoryIsAnError) {
  EXPECT_THROW(cardio::DirectoryLock(m_dir / "missing", "x"), cardio::Error);
}

TEST_F(DirLockTest, LockOfAKilledProcessIsFree) {
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // a real second process: takes the lock, reports, then waits to be killed
    cardio::DirectoryLock lock(m_dir, "child");
    (void)!::write(ready[1], "x", 1);
    for (;;) ::pause();
  }
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  const std::string e = busy_message(m_dir);
  EXPECT_NE(e.find("pid " + std::to_string(child) + ": child"), std::string::npos) << e;
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_NO_THROW(cardio::DirectoryLock(m_dir, "after kill"));
  ::close(ready[0]);
  ::close(ready[1]);
}

}  // namespace
