// Stacks of 2-D slices (TIFF folders, PNG globs) and .vti images as label images: natural slice
// order, the grid from StackGeometry, every user-facing error; and every format the README lists,
// each read from a small file written by ITK's or VTK's own writers.
#include <gtest/gtest.h>
#include <vtkCellData.h>
#include <vtkImageData.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkShortArray.h>
#include <vtkXMLImageDataWriter.h>

#include <fstream>

#include "cardio/imaging/image_io.hpp"
#include "cardio/imaging/image_stack.hpp"
#include "itk_writers.hpp"
#include "test_util.hpp"

namespace cardio::imaging {
namespace {

using test::expect_error;
using test::TempDir;
namespace fs = std::filesystem;

constexpr unsigned kNx = 5, kNy = 3;

/// The label of pixel (i, j) of slice k: distinct for every voxel, over 255 (16-bit slices).
std::uint16_t stack_value(unsigned i, unsigned j, unsigned k) { return std::uint16_t(300 + 100 * k + 10 * j + i); }

std::vector<std::uint16_t> slice_values(unsigned k) {
  std::vector<std::uint16_t> v;
  for (unsigned j = 0; j < kNy; ++j)
    for (unsigned i = 0; i < kNx; ++i) v.push_back(stack_value(i, j, k));
  return v;
}

/// Slices k = 0..n-1 named prefix + k + ext (no zero padding: only natural order sorts them).
void write_stack(const fs::path& dir, const std::string& prefix, const std::string& ext, unsigned n) {
  fs::create_directories(dir);
  for (unsigned k = 0; k < n; ++k)
    test::write_slice(dir / (prefix + std::to_string(k) + ext), {kNx, kNy}, slice_values(k));
}

void expect_stack_values(const LabelVolume& v, unsigned n) {
  ASSERT_EQ(v.grid.size, (Index3{kNx, kNy, n}));
  for (unsigned k = 0; k < n; ++k)
    for (unsigned j = 0; j < kNy; ++j)
      for (unsigned i = 0; i < kNx; ++i) ASSERT_EQ(v.at(i, j, k), stack_value(i, j, k)) << i << " " << j << " " << k;
}

StackGeometry geometry() { return {{0.5, 0.75, 2.0}, {10, -20, 30}}; }

void touch(const fs::path& file) { std::ofstream(file) << "x"; }

TEST(NaturalOrder, DigitRunsCompareAsNumbers) {
  EXPECT_TRUE(natural_less("slice_2.tif", "slice_10.tif"));
  EXPECT_FALSE(natural_less("slice_10.tif", "slice_2.tif"));
  EXPECT_TRUE(natural_less("a9b", "a10a"));
  EXPECT_TRUE(natural_less("s1", "s1a"));
  EXPECT_TRUE(natural_less("s01", "s1"));  // equal as numbers: plain order decides, deterministically
  EXPECT_FALSE(natural_less("s1", "s01"));
  EXPECT_TRUE(natural_less("x_0002", "x_10"));
  EXPECT_FALSE(natural_less("same", "same"));

  TempDir dir;
  for (const char* name : {"slice_10.tif", "slice_2.TIF", "slice_1.tiff", ".hidden.tif", "._slice_0.tif"})
    touch(dir / name);
  fs::create_directories(dir / "sub");  // sub-folders are not looked into
  touch(dir / "sub" / "slice_0.tif");
  const std::vector<fs::path> files = stack_slice_files(dir.path());
  ASSERT_EQ(files.size(), 3u);
  EXPECT_EQ(files[0].filename(), "slice_1.tiff");
  EXPECT_EQ(files[1].filename(), "slice_2.TIF");
  EXPECT_EQ(files[2].filename(), "slice_10.tif");
  EXPECT_TRUE(is_slice_stack(dir.path()));
  EXPECT_TRUE(is_slice_stack(dir / "*.png"));  // a pattern is a stack, whether it matches or not
  EXPECT_FALSE(is_slice_stack(dir / "slice_10.tif"));
  touch(dir / "labels[1].nii");  // an existing file is a file, wildcard characters or not
  EXPECT_FALSE(is_slice_stack(dir / "labels[1].nii"));
}

TEST(SliceStack, TiffFolderIsOneVolumeOnTheGivenGrid) {
  TempDir dir;
  write_stack(dir / "masks", "mask_", ".tif", 12);
  const LabelVolume v = read_label_image(dir / "masks", geometry());
  expect_stack_values(v, 12);
  EXPECT_EQ(v.grid.spacing, Eigen::Vector3d(0.5, 0.75, 2.0));
  EXPECT_EQ(v.grid.origin, Eigen::Vector3d(10, -20, 30));
  EXPECT_TRUE(v.grid.direction.isIdentity());
  const ImageInfo info = read_image_info(dir / "masks", geometry());
  EXPECT_EQ(info.grid.size, (Index3{kNx, kNy, 12}));
  EXPECT_EQ(info.grid.spacing, Eigen::Vector3d(0.5, 0.75, 2.0));
  EXPECT_EQ(info.pixel_bytes(), std::uint64_t{kNx * kNy * 12 * 2});
  EXPECT_EQ(info.component_type, "unsigned_short");
}

TEST(SliceStack, PngGlobTakesTheMatchingSlicesOnly) {
  TempDir dir;
  write_stack(dir.path(), "s", ".PNG", 11);                                    // upper-case extension
  test::write_slice(dir / "t0.png", {2, 2}, std::vector<std::uint8_t>(4, 1));  // not matched: other size
  std::ofstream(dir / "notes.txt") << "not a slice\n";
  const LabelVolume v = read_label_image(dir / "s*.PNG", geometry());
  expect_stack_values(v, 11);
  // 8-bit slices, and a single isotropic spacing.
  fs::create_directories(dir / "u8");
  for (unsigned k = 0; k < 3; ++k)
    test::write_slice(dir / "u8" / std::string("z").append(std::to_string(k)).append(".png"), {2, 2},
                      std::vector<std::uint8_t>(4, k + 1));
  const LabelVolume u8 = read_label_image(dir / "u8" / "z?.png", StackGeometry{{0.02, 0.02, 0.02}, {0, 0, 0}});
  EXPECT_EQ(u8.values, (std::vector<std::int32_t>{1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3}));
  EXPECT_DOUBLE_EQ(u8.grid.voxel_volume(), 0.02 * 0.02 * 0.02);
}

TEST(SliceStack, PaletteSlicesAreReadAsTheirIndices) {
  TempDir dir;
  for (std::uint8_t k = 0; k < 2; ++k)
    test::write_palette_png(dir / std::string("p").append(std::to_string(k)).append(".png"), {2, 2},
                            {0, 1, 2, std::uint8_t(3 - k)});
  const LabelVolume v = read_label_image(dir.path(), geometry());
  EXPECT_EQ(v.values, (std::vector<std::int32_t>{0, 1, 2, 3, 0, 1, 2, 2}));
}

TEST(SliceStack, InconsistentSizesNameTheFirstOffendingSliceAndBothSizes) {
  TempDir dir;
  write_stack(dir.path(), "slice_", ".tif", 3);
  test::write_slice(dir / "slice_10.tif", {4, 3}, std::vector<std::uint8_t>(12, 1));
  test::write_slice(dir / "slice_11.tif", {4, 4}, std::vector<std::uint8_t>(16, 1));
  expect_error([&] { read_label_image(dir.path(), geometry()); },
               {dir.path().string(), "'slice_10.tif' is 4x3 pixels", "'slice_0.tif' is 5x3"});
}

TEST(SliceStack, BadStacksAreClearErrors) {
  TempDir dir;
  const fs::path mixed = dir / "mixed";
  write_stack(mixed, "a", ".tif", 2);
  test::write_slice(mixed / "b.png", {kNx, kNy}, slice_values(0));
  expect_error([&] { read_label_image(mixed, geometry()); }, {"mixed formats", "'a0.tif' is TIFF", "'b.png' is PNG"});
  fs::create_directories(dir / "tif_and_text");
  write_stack(dir / "tif_and_text", "a", ".tif", 1);
  std::ofstream(dir / "tif_and_text" / "notes.txt") << "x\n";
  expect_error([&] { read_label_image(dir / "tif_and_text", geometry()); },
               {"mixed formats", "'notes.txt' is neither TIFF nor PNG"});

  fs::create_directories(dir / "empty");
  expect_error([&] { read_label_image(dir / "empty", geometry()); },
               {(dir / "empty").string(), "no DICOM series", "no 2-D slices"});
  expect_error([&] { read_label_image(dir / "empty" / "*.tif", geometry()); }, {"*.tif", "matches no file"});
  expect_error([&] { read_label_image(dir / "nowhere" / "*.tif", geometry()); }, {"nowhere", "does not exist"});
  expect_error([&] { read_label_image(dir / "m*" / "*.tif", geometry()); }, {"wildcards", "file name only"});
  expect_error([&] { read_label_image(dir / "tif_and_text" / "*.txt", geometry()); },
               {"none of its 1 file(s), e.g. 'notes.txt', is a 2-D slice"});
}

TEST(SliceStack, SlicesMustBeTwoDimensionalIntegerGreyScale) {
  TempDir dir;
  auto with_bad_slice = [&](const std::string& name, auto&& write_bad) {
    const fs::path stack = dir / name;
    write_stack(stack, "s", ".tif", 2);
    write_bad(stack / "s2.tif");
    return stack;
  };
  const fs::path paged = with_bad_slice("paged", [](const fs::path& f) {
    test::write_multipage_tiff(f, {kNx, kNy, 4});
  });
  expect_error([&] { read_label_image(paged, geometry()); }, {"'s2.tif' is a 3-D image", "5x3x4", "2-D slices"});
  const fs::path rgb = with_bad_slice("rgb", [](const fs::path& f) { test::write_rgb_slice(f, {kNx, kNy}); });
  expect_error([&] { read_label_image(rgb, geometry()); }, {"'s2.tif' has 3 components", "grey-scale"});
  const fs::path real = with_bad_slice("float", [](const fs::path& f) {
    test::write_slice(f, {kNx, kNy}, std::vector<float>(kNx * kNy, 1.5f));
  });
  expect_error([&] { read_label_image(real, geometry()); }, {"'s2.tif' stores float", "integers"});
  const fs::path u8 = with_bad_slice("u8", [](const fs::path& f) {
    test::write_slice(f, {kNx, kNy}, std::vector<std::uint8_t>(kNx * kNy, 1));
  });
  expect_error([&] { read_label_image(u8, geometry()); }, {"'s2.tif' stores unsigned_char", "same pixel type"});
  const fs::path fake = with_bad_slice("fake", [](const fs::path& f) { std::ofstream(f) << "not a tiff\n"; });
  expect_error([&] { read_label_image(fake, geometry()); }, {"'s2.tif' is not a readable TIFF"});
}

TEST(SliceStack, TheGridMustBeGivenAndASingleSliceIsNotAVolume) {
  TempDir dir;
  write_stack(dir.path(), "s", ".png", 2);
  expect_error([&] { read_label_image(dir.path()); }, {dir.path().string(), "2 2-D slices", "spacing"});
  expect_error([&] { read_image_info(dir / "*.png"); }, {"spacing"});
  expect_error([&] { read_label_image(dir / "s0.png"); }, {"s0.png", "single 2-D slice", "glob pattern"});
}

TEST(SliceStack, WrittenStackReadsBackAndReplacesOnlyAnEarlierStack) {
  TempDir dir;
  LabelVolume v;
  v.grid.size = {4, 3, 12};
  for (std::int32_t n = 0; n < 144; ++n) v.values.push_back(n % 7 == 0 ? 300 : n % 3);  // 16-bit
  write_label_stack(v, dir / "labels", ".png");
  EXPECT_TRUE(fs::exists(dir / "labels" / "slice_0011.png"));
  EXPECT_EQ(read_label_image(dir / "labels", StackGeometry{}).values, v.values);
  write_label_stack(v, dir / "labels", ".tif");  // replaces the earlier stack
  EXPECT_EQ(stack_slice_files(dir / "labels").size(), 12u);
  std::ofstream(dir / "labels" / "notes.txt") << "mine\n";
  expect_error([&] { write_label_stack(v, dir / "labels", ".tif"); }, {"'notes.txt'", "another output folder"});
  EXPECT_TRUE(fs::exists(dir / "labels" / "notes.txt"));
  v.grid.direction = test::oblique_direction();
  expect_error([&] { write_label_stack(v, dir / "oblique", ".tif"); }, {"direction matrix"});
}

/// A .vti of size 4 x 3 x 2 (labels n = linear index, as shorts) written by VTK's own writer.
void write_vti(const fs::path& file, const std::array<int, 6>& extent, const double direction[9], bool cell_data,
               int arrays) {
  vtkNew<vtkImageData> image;
  image->SetExtent(extent[0], extent[1], extent[2], extent[3], extent[4], extent[5]);
  image->SetOrigin(1, 2, 3);
  image->SetSpacing(0.5, 1.0, 2.0);
  image->SetDirectionMatrix(direction);
  for (int a = 0; a < arrays; ++a) {
    vtkNew<vtkShortArray> labels;
    labels->SetName(a == 0 ? "labels" : "other");
    const vtkIdType n = cell_data ? image->GetNumberOfCells() : image->GetNumberOfPoints();
    for (vtkIdType i = 0; i < n; ++i) labels->InsertNextValue(static_cast<short>(i));
    if (cell_data)
      image->GetCellData()->AddArray(labels);
    else
      image->GetPointData()->AddArray(labels);
  }
  vtkNew<vtkXMLImageDataWriter> writer;
  writer->SetInputData(image);
  writer->SetFileName(file.string().c_str());
  ASSERT_EQ(writer->Write(), 1);
}

TEST(Vti, PointScalarsAreTheLabelsAndTheGridComesFromTheFile) {
  TempDir dir;
  const Eigen::Matrix3d d = test::oblique_direction();
  double rows[9];
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) rows[3 * r + c] = d(r, c);
  // An extent that starts at (2, 1, 0): voxel (0, 0, 0) is VTK's point (2, 1, 0).
  write_vti(dir / "labels.vti", {2, 5, 1, 3, 0, 1}, rows, false, 1);
  const LabelVolume v = read_label_image(dir / "labels.vti");
  EXPECT_EQ(v.grid.size, (Index3{4, 3, 2}));
  EXPECT_EQ(v.grid.spacing, Eigen::Vector3d(0.5, 1.0, 2.0));
  const Eigen::Vector3d first = Eigen::Vector3d(1, 2, 3) + d * Eigen::Vector3d(2 * 0.5, 1 * 1.0, 0);
  EXPECT_LT((v.grid.origin - first).norm(), 1e-12);
  EXPECT_LT((v.grid.direction - d).cwiseAbs().maxCoeff(), 1e-12);
  for (std::int32_t n = 0; n < 24; ++n) EXPECT_EQ(v.values[std::size_t(n)], n);
  const ImageInfo info = read_image_info(dir / "labels.vti");
  EXPECT_EQ(info.component_type, "short");
  EXPECT_EQ(info.pixel_bytes(), 48u);

