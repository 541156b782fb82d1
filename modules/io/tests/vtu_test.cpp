// write_vtu read back with VTK's own reader; write_json read back with nlohmann.
#include <gtest/gtest.h>
#include <unistd.h>

#include <vtkCellData.h>
#include <vtkCellTypes.h>
#include <vtkDataArray.h>
#include <vtkIdList.h>
#include <vtkNew.h>
#include <vtkObject.h>
#include <vtkPointData.h>
#include <vtkPoints.h>
#include <vtkSmartPointer.h>
#include <vtkUnstructuredGrid.h>
#include <vtkXMLUnstructuredGridReader.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cardio/core/error.hpp"
#include "cardio/io/json.hpp"
#include "cardio/io/vtu.hpp"
#include "cardio/mechanics/block.hpp"

namespace fs = std::filesystem;
namespace mech = cardio::mechanics;

namespace {

// A fresh, empty directory per test, removed afterwards.
class IoTestDir : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    m_dir = fs::temp_directory_path() /
            ("cardio_io_test_" + std::to_string(::getpid()) + "_" + info->test_suite_name() + "_" + info->name());
    fs::remove_all(m_dir);
    fs::create_directories(m_dir);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(m_dir, ec);
  }
  std::size_t n_entries() const {
    return static_cast<std::size_t>(std::distance(fs::directory_iterator(m_dir), fs::directory_iterator()));
  }
  fs::path m_dir;
};

class VtuTest : public IoTestDir {};
class JsonTest : public IoTestDir {};

vtkSmartPointer<vtkUnstructuredGrid> read_vtu(const fs::path& file) {
  vtkNew<vtkXMLUnstructuredGridReader> r;
  r->SetFileName(file.c_str());
  r->Update();
  vtkSmartPointer<vtkUnstructuredGrid> g = r->GetOutput();
  return g;
}

// Known displacement field: u(X) = (0.1 X, -0.05 Y + 0.01 Z, 0.02 X Z).
Eigen::Vector3d u_of(const Eigen::Vector3d& X) {
  return {0.1 * X.x(), -0.05 * X.y() + 0.01 * X.z(), 0.02 * X.x() * X.z()};
}

struct Fixture {
  mech::BlockSpec spec{3, 2, 1, 0.5, Eigen::Vector3d(1.0, -2.0, 0.25)};
  mech::HexMesh mesh;
  Eigen::Matrix3Xd x;
  Fixture() {
    mech::FibreField f;
    f.direction = Eigen::Vector3d(0, 1, 0);
    f.sheet = Eigen::Vector3d(0, 0, 1);
    mesh = mech::make_block(spec, f);
    for (std::size_t e = 0; e < mesh.material.size(); ++e) mesh.material[e] = static_cast<std::uint16_t>(e % 3);
    x = mesh.rest;
    for (Eigen::Index i = 0; i < x.cols(); ++i) x.col(i) += u_of(mesh.rest.col(i));
  }
};

