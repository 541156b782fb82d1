#pragma once
// Shared helpers of the imaging tests: a self-deleting temp folder and error-message checks.
#include <gtest/gtest.h>
#include <unistd.h>

#include <Eigen/Geometry>
#include <atomic>
#include <filesystem>
#include <initializer_list>
#include <string>

#include "cardio/core/error.hpp"
#include "cardio/imaging/volume.hpp"

namespace cardio::imaging::test {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = fs::temp_directory_path() /
            ("cardio_imaging_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }
  fs::path operator/(const std::string& name) const { return path_ / name; }

 private:
  fs::path path_;
};

/// Runs f, expects a cardio::Error whose message contains every part.
template <class F>
void expect_error(F&& f, std::initializer_list<std::string> parts) {
  try {
    f();
    ADD_FAILURE() << "expected cardio::Error, nothing thrown";
  } catch (const cardio::Error& e) {
    const std::string msg = e.what();
    for (const std::string& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << "'" << p << "' not in: " << msg;
  }
}

/// A proper rotation about a non-axis vector: the oblique direction matrix of the tests.
inline Eigen::Matrix3d oblique_direction() {
  return Eigen::AngleAxisd(0.4, Eigen::Vector3d(1, 2, 3).normalized()).toRotationMatrix();
}

inline void expect_grid_near(const Grid& a, const Grid& b, double tol_mm, double tol_dir) {
  EXPECT_EQ(a.size, b.size);
  EXPECT_LT((a.spacing - b.spacing).cwiseAbs().maxCoeff(), tol_mm)
      << a.spacing.transpose() << " vs " << b.spacing.transpose();
  EXPECT_LT((a.origin - b.origin).cwiseAbs().maxCoeff(), tol_mm)
      << a.origin.transpose() << " vs " << b.origin.transpose();
  EXPECT_LT((a.direction - b.direction).cwiseAbs().maxCoeff(), tol_dir) << a.direction << "\nvs\n" << b.direction;
}

}  // namespace cardio::imaging::test
