// Child processes: decoded exit status (code, signal), output streamed by line or captured, a log
// file, a missing program, and the non-blocking start and reap of a local batch.
#include "cardio/core/process.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "cardio/core/error.hpp"

namespace fs = std::filesystem;

namespace {

cardio::ProcessOptions in_path() {
  cardio::ProcessOptions o;
  o.search_path = true;
  return o;
}

/// `sh -c SCRIPT`, looked up in PATH.
cardio::ProcessOutput sh(const std::string& script, cardio::ProcessOptions o = in_path()) {
  return cardio::capture_process({"sh", "-c", script}, o);
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(Process, ExitCodesAreReturned) {
  for (int code : {0, 1, 3, 75, 127, 255}) {
    const cardio::ProcessStatus s = sh("exit " + std::to_string(code)).status;
    EXPECT_EQ(s.exit_code, code);
    EXPECT_EQ(s.signal, 0);
    EXPECT_EQ(s.code(), code);
  }
}

TEST(Process, ASignalDeathIsTheSignalNotAnExitCode) {
  const cardio::ProcessStatus s = sh("kill -KILL $$").status;
  EXPECT_EQ(s.signal, SIGKILL);
  EXPECT_EQ(s.exit_code, 0);
  EXPECT_EQ(s.code(), 128 + SIGKILL);
}

TEST(Process, StdoutAndStderrAreCapturedApart) {
  const cardio::ProcessOutput r = sh("echo out1; echo err1 >&2; printf out2; exit 4");
  EXPECT_EQ(r.status.code(), 4);
  EXPECT_EQ(r.out, "out1\nout2");
  EXPECT_EQ(r.err, "err1\n");
}

TEST(Process, LinesComeWithTheirNewlineAndMergedInOrder) {
  std::vector<std::string> lines;
  const cardio::ProcessStatus s = cardio::run_process(
      {"sh", "-c", "echo a; echo b >&2; echo c; printf d >&2"},
      [&](std::string_view line) { lines.emplace_back(line); }, {}, in_path());
  EXPECT_EQ(s.code(), 0);
  EXPECT_EQ(lines, (std::vector<std::string>{"a\n", "b\n", "c\n", "d"}));
}

TEST(Process, LargeOutputOnBothStreamsDoesNotBlock) {
  // 1 MB on each stream, stderr first: more than a pipe holds, so the reader must take both as they fill.
  const cardio::ProcessOutput r =
      sh("head -c 1048576 /dev/zero | tr '\\0' e >&2; head -c 1048576 /dev/zero | tr '\\0' o");
  EXPECT_EQ(r.status.code(), 0);
  EXPECT_EQ(r.out.size(), 1048576u);
  EXPECT_EQ(r.err.size(), 1048576u);
}

TEST(Process, AMissingProgramExits127WithAMessage) {
  cardio::ProcessOptions o;
  o.error_prefix = "tester: ";
  const cardio::ProcessOutput r = cardio::capture_process({"/nonexistent/program", "x"}, o);
  EXPECT_EQ(r.status.code(), 127);
  EXPECT_EQ(r.err, "tester: cannot execute /nonexistent/program: No such file or directory\n");
  // Without search_path a bare name is a path in the working directory, not a PATH lookup.
  EXPECT_EQ(cardio::capture_process({"sh", "-c", "exit 0"}).status.code(), fs::exists("sh") ? 0 : 127);
  EXPECT_EQ(cardio::capture_process({"cardio-no-such-program"}, in_path()).status.code(), 127);
}

TEST(Process, ASinkThatThrowsLeavesNoChildBehind) {
  const auto throwing = [](std::string_view) { throw std::runtime_error("sink failed"); };
  EXPECT_THROW(cardio::run_process({"sh", "-c", "echo a; sleep 0.2; echo b"}, throwing, {}, in_path()),
               std::runtime_error);
  EXPECT_THROW(cardio::reap_ended_child(), cardio::Error);  // already reaped: no child left
}

TEST(Process, EnvironmentIsSetOrReplacedInTheChildOnly) {
  ::setenv("CARDIO_PROCESS_TEST", "parent", 1);
  cardio::ProcessOptions o = in_path();
  o.env = {{"CARDIO_PROCESS_TEST", "child"}, {"CARDIO_PROCESS_TEST_NEW", "new"}};
  const cardio::ProcessOutput r =
      sh("echo $CARDIO_PROCESS_TEST $CARDIO_PROCESS_TEST_NEW; env | grep -c CARDIO_PROCESS_TEST=", o);
  EXPECT_EQ(r.out, "child new\n1\n");
  EXPECT_STREQ(::getenv("CARDIO_PROCESS_TEST"), "parent");
  ::unsetenv("CARDIO_PROCESS_TEST");
}

class SpawnTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    m_dir = fs::temp_directory_path() / ("cardio_process_test_" + std::to_string(::getpid()) + "_" + info->name());
    fs::remove_all(m_dir);
    fs::create_directories(m_dir);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(m_dir, ec);
  }
  fs::path m_dir;
};

TEST_F(SpawnTest, OutputIsAppendedToTheLogAndStdinIsEmpty) {
  const fs::path log = m_dir / "child.log";
  std::ofstream(log) << "before\n";
  const pid_t pid = cardio::spawn_process({"/bin/sh", "-c", "echo out; echo err >&2; cat; exit 5"}, log);
  const cardio::ProcessStatus s = cardio::wait_process(pid);
  EXPECT_EQ(s.code(), 5);
  EXPECT_EQ(slurp(log), "before\nout\nerr\n");
}

TEST_F(SpawnTest, AnUnopenableLogThrows) {
  EXPECT_THROW(cardio::spawn_process({"/bin/true"}, m_dir / "missing" / "child.log"), cardio::Error);
}

TEST_F(SpawnTest, ChildrenAreReapedAsTheyEndWithoutBlocking) {
  cardio::ProcessOptions o;
  o.own_process_group = true;
  const pid_t slow = cardio::spawn_process({"/bin/sh", "-c", "sleep 0.5; exit 2"}, m_dir / "slow.log", o);
  const pid_t fast = cardio::spawn_process({"/bin/sh", "-c", "kill -TERM $$"}, m_dir / "fast.log", o);
  EXPECT_EQ(::getpgid(slow), slow);  // own group: a terminal's Ctrl-C does not reach it
  std::vector<cardio::EndedChild> ended;
  const auto t0 = std::chrono::steady_clock::now();
  while (ended.size() < 2 && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(20)) {
    if (const auto c = cardio::reap_ended_child())
      ended.push_back(*c);
    else
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(ended.size(), 2u);
  EXPECT_EQ(ended[0].pid, fast);
  EXPECT_EQ(ended[0].status.signal, SIGTERM);
  EXPECT_EQ(ended[1].pid, slow);
  EXPECT_EQ(ended[1].status.code(), 2);
  EXPECT_THROW(cardio::reap_ended_child(), cardio::Error);  // no child left
}

}  // namespace
