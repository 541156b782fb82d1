// Image IO: round trips with an oblique direction, vector axes, DICOM series, legacy VTK, the real
// CT mask (checked against its own header text), and the user-facing errors.
#include "cardio/imaging/image_io.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <map>
#include <numbers>
#include <random>
#include <sstream>

#include "itk_writers.hpp"
#include "test_util.hpp"

namespace cardio::imaging {
namespace {

using test::expect_error;
using test::expect_grid_near;
using test::oblique_direction;
using test::TempDir;
namespace fs = std::filesystem;

/// Anisotropic spacing and an origin exactly representable in float32 (NIfTI stores float32).
Grid oblique_grid() {
  Grid g;
  g.size = {7, 5, 4};
  g.spacing = Eigen::Vector3d(0.5, 1.25, 2.0);
  g.origin = Eigen::Vector3d(12.5, -30.25, 7.0);
  g.direction = oblique_direction();
  return g;
}

LabelVolume pattern_labels(const Grid& g, std::int32_t scale) {
  LabelVolume v;
  v.grid = g;
  v.values.resize(static_cast<std::size_t>(g.n_voxels()));
  for (std::size_t n = 0; n < v.values.size(); ++n) v.values[n] = static_cast<std::int32_t>((n * 7) % 9) * scale;
  return v;
}

class RoundTrip : public ::testing::TestWithParam<std::string> {};

TEST_P(RoundTrip, LabelsScalarsVectorsKeepGridAndValues) {
  TempDir dir;
  const std::string ext = GetParam();
  const Grid g = oblique_grid();
  // uint8, int16 (negative) and int32 storage ranges.
  for (std::int32_t scale : {1, -1000, 100000}) {
    const LabelVolume labels = pattern_labels(g, scale);
    const fs::path file = dir / ("labels" + ext);
    write_label_image(labels, file);
    const LabelVolume back = read_label_image(file);
    expect_grid_near(back.grid, g, 1e-6, 1e-6);
    EXPECT_EQ(back.values, labels.values) << "scale " << scale;
  }
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-100.f, 100.f);
  ScalarVolume scalars;
  scalars.grid = g;
  for (std::int64_t n = 0; n < g.n_voxels(); ++n) scalars.values.push_back(u(rng));
  write_scalar_image(scalars, dir / ("scalars" + ext));
  const ScalarVolume sback = read_scalar_image(dir / ("scalars" + ext));
  expect_grid_near(sback.grid, g, 1e-6, 1e-6);
  EXPECT_EQ(sback.values, scalars.values);

  VectorVolume vectors;
  vectors.grid = g;
  for (std::int64_t n = 0; n < g.n_voxels(); ++n) vectors.values.emplace_back(u(rng), u(rng), u(rng));
  write_vector_image(vectors, dir / ("vectors" + ext));
  const VectorVolume vback = read_vector_image(dir / ("vectors" + ext), VectorAxes::physical);
  expect_grid_near(vback.grid, g, 1e-6, 1e-6);
  ASSERT_EQ(vback.values.size(), vectors.values.size());
  for (std::size_t n = 0; n < vectors.values.size(); ++n) EXPECT_EQ(vback.values[n], vectors.values[n]) << n;