TEST_F(VtuTest, RoundTripThroughVtkReader) {
  Fixture fx;
  const mech::HexMesh& mesh = fx.mesh;
  ASSERT_EQ(mesh.n_nodes(), 4 * 3 * 2);
  ASSERT_EQ(mesh.n_elements(), 6);
  Eigen::Matrix3Xd vel = Eigen::Matrix3Xd::Zero(3, mesh.n_nodes());
  for (Eigen::Index i = 0; i < vel.cols(); ++i) vel.col(i) = Eigen::Vector3d(i, -2.0 * i, 0.5);

  const fs::path file = m_dir / "final.vtu";
  cardio::io::write_vtu(file, mesh, fx.x, {{"velocity", vel}});
  ASSERT_TRUE(fs::exists(file));
  EXPECT_EQ(n_entries(), 1u) << "temp file left behind";

  auto g = read_vtu(file);
  ASSERT_NE(g, nullptr);
  ASSERT_EQ(g->GetNumberOfPoints(), mesh.n_nodes());
  ASSERT_EQ(g->GetNumberOfCells(), mesh.n_elements());

  // Points are the rest positions.
  for (vtkIdType i = 0; i < g->GetNumberOfPoints(); ++i) {
    double p[3];
    g->GetPoint(i, p);
    for (int c = 0; c < 3; ++c) EXPECT_DOUBLE_EQ(p[c], mesh.rest(c, i)) << "point " << i;
  }
  // Cells: hexahedra with the mesh connectivity (VTK order).
  for (vtkIdType e = 0; e < g->GetNumberOfCells(); ++e) {
    EXPECT_EQ(g->GetCellType(e), VTK_HEXAHEDRON) << "cell " << e;
    vtkNew<vtkIdList> ids;
    g->GetCellPoints(e, ids);
    ASSERT_EQ(ids->GetNumberOfIds(), 8);
    for (int k = 0; k < 8; ++k)
      EXPECT_EQ(ids->GetId(k), mesh.hexes[static_cast<std::size_t>(e)][static_cast<std::size_t>(k)]);
  }

  // Point data: displacement = x - rest, exactly; velocity as given.
  vtkDataArray* disp = g->GetPointData()->GetArray("displacement");
  ASSERT_NE(disp, nullptr);
  ASSERT_EQ(disp->GetNumberOfComponents(), 3);
  ASSERT_EQ(disp->GetNumberOfTuples(), mesh.n_nodes());
  for (vtkIdType i = 0; i < disp->GetNumberOfTuples(); ++i) {
    const Eigen::Vector3d u = u_of(mesh.rest.col(i));
    const Eigen::Vector3d expected = fx.x.col(i) - mesh.rest.col(i);  // what was written, bit for bit
    for (int c = 0; c < 3; ++c) {
      EXPECT_EQ(disp->GetComponent(i, c), expected[c]) << "node " << i;
      EXPECT_NEAR(disp->GetComponent(i, c), u[c], 1e-12) << "node " << i;
    }
  }
  ASSERT_NE(g->GetPointData()->GetVectors(), nullptr);
  EXPECT_STREQ(g->GetPointData()->GetVectors()->GetName(), "displacement");
  vtkDataArray* v = g->GetPointData()->GetArray("velocity");
  ASSERT_NE(v, nullptr);
  ASSERT_EQ(v->GetNumberOfComponents(), 3);
  for (vtkIdType i = 0; i < v->GetNumberOfTuples(); ++i)
    for (int c = 0; c < 3; ++c) EXPECT_EQ(v->GetComponent(i, c), vel(c, i));

  // Cell data: fibre, sheet, material.
  vtkDataArray* fibre = g->GetCellData()->GetArray("fibre");
  vtkDataArray* sheet = g->GetCellData()->GetArray("sheet");
  vtkDataArray* mat = g->GetCellData()->GetArray("material");
  ASSERT_NE(fibre, nullptr);
  ASSERT_NE(sheet, nullptr);
  ASSERT_NE(mat, nullptr);
  ASSERT_EQ(fibre->GetNumberOfComponents(), 3);
  ASSERT_EQ(sheet->GetNumberOfComponents(), 3);
  ASSERT_EQ(mat->GetNumberOfComponents(), 1);
  ASSERT_EQ(fibre->GetNumberOfTuples(), mesh.n_elements());
  ASSERT_EQ(mat->GetNumberOfTuples(), mesh.n_elements());
  EXPECT_EQ(mat->GetDataType(), VTK_INT);
  for (vtkIdType e = 0; e < mesh.n_elements(); ++e) {
    for (int c = 0; c < 3; ++c) {
      EXPECT_EQ(fibre->GetComponent(e, c), mesh.fibre(c, e));
      EXPECT_EQ(sheet->GetComponent(e, c), mesh.sheet(c, e));
    }
    EXPECT_NEAR(fibre->GetComponent(e, 1), 1.0, 1e-15);  // uniform fibres along y
    EXPECT_NEAR(sheet->GetComponent(e, 2), 1.0, 1e-15);  // sheet along z
    EXPECT_EQ(mat->GetComponent(e, 0), static_cast<double>(e % 3));
  }
}

TEST_F(VtuTest, FrameStorageIsSinglePrecisionLz4) {
  Fixture fx;
  const Eigen::Matrix3Xd vel = Eigen::Matrix3Xd::Constant(3, fx.mesh.n_nodes(), 1.0 / 3.0);
  const fs::path file = m_dir / "frame.vtu";
  cardio::io::write_vtu(file, fx.mesh, fx.x, {{"velocity", vel}}, {}, cardio::io::Storage::frame);
  std::ifstream in(file, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("compressor=\"vtkLZ4DataCompressor\""), std::string::npos);
  auto g = read_vtu(file);
  ASSERT_EQ(g->GetNumberOfCells(), fx.mesh.n_elements());
  EXPECT_EQ(g->GetPoints()->GetDataType(), VTK_FLOAT);
  vtkDataArray* disp = g->GetPointData()->GetArray("displacement");
  vtkDataArray* v = g->GetPointData()->GetArray("velocity");
  ASSERT_NE(disp, nullptr);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(disp->GetDataType(), VTK_FLOAT);
  EXPECT_EQ(g->GetCellData()->GetArray("material")->GetDataType(), VTK_INT);
  for (vtkIdType i = 0; i < disp->GetNumberOfTuples(); ++i)
    for (int c = 0; c < 3; ++c) {
      // Rounded to float: relative error at most 2^-24.
      const double u = fx.x(c, i) - fx.mesh.rest(c, i);
      EXPECT_NEAR(disp->GetComponent(i, c), u, std::abs(u) * 0x1p-24) << "node " << i;
      EXPECT_EQ(v->GetComponent(i, c), double(1.0f / 3.0f));
    }
  for (vtkIdType e = 0; e < g->GetNumberOfCells(); ++e) {
    vtkNew<vtkIdList> ids;
    g->GetCellPoints(e, ids);
    for (int k = 0; k < 8; ++k)
      EXPECT_EQ(ids->GetId(k), fx.mesh.hexes[static_cast<std::size_t>(e)][static_cast<std::size_t>(k)]);
  }
}

