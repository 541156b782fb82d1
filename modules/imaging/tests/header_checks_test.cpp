// Voxel sizes and label values that ITK would read silently wrong (issue 14): NIfTI headers written
// byte by byte (pixdim 0 or NaN, with and without qform/sform; the NIfTI library reads such a pixdim
// as 1 and NaN voxels as 0), and NaN in label images of every format the readers take. Each is an
// error naming the file and what was expected, or the voxel.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "cardio/imaging/image_io.hpp"
#include "test_util.hpp"

namespace cardio::imaging {
namespace {

using test::expect_error;
using test::TempDir;
namespace fs = std::filesystem;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

/// A float32 NIfTI-1 image of 4 x 3 x 2 voxels, written field by field (no library that would
/// repair the header on the way).
struct RawNifti {
  std::array<float, 3> pixdim{1.5f, 1.5f, 1.5f};
  std::int16_t qform_code = 0, sform_code = 0;
  std::array<float, 12> srow{};  ///< sform rows x, y, z: 3 x 4 (matrix | offset)
  std::vector<float> values = std::vector<float>(24, 1.0f);

  void write(const fs::path& file) const {
    std::vector<char> h(352, 0);
    auto put = [&](std::size_t at, auto v) { std::memcpy(h.data() + at, &v, sizeof v); };
    put(0, std::int32_t{348});
    for (std::size_t d = 0; d < 4; ++d) put(40 + 2 * d, std::int16_t(d == 0 ? 3 : d == 1 ? 4 : d == 2 ? 3 : 2));
    put(70, std::int16_t{16});  // DT_FLOAT32
    put(72, std::int16_t{32});
    put(76, 1.0f);  // qfac
    for (std::size_t a = 0; a < 3; ++a) put(80 + 4 * a, pixdim[a]);
    put(108, 352.0f);  // vox_offset
    put(252, qform_code);
    put(254, sform_code);
    for (std::size_t k = 0; k < 12; ++k) put(280 + 4 * k, srow[k]);
    std::memcpy(h.data() + 344, "n+1", 4);
    std::ofstream out(file, std::ios::binary);
    out.write(h.data(), std::streamsize(h.size()));
    out.write(reinterpret_cast<const char*>(values.data()), std::streamsize(values.size() * sizeof(float)));
  }
};

TEST(NiftiSpacing, ZeroOrNaNPixdimWithoutQformOrSformIsAnError) {
  TempDir dir;
  for (float bad : {0.0f, kNaN, -1.0f}) {
    RawNifti n;
    n.pixdim[1] = bad;
    const fs::path file = dir / "labels.nii";
    n.write(file);
    SCOPED_TRACE(bad);
    for (auto read :
         {+[](const fs::path& f) { (void)read_label_image(f); }, +[](const fs::path& f) { (void)read_image_info(f); },
          +[](const fs::path& f) { (void)read_scalar_image(f); }})
      expect_error([&] { read(file); }, {file.string(), "pixdim[1..3] = (1.5, ", "qform_code 0, sform_code 0",
                                         "voxel size is unknown", "expected a positive, finite pixdim"});
  }
}

TEST(NiftiSpacing, QformTakesItsScaleFromPixdimSoZeroIsStillAnError) {
  TempDir dir;
  RawNifti n;
  n.pixdim[2] = 0.0f;
  n.qform_code = 1;
  n.write(dir / "q.nii");
  expect_error([&] { read_label_image(dir / "q.nii"); }, {"q.nii", "pixdim[1..3] = (1.5, 1.5, 0)", "qform_code 1"});
}

// The library scales the sform by pixdim too: a zero pixdim is an error with an sform as well.
TEST(NiftiSpacing, AnSformNeedsItsPixdimToo) {
  TempDir dir;
  RawNifti n;
  n.pixdim = {2.0f, 0.0f, 3.0f};
  n.sform_code = 2;
  n.srow = {2, 0, 0, 10, 0, 2.5f, 0, 20, 0, 0, 3, 30};
  n.write(dir / "s.nii");
  expect_error([&] { read_label_image(dir / "s.nii"); },
               {"s.nii", "(2, 0, 3)", "sform_code 2", "voxel size is unknown"});
  n.pixdim = {2.0f, 2.5f, 3.0f};
  n.write(dir / "s.nii");
  const LabelVolume v = read_label_image(dir / "s.nii");
  EXPECT_NEAR(v.grid.spacing[0], 2.0, 1e-6);
  EXPECT_NEAR(v.grid.spacing[1], 2.5, 1e-6);
  EXPECT_NEAR(v.grid.spacing[2], 3.0, 1e-6);
  EXPECT_NEAR(v.grid.origin[2], 30.0, 1e-6);
}

TEST(NiftiSpacing, PositivePixdimWithoutQformOrSformIsRead) {
  TempDir dir;
  RawNifti n;
  n.pixdim = {0.5f, 1.25f, 2.0f};
  n.write(dir / "plain.nii");
  const LabelVolume v = read_label_image(dir / "plain.nii");
  EXPECT_EQ(v.grid.spacing, Eigen::Vector3d(0.5, 1.25, 2.0));
  EXPECT_EQ(v.values, std::vector<std::int32_t>(24, 1));
}

TEST(NaNLabels, NiftiNamesTheFileAndTheVoxel) {
  TempDir dir;
  RawNifti n;
  n.values[std::size_t(1 + 4 * (2 + 3 * 1))] = kNaN;  // voxel (1, 2, 1)
  n.write(dir / "nan.nii");
  expect_error([&] { read_label_image(dir / "nan.nii"); },
               {(dir / "nan.nii").string(), "NaN", "at voxel (1, 2, 1)", "labels must be integers"});
}

TEST(NaNLabels, EveryFormatNamesTheFileAndTheVoxel) {
  TempDir dir;
  ScalarVolume s;
  s.grid.size = {4, 3, 2};
  s.grid.spacing = Eigen::Vector3d(1, 1, 1);
  s.values.assign(24, 2.0f);
  s.values[std::size_t(s.grid.linear(3, 0, 1))] = kNaN;
  for (const char* name : {"nan.nii.gz", "nan.mha", "nan.nrrd", "nan.vtk"}) {
    SCOPED_TRACE(name);
    write_scalar_image(s, dir / name);
    expect_error([&] { read_label_image(dir / name); }, {(dir / name).string(), "NaN", "at voxel (3, 0, 1)"});
  }
}

// A scalar image keeps its NaN (an angle map's voxels without a fibre, filled by the rule).
TEST(NaNScalars, NiftiReadsThemAsNaNNotZero) {
  TempDir dir;
  RawNifti n;
  n.values[5] = kNaN;
  n.values[6] = std::numeric_limits<float>::infinity();
  n.write(dir / "angles.nii");
  const ScalarVolume v = read_scalar_image(dir / "angles.nii");
  EXPECT_TRUE(std::isnan(v.values[5]));
  EXPECT_TRUE(std::isnan(v.values[6]));
  EXPECT_EQ(v.values[4], 1.0f);
  EXPECT_EQ(v.values[7], 1.0f);
}

// Legacy VTK in ASCII: ITK's reader stops at "nan" and leaves that voxel and every later one 0.
TEST(NaNLabels, AsciiVtkIsAnErrorNotZeros) {
  TempDir dir;
  const fs::path file = dir / "nan_ascii.vtk";
  std::ofstream(file) << "# vtk DataFile Version 3.0\nlabels\nASCII\nDATASET STRUCTURED_POINTS\n"
                      << "DIMENSIONS 3 2 2\nSPACING 1 1 1\nORIGIN 0 0 0\nPOINT_DATA 12\n"
                      << "SCALARS labels float 1\nLOOKUP_TABLE default\n1 1 1 1 nan 1 1 1 1 1 1 1\n";
  expect_error([&] { read_label_image(file); }, {file.string(), "NaN", "(1, 1, 0)"});
}

}  // namespace
}  // namespace cardio::imaging
