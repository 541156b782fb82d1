// The memory estimate from a heart config (issue 14, item 5): every geometry source gives its grid
// without allocating it, huge grids are finite doubles (no overflow), and the refusal names the
// key at its line, the estimated bytes, the grid and the limit. Nothing large is allocated here.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "cardio/config/config.hpp"
#include "cardio/core/error.hpp"
#include "cardio/imaging/image_io.hpp"
#include "cardio/imaging/resample.hpp"
#include "cardio/meshing/voxel_mesh.hpp"
#include "cardio/phantoms/phantoms.hpp"
#include "config/mesh_config.hpp"
#include "mesh/memory_estimate.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
using namespace cardio;

namespace {

const fs::path kBivSurface = fs::path(CARDIO_SOURCE_DIR) / "data" / "biv_meanshape_surface.vtp";
constexpr double kElementBytes = double(meshing::kBytesPerElementEstimate);

class MemoryEstimate : public ::testing::Test {
 protected:
  /// The config (written to case.yaml, so relative paths and locations work) and its estimate.
  pipeline::MemoryEstimate estimate(const std::string& yaml) {
    m_doc = load(yaml);
    return pipeline::estimate_mesh_memory(pipeline::parse_mesh_config(*m_doc));
  }
  /// The refusal of `yaml` with `available` bytes ("" if it fits), and it must come at once.
  std::string refusal(const std::string& yaml, double available) {
    const auto t0 = std::chrono::steady_clock::now();
    const pipeline::MemoryEstimate e = estimate(yaml);
    std::string msg;
    try {
      pipeline::check_mesh_memory(e, *m_doc, available);
    } catch (const Error& err) {
      msg = err.what();
    }
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 2.0);
    return msg;
  }
  std::shared_ptr<config::Document> load(const std::string& yaml) {
    std::ofstream(dir / "case.yaml") << yaml;
    return config::Document::load_file(dir / "case.yaml");
  }

  test_support::TempDir tmp{"cardio_memory_estimate_"};
  fs::path dir = tmp.path();
  std::shared_ptr<config::Document> m_doc;
};

const char* kBox =
    "geometry:\n"                      // 1
    "  source: box\n"                  // 2
    "  boundary_fit: staircase\n"      // 3
    "  box:\n"                         // 4
    "    size: [10 mm, 1 mm, 2 mm]\n"  // 5
    "    voxel_size: 0.25 mm\n";       // 6

std::string box_at(const std::string& voxel_size) {
  std::string s = kBox;
  s.replace(s.find("0.25 mm"), 7, voxel_size);
  return s;
}

TEST_F(MemoryEstimate, BoxIsSizeOverVoxelSizeAllMyocardium) {
  const pipeline::MemoryEstimate e = estimate(kBox);
  EXPECT_EQ(e.source_grid, Eigen::Vector3d(40, 4, 8));
  EXPECT_EQ(e.mesh_grid, e.source_grid);
  EXPECT_EQ(e.elements, 1280);
  EXPECT_EQ(e.bytes(), 1280 * (pipeline::kBoxBytesPerVoxel + pipeline::kMeshGridBytesPerVoxel + kElementBytes));
  EXPECT_EQ(e.key, "geometry.box.voxel_size");
  EXPECT_EQ(refusal(kBox, 1e9), "");
}

TEST_F(MemoryEstimate, TinyBoxVoxelIsRefusedNamingTheKeyWithoutOverflow) {
  // The campaign's case: 1e-6 mm passed validate, then std::vector threw length_error.
  const pipeline::MemoryEstimate e = estimate(box_at("1e-6 mm"));
  EXPECT_EQ(e.source_grid, Eigen::Vector3d(1e7, 1e6, 2e6));
  EXPECT_TRUE(std::isfinite(e.bytes()));
  EXPECT_GT(e.bytes(), 2e19);  // beyond 2^64: a uint64 product would have wrapped
  const std::string msg = refusal(box_at("1e-6 mm"), 1e9);
  EXPECT_HAS(msg, "case.yaml:6");
  EXPECT_HAS(msg, "geometry.box.voxel_size: 1e-06 mm");
  EXPECT_HAS(msg, "10000000 x 1000000 x 2000000 voxels");
  EXPECT_HAS(msg, "2.08e+13 GB");  // 2e19 elements at 1024 bytes, plus the grids
  EXPECT_HAS(msg, "more than the 1.00 GB available");
  EXPECT_HAS(msg, "use a larger voxel size");
}

TEST_F(MemoryEstimate, PhantomGridAndItsWallVolumeInElements) {
  const std::string yaml = "geometry: {source: phantom, phantom: {voxel_size: 1 mm}}\n";
  const pipeline::MemoryEstimate e = estimate(yaml);
  phantoms::PhantomSpec spec;
  EXPECT_EQ(e.source_grid, phantoms::phantom_grid_size(spec));
  // The elements: the LV wall volume over the voxel volume, close to the voxels make_phantom labels.
  const phantoms::Phantom ph = phantoms::make_phantom(spec);
  const double myocardium = double(std::count(ph.labels.values.begin(), ph.labels.values.end(), 1));
  EXPECT_NEAR(e.elements, myocardium, 0.05 * myocardium);
  EXPECT_EQ(e.key, "geometry.phantom.voxel_size");
  EXPECT_EQ(refusal(yaml, 1e9), "");
}