  const ImageInfo info = read_image_info(dir / ("vectors" + ext));
  EXPECT_EQ(info.dimension, 3u);
  EXPECT_EQ(info.components, 3u);
  EXPECT_EQ(info.component_type, "float");
  EXPECT_EQ(info.pixel_bytes(), static_cast<std::uint64_t>(g.n_voxels()) * 12);
  expect_grid_near(info.grid, g, 1e-6, 1e-6);
  // The temporary file of the atomic write is gone.
  for (const auto& entry : fs::directory_iterator(dir.path()))
    EXPECT_EQ(entry.path().filename().string().rfind(".tmp", 0), std::string::npos) << entry.path();
}

INSTANTIATE_TEST_SUITE_P(Formats, RoundTrip, ::testing::Values(".nii.gz", ".mha", ".nrrd"), [](const auto& info) {
  std::string s = info.param.substr(1);
  for (char& c : s)
    if (c == '.') c = '_';
  return s;
});

TEST(VectorImage, IndexAxesAreRotatedByTheDirectionMatrix) {
  TempDir dir;
  const Grid g = oblique_grid();
  VectorVolume v;
  v.grid = g;
  v.values.assign(static_cast<std::size_t>(g.n_voxels()), Eigen::Vector3f(1, 0, 0));
  v.values[5] = Eigen::Vector3f(0, 2, 0);
  v.values[9] = Eigen::Vector3f(0, 0, -3);
  write_vector_image(v, dir / "v.mha");
  const VectorVolume phys = read_vector_image(dir / "v.mha", VectorAxes::physical);
  const VectorVolume idx = read_vector_image(dir / "v.mha", VectorAxes::index);
  const Eigen::Matrix3d d = g.direction;
  EXPECT_EQ(phys.values[0], Eigen::Vector3f(1, 0, 0));
  EXPECT_LT((idx.values[0].cast<double>() - d.col(0)).norm(), 1e-6);
  EXPECT_LT((idx.values[5].cast<double>() - 2 * d.col(1)).norm(), 1e-6);
  EXPECT_LT((idx.values[9].cast<double>() + 3 * d.col(2)).norm(), 1e-6);
}

TEST(VectorImage, FourDimensionalImageWithComponentAxis) {
  TempDir dir;
  test::write_4d_nrrd(dir / "v4.nrrd", {3, 2, 2});
  const VectorVolume v = read_vector_image(dir / "v4.nrrd", VectorAxes::physical);
  ASSERT_EQ(v.values.size(), 12u);
  EXPECT_EQ(v.grid.spacing, Eigen::Vector3d::Constant(1.5));
  for (std::size_t n = 0; n < 12; ++n) EXPECT_EQ(v.values[n], Eigen::Vector3f(float(n), 100.f + n, 200.f + n));
}

TEST(DicomSeries, LabelsAndGeometrySurviveAWriteByItk) {
  TempDir dir;
  Grid g;
  g.size = {6, 5, 4};
  g.spacing = Eigen::Vector3d(0.8, 0.9, 1.5);
  g.origin = Eigen::Vector3d(-20.5, 10.25, 30.0);
  g.direction = oblique_direction();
  std::vector<std::int32_t> expected;
  std::vector<std::int16_t> values;
  for (std::int64_t n = 0; n < g.n_voxels(); ++n) {
    const auto value = static_cast<std::int16_t>(n % 11 == 0 ? 1000 : (n * 5) % 7);
    values.push_back(value);
    expected.push_back(value);
  }
  const fs::path series = dir / "series";
  fs::create_directories(series);
  std::array<double, 9> d{};
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) d[static_cast<std::size_t>(3 * r + c)] = g.direction(r, c);
  test::write_dicom_series(series, {6, 5, 4}, {g.spacing[0], g.spacing[1], g.spacing[2]},
                           {g.origin[0], g.origin[1], g.origin[2]}, d, values);

  const LabelVolume labels = read_label_image(series);
  expect_grid_near(labels.grid, g, 1e-4, 1e-5);  // DICOM decimal strings: 16 characters
  EXPECT_EQ(labels.values, expected);
  const ImageInfo info = read_image_info(series);
  EXPECT_EQ(info.grid.size, g.size);
  EXPECT_EQ(info.components, 1u);

  const fs::path empty = dir / "empty";
  fs::create_directories(empty);
  expect_error([&] { read_label_image(empty); }, {empty.string(), "no DICOM series"});
}