TEST_F(VtuTest, OverwritesAtomically) {
  Fixture fx;
  const fs::path file = m_dir / "state.vtu";
  cardio::io::write_vtu(file, fx.mesh, fx.mesh.rest);  // zero displacement
  cardio::io::write_vtu(file, fx.mesh, fx.x);
  EXPECT_EQ(n_entries(), 1u);
  auto g = read_vtu(file);
  vtkDataArray* disp = g->GetPointData()->GetArray("displacement");
  ASSERT_NE(disp, nullptr);
  const vtkIdType last = disp->GetNumberOfTuples() - 1;
  EXPECT_DOUBLE_EQ(disp->GetComponent(last, 0), u_of(fx.mesh.rest.col(last)).x());
  EXPECT_EQ(g->GetPointData()->GetArray("velocity"), nullptr);
}

TEST_F(VtuTest, WrongStateSizeThrowsAndWritesNothing) {
  Fixture fx;
  const fs::path file = m_dir / "bad.vtu";
  const Eigen::Matrix3Xd too_small = fx.x.leftCols(fx.x.cols() - 1);
  EXPECT_THROW(cardio::io::write_vtu(file, fx.mesh, too_small), cardio::Error);
  const Eigen::Matrix3Xd bad_field = Eigen::Matrix3Xd::Zero(3, 2);
  EXPECT_THROW(cardio::io::write_vtu(file, fx.mesh, fx.x, {{"velocity", bad_field}}), cardio::Error);
  EXPECT_FALSE(fs::exists(file));
  EXPECT_EQ(n_entries(), 0u);
}

TEST_F(VtuTest, UnwritableDirectoryThrowsCardioError) {
  Fixture fx;
  vtkObject::GlobalWarningDisplayOff();  // VTK logs the failed open; the test expects it
  EXPECT_THROW(cardio::io::write_vtu(m_dir / "missing" / "x.vtu", fx.mesh, fx.x), cardio::Error);
  vtkObject::GlobalWarningDisplayOn();
  EXPECT_EQ(n_entries(), 0u);
}

TEST_F(JsonTest, RoundTrip) {
  const nlohmann::json j = {
      {"name", "elongation"},
      {"measured", {{"youngs_modulus_kPa", 9.999999999999998}, {"poisson_ratio_y", 0.3}, {"tiny", 1e-300}}},
      {"run", {{"iterations", 12345}, {"converged", true}, {"threads", 2}}},
      {"deflection",
       nlohmann::json::array({{{"x_mm", 1.0}, {"deflection_mm", -0.125}}, {{"x_mm", 2.0}, {"deflection_mm", -0.5}}})},
      {"note", "unicode: \u00b5m, quote \" and backslash \\"},
      {"nothing", nullptr},
  };
  const fs::path file = m_dir / "summary.json";
  cardio::io::write_json(file, j);
  EXPECT_EQ(n_entries(), 1u);
  std::ifstream in(file);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
  EXPECT_NE(text.find("\n  \"measured\": {"), std::string::npos) << "not pretty-printed with indent 2:\n" << text;
  const nlohmann::json back = nlohmann::json::parse(text);
  EXPECT_EQ(back, j);  // doubles round-trip exactly
  EXPECT_EQ(back["measured"]["youngs_modulus_kPa"].get<double>(), 9.999999999999998);
}

TEST_F(JsonTest, OverwriteAndFailure) {
  const fs::path file = m_dir / "summary.json";
  cardio::io::write_json(file, {{"a", 1}});
  cardio::io::write_json(file, {{"b", 2}});
  std::ifstream in(file);
  EXPECT_EQ(nlohmann::json::parse(in), (nlohmann::json{{"b", 2}}));
  EXPECT_EQ(n_entries(), 1u);
  EXPECT_THROW(cardio::io::write_json(m_dir / "missing" / "s.json", {{"a", 1}}), cardio::Error);
}

}  // namespace