  const double identity[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  write_vti(dir / "cells.vti", {0, 3, 0, 2, 0, 1}, identity, true, 1);
  expect_error([&] { read_label_image(dir / "cells.vti"); }, {"cells.vti", "no point data", "only cell data"});
  write_vti(dir / "two.vti", {0, 3, 0, 2, 0, 1}, identity, false, 2);
  expect_error([&] { read_label_image(dir / "two.vti"); }, {"two.vti", "'labels', 'other'", "active scalars"});
  std::ofstream(dir / "text.vti") << "<VTKFile type=\"ImageData\">broken";
  expect_error([&] { read_label_image(dir / "text.vti"); }, {"text.vti"});
}

/// Every format of the README's list, read back from a file written by another library's writer.
TEST(ListedFormats, EveryFormatTheReadmeListsIsRead) {
  TempDir dir;
  const std::array<unsigned, 3> size{4, 3, 2};
  std::vector<std::int16_t> values;
  for (std::int16_t n = 0; n < 24; ++n) values.push_back(std::int16_t(n % 5));
  const std::vector<std::int32_t> expected(values.begin(), values.end());
  for (const char* ext : {".nii", ".nii.gz", ".mha", ".mhd", ".nrrd", ".nhdr", ".vtk"}) {
    const fs::path file = dir / (std::string("labels") + ext);
    test::write_3d_image(file, size, {0.5, 1.0, 2.0}, {1, 2, 3}, values);
    const LabelVolume v = read_label_image(file);
    EXPECT_EQ(v.grid.size, (Index3{4, 3, 2})) << ext;
    EXPECT_LT((v.grid.spacing - Eigen::Vector3d(0.5, 1, 2)).norm(), 1e-6) << ext;
    EXPECT_EQ(v.values, expected) << ext;
  }
  const double identity[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  write_vti(dir / "labels.vti", {0, 3, 0, 2, 0, 1}, identity, false, 1);
  EXPECT_EQ(read_label_image(dir / "labels.vti").grid.size, (Index3{4, 3, 2}));
  fs::create_directories(dir / "dicom");
  test::write_dicom_series(dir / "dicom", size, {0.5, 1.0, 2.0}, {1, 2, 3}, {1, 0, 0, 0, 1, 0, 0, 0, 1}, values);
  EXPECT_EQ(read_label_image(dir / "dicom").values, expected);
  write_stack(dir / "tiff", "z", ".tif", 2);
  expect_stack_values(read_label_image(dir / "tiff", geometry()), 2);
  write_stack(dir / "png", "z", ".png", 2);
  expect_stack_values(read_label_image(dir / "png" / "z*.png", geometry()), 2);
}

}  // namespace
}  // namespace cardio::imaging