TEST(LegacyVtk, HandWrittenStructuredPointsAreRead) {
  TempDir dir;
  const fs::path file = dir / "labels.vtk";
  std::ofstream(file) << "# vtk DataFile Version 3.0\nlabels\nASCII\nDATASET STRUCTURED_POINTS\n"
                      << "DIMENSIONS 3 2 2\nSPACING 0.5 1.5 2\nORIGIN 10 -20 5\nPOINT_DATA 12\n"
                      << "SCALARS labels int 1\nLOOKUP_TABLE default\n0 1 2 3 4 5 6 7 8 9 10 11\n";
  const LabelVolume v = read_label_image(file);
  EXPECT_EQ(v.grid.size, (Index3{3, 2, 2}));
  EXPECT_EQ(v.grid.spacing, Eigen::Vector3d(0.5, 1.5, 2));
  EXPECT_EQ(v.grid.origin, Eigen::Vector3d(10, -20, 5));
  EXPECT_TRUE(v.grid.direction.isIdentity());
  for (std::int32_t n = 0; n < 12; ++n) EXPECT_EQ(v.values[static_cast<std::size_t>(n)], n);

  // Our own .vtk output (axis-aligned only: legacy VTK has no direction matrix).
  LabelVolume w = pattern_labels(v.grid, 3);
  write_label_image(w, dir / "w.vtk");
  const LabelVolume wb = read_label_image(dir / "w.vtk");
  expect_grid_near(wb.grid, w.grid, 1e-9, 1e-12);
  EXPECT_EQ(wb.values, w.values);
  w.grid.direction = oblique_direction();
  expect_error([&] { write_label_image(w, dir / "oblique.vtk"); }, {"oblique.vtk", "direction"});
}

/// Fields of a NRRD header (text up to the first blank line).
std::map<std::string, std::string> nrrd_header(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::map<std::string, std::string> fields;
  std::string line;
  while (std::getline(in, line) && !line.empty()) {
    const auto colon = line.find(": ");
    if (line[0] != '#' && colon != std::string::npos) fields[line.substr(0, colon)] = line.substr(colon + 2);
  }
  return fields;
}

/// "(a,b,c) (d,e,f) ..." -> vectors.
std::vector<Eigen::Vector3d> nrrd_vectors(std::string text) {
  for (char& c : text)
    if (c == '(' || c == ')' || c == ',') c = ' ';
  std::istringstream is(text);
  std::vector<Eigen::Vector3d> out;
  Eigen::Vector3d v;
  while (is >> v[0] >> v[1] >> v[2]) out.push_back(v);
  return out;
}

TEST(RealCtMask, GeometryMatchesHeaderAndHeartVolumeIs658mL) {
  // LIDC-IDRI case via AIM-Harvard/DeepCAC (CC BY 3.0); see data/README.md.
  const fs::path file = fs::path(CARDIO_SOURCE_DIR) / "data" / "ct_heart_mask_0187.nrrd";
  ASSERT_TRUE(fs::exists(file)) << file;
  const auto header = nrrd_header(file);
  ASSERT_EQ(header.at("sizes"), "512 512 143");
  ASSERT_EQ(header.at("space"), "left-posterior-superior");
  const auto dirs = nrrd_vectors(header.at("space directions"));
  const auto origin = nrrd_vectors(header.at("space origin"));
  ASSERT_EQ(dirs.size(), 3u);
  ASSERT_EQ(origin.size(), 1u);

  const ImageInfo info = read_image_info(file);
  EXPECT_EQ(info.component_type, "short");
  const LabelVolume mask = read_label_image(file);
  EXPECT_EQ(mask.grid.size, (Index3{512, 512, 143}));
  for (int a = 0; a < 3; ++a) {
    EXPECT_NEAR(mask.grid.spacing[a], dirs[static_cast<std::size_t>(a)].norm(), 1e-12);
    EXPECT_LT((mask.grid.direction.col(a) - dirs[static_cast<std::size_t>(a)].normalized()).norm(), 1e-12);
  }
  EXPECT_LT((mask.grid.origin - origin[0]).norm(), 1e-9);
  std::int64_t heart = 0, other = 0;
  for (std::int32_t l : mask.values) {
    heart += l == 1;
    other += l == 2;
  }
  const double ml = double(heart) * mask.grid.voxel_volume() / 1000.0;
  EXPECT_NEAR(ml, 658.0, 6.58) << heart << " voxels";
  EXPECT_GT(other, 0);
}