TEST_F(MemoryEstimate, PhantomInsideTheDocumentedRangeIsRefusedBeforeBuilding) {
  // The campaign's case: 0.0500001 mm allocated 2.26 GB for 33 s before the old guard fired.
  const std::string yaml =
      "geometry:\n"
      "  source: phantom\n"
      "  phantom:\n"
      "    voxel_size: 0.0500001 mm\n";
  const pipeline::MemoryEstimate e = estimate(yaml);
  EXPECT_NEAR(e.source_bytes, 2.26e9, 0.03e9);  // labels + fibre + sheet, as make_phantom would allocate
  EXPECT_GT(e.elements, 2.5e7);
  const std::string msg = refusal(yaml, 8e9);
  EXPECT_HAS(msg, "case.yaml:4");
  EXPECT_HAS(msg, "geometry.phantom.voxel_size: 0.0500001 mm");
  EXPECT_HAS(msg, "402 x 402 x 502 voxels");
  EXPECT_HAS(msg, "25.9 million elements");
  EXPECT_HAS(msg, "8.00 GB available");
}

TEST_F(MemoryEstimate, ElementSizeResamplesTheGridAndIsNamedWhenItDominates) {
  const std::string yaml = std::string(kBox) + "  element_size: 0.3 mm\n";
  const pipeline::MemoryEstimate e = estimate(yaml);
  // The grid imaging::resampled_grid gives.
  imaging::Grid source;
  source.size = {40, 4, 8};
  source.spacing = Eigen::Vector3d::Constant(0.25);
  const imaging::Grid target = imaging::resampled_grid(source, 0.3);
  EXPECT_EQ(e.mesh_grid, Eigen::Vector3d(double(target.size[0]), double(target.size[1]), double(target.size[2])));
  EXPECT_EQ(e.elements, e.mesh_grid.prod());
  EXPECT_EQ(e.key, "geometry.element_size");  // the elements (1024 bytes each) outweigh the source grid
  EXPECT_EQ(refusal(yaml, 1e9), "");
  const std::string tiny = std::string(kBox) + "  element_size: 1e-5 mm\n";  // line 7
  const std::string msg = refusal(tiny, 1e9);
  EXPECT_HAS(msg, "case.yaml:7");
  EXPECT_HAS(msg, "geometry.element_size: 1e-05 mm");
  EXPECT_HAS(msg, "resampled to 1000000 x 100000 x 200000");
  EXPECT_HAS(msg, "use a larger element size");
}

TEST_F(MemoryEstimate, ImageFromItsHeaderOnly) {
  // A real image: its grid, stored bytes + int32 labels per voxel.
  phantoms::PhantomSpec spec;
  spec.voxel_size = 2;
  const phantoms::Phantom ph = phantoms::make_phantom(spec);
  imaging::write_label_image(ph.labels, dir / "labels.nrrd");
  const std::string roles = ", roles: {myocardium: [1]}";
  pipeline::MemoryEstimate e = estimate("geometry: {source: image, labels: labels.nrrd" + roles + "}\n");
  const auto& g = ph.labels.grid;
  EXPECT_EQ(e.source_grid, Eigen::Vector3d(double(g.size[0]), double(g.size[1]), double(g.size[2])));
  const imaging::ImageInfo info = imaging::read_image_info(dir / "labels.nrrd");
  EXPECT_EQ(e.source_bytes, double(g.n_voxels()) * (double(info.bytes_per_component) + 4));
  EXPECT_EQ(e.elements, 0);  // not known before the labels are read: the mesh stage checks them
  EXPECT_EQ(e.key, "geometry.labels");
  // A header that promises 40000^3 shorts (no pixel data): refused from the header alone.
  std::ofstream(dir / "huge.nhdr") << "NRRD0004\ntype: short\ndimension: 3\nsizes: 40000 40000 40000\n"
                                      "spacings: 0.1 0.1 0.1\nencoding: raw\nendian: little\ndata file: huge.raw\n";
  std::ofstream(dir / "huge.raw") << "";  // NRRD opens its data file with the header; nothing is read
  const std::string msg = refusal("geometry:\n  source: image\n  labels: huge.nhdr\n  roles: {myocardium: [1]}\n", 1e9);
  EXPECT_HAS(msg, "case.yaml:3");
  EXPECT_HAS(msg, "geometry.labels: huge.nhdr");
  EXPECT_HAS(msg, "40000 x 40000 x 40000 voxels");
  EXPECT_HAS(msg, "crop or downsample the image");
  // With an element size, the resampled grid (from the header's spacing) counts too.
  e = estimate("geometry: {source: image, labels: labels.nrrd, element_size: 0.5 mm" + roles + "}\n");
  EXPECT_EQ(e.mesh_grid, (e.source_grid * 4).eval());
}

TEST_F(MemoryEstimate, SurfaceFromItsBounds) {
  ASSERT_TRUE(fs::exists(kBivSurface)) << kBivSurface;
  const std::string yaml =
      "geometry: {source: surface, surface: {file: " + kBivSurface.string() + ", voxel_size: 1.5 mm}}\n";
  const pipeline::MemoryEstimate e = estimate(yaml);
  EXPECT_GT(e.source_grid.minCoeff(), 30);  // a heart of several cm at 1.5 mm, plus margins
  EXPECT_LT(e.source_grid.maxCoeff(), 150);
  EXPECT_EQ(e.source_bytes, e.source_grid.prod() * pipeline::kSurfaceBytesPerVoxel);
  EXPECT_EQ(refusal(yaml, 1e9), "");
  std::string tiny = yaml;
  tiny.replace(tiny.find("1.5 mm"), 6, "0.001 mm");
  const std::string msg = refusal(tiny, 1e9);
  EXPECT_HAS(msg, "geometry.surface.voxel_size: 0.001 mm");
  EXPECT_HAS(msg, "voxels (");
}

TEST_F(MemoryEstimate, BytesText) {
  EXPECT_EQ(pipeline::bytes_text(1.5e9), "1.50 GB");
  EXPECT_EQ(pipeline::bytes_text(1e22), "1e+13 GB");
}

}  // namespace