TEST(BadInput, MissingFile) {
  TempDir dir;
  const fs::path file = dir / "missing.nii.gz";
  expect_error([&] { read_label_image(file); }, {file.string(), "no such file"});
  expect_error([&] { read_vector_image(file, VectorAxes::physical); }, {file.string(), "no such file"});
  expect_error([&] { read_image_info(file); }, {file.string(), "no such file"});
}

TEST(BadInput, TruncatedFiles) {
  TempDir dir;
  Grid g = oblique_grid();
  g.size = {40, 40, 40};  // pixel data far larger than the 352-byte NIfTI header
  LabelVolume v;
  v.grid = g;
  v.values.resize(static_cast<std::size_t>(g.n_voxels()));
  for (std::size_t n = 0; n < v.values.size(); ++n) v.values[n] = static_cast<std::int32_t>(n % 251);
  for (const char* name : {"cut.nii", "cut.nii.gz", "cut.mha", "cut.nrrd", "cut.vtk"}) {
    v.grid.direction = std::string(name) == "cut.vtk" ? Eigen::Matrix3d::Identity() : oblique_direction();
    SCOPED_TRACE(name);
    const fs::path file = dir / name;
    write_label_image(v, file);
    fs::resize_file(file, fs::file_size(file) / 2);
    expect_error([&] { read_label_image(file); }, {file.string(), "cannot read"});
    try {
      read_label_image(file);
    } catch (const cardio::Error& e) {
      const std::string msg = e.what();
      EXPECT_TRUE(msg.find("truncated") != std::string::npos || msg.find("header") != std::string::npos) << msg;
    }
  }
}

// A compressed MetaImage whose DimSize promises more voxels than its data inflate to: ITK read the
// rest as whatever was in memory (issue 14, found by tests/cli/fuzz_test.cpp).
TEST(BadInput, CompressedMetaImageWithLargerDimensions) {
  TempDir dir;
  LabelVolume v;
  v.grid.size = {10, 10, 11};
  v.values.assign(static_cast<std::size_t>(v.grid.n_voxels()), 1);
  const fs::path file = dir / "big.mha";
  write_label_image(v, file);
  std::string text;
  {
    std::ifstream in(file, std::ios::binary);
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  ASSERT_NE(text.find("CompressedData = True"), std::string::npos) << "the writer compresses .mha";
  const std::string from = "DimSize = 10 10 11";
  ASSERT_NE(text.find(from), std::string::npos);
  text.replace(text.find(from), from.size(), "DimSize = 10 10 99");
  std::ofstream(file, std::ios::binary) << text;
  expect_error([&] { read_label_image(file); }, {file.string(), "inflate to", "DimSize"});
}

TEST(BadInput, TruncatedAsciiVtk) {
  TempDir dir;
  const fs::path file = dir / "short.vtk";
  std::ofstream(file) << "# vtk DataFile Version 3.0\nlabels\nASCII\nDATASET STRUCTURED_POINTS\n"
                      << "DIMENSIONS 3 2 2\nSPACING 1 1 1\nORIGIN 0 0 0\nPOINT_DATA 12\n"
                      << "SCALARS labels int 1\nLOOKUP_TABLE default\n0 1 2 3 4 5 6\n";
  expect_error([&] { read_label_image(file); }, {file.string(), "truncated", "12 values"});
}

TEST(BadInput, TextFileNamedNii) {
  TempDir dir;
  const fs::path file = dir / "notes.nii";
  std::ofstream(file) << "this is not an image\njust some text that is long enough to look like a header...\n";
  expect_error([&] { read_label_image(file); }, {file.string(), "not an image"});
}

TEST(BadInput, TwoDimensionalImage) {
  TempDir dir;
  const fs::path file = dir / "slice.mha";
  test::write_2d_mha(file);
  expect_error([&] { read_label_image(file); }, {file.string(), "2-D", "must be 3-D"});
  EXPECT_EQ(read_image_info(file).dimension, 2u);
}

TEST(BadInput, WrongNumberOfComponents) {
  TempDir dir;
  const Grid g = oblique_grid();
  VectorVolume v;
  v.grid = g;
  v.values.assign(static_cast<std::size_t>(g.n_voxels()), Eigen::Vector3f(1, 2, 3));
  write_vector_image(v, dir / "vec.nrrd");
  expect_error([&] { read_label_image(dir / "vec.nrrd"); }, {(dir / "vec.nrrd").string(), "3 components"});
  write_label_image(pattern_labels(g, 1), dir / "lab.nrrd");
  expect_error([&] { read_vector_image(dir / "lab.nrrd", VectorAxes::physical); },
               {(dir / "lab.nrrd").string(), "1 component", "needs 3 components"});
}

TEST(BadInput, NonIntegralLabels) {
  TempDir dir;
  ScalarVolume s;
  s.grid = oblique_grid();
  s.values.assign(static_cast<std::size_t>(s.grid.n_voxels()), 2.0f);
  s.values[static_cast<std::size_t>(s.grid.linear(2, 1, 3))] = 1.5f;
  s.values[static_cast<std::size_t>(s.grid.linear(3, 1, 3))] = 0.25f;
  write_scalar_image(s, dir / "float.nii.gz");
  expect_error([&] { read_label_image(dir / "float.nii.gz"); },
               {(dir / "float.nii.gz").string(), "non-integral value 1.5", "(2, 1, 3)"});
  // Integral floats are fine.
  s.values.assign(s.values.size(), 3.0f);
  write_scalar_image(s, dir / "ok.nii.gz");
  const LabelVolume ok = read_label_image(dir / "ok.nii.gz");
  EXPECT_EQ(ok.values, std::vector<std::int32_t>(s.values.size(), 3));
}

TEST(BadInput, UnknownOutputExtension) {
  TempDir dir;
  const LabelVolume v = pattern_labels(oblique_grid(), 1);
  expect_error([&] { write_label_image(v, dir / "x.png"); }, {"x.png", "extension"});
  expect_error([&] { write_label_image(v, dir / "x.mhd"); }, {"x.mhd", ".mha"});
  expect_error([&] { write_label_image(v, dir / "no_such_dir" / "x.mha"); }, {"x.mha", "does not exist"});
}

TEST(AngleMaps, KnownAnglesGiveExpectedFibres) {
  Grid g;
  g.size = {4, 1, 1};
  ScalarVolume az, el;
  az.grid = el.grid = g;
  az.values = {0.f, 90.f, 30.f, 12.f};
  el.values = {0.f, 0.f, 45.f, 90.f};
  const Eigen::Matrix3d axes = oblique_direction();
  const VectorVolume f = fibres_from_angles(az, el, AngleUnit::degrees, axes);
  const double c45 = std::sqrt(0.5);
  const Eigen::Vector3d expected[4] = {
      axes.col(0), axes.col(1), c45 * std::sqrt(3.0) / 2 * axes.col(0) + c45 * 0.5 * axes.col(1) + c45 * axes.col(2),
      axes.col(2)};
  for (int n = 0; n < 4; ++n) EXPECT_LT((f.values[n].cast<double>() - expected[n]).norm(), 1e-6) << n;

  // Radians, identity axes: plain spherical coordinates.
  ScalarVolume azr = az, elr = el;
  azr.values = {float(std::numbers::pi / 2), 0.f, float(std::numbers::pi), 0.f};
  elr.values = {0.f, float(-std::numbers::pi / 2), 0.f, 0.f};
  const VectorVolume r = fibres_from_angles(azr, elr, AngleUnit::radians, Eigen::Matrix3d::Identity());
  EXPECT_LT((r.values[0] - Eigen::Vector3f(0, 1, 0)).norm(), 1e-6);
  EXPECT_LT((r.values[1] - Eigen::Vector3f(0, 0, -1)).norm(), 1e-6);
  EXPECT_LT((r.values[2] - Eigen::Vector3f(-1, 0, 0)).norm(), 1e-6);

  ScalarVolume shifted = el;
  shifted.grid.origin.x() += 1.0;
  expect_error([&] { fibres_from_angles(az, shifted, AngleUnit::degrees, axes, "az.nii", "el.nii"); },
               {"az.nii", "el.nii", "origin"});
}

}  // namespace
}  // namespace cardio::imaging
