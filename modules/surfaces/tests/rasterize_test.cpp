// rasterize_surface against independent references: analytic volumes (spheres, a cube), VTK's own
// vtkMassProperties / vtkFeatureEdges and hand-written divergence-theorem sums on the real surface.
#include <gtest/gtest.h>
#include <unistd.h>

#include <vtkCellArray.h>
#include <vtkCellData.h>
#include <vtkDataArray.h>
#include <vtkFeatureEdges.h>
#include <vtkIdList.h>
#include <vtkIntArray.h>
#include <vtkMassProperties.h>
#include <vtkNew.h>
#include <vtkPLYWriter.h>
#include <vtkPointData.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>
#include <vtkPolyDataWriter.h>
#include <vtkSTLWriter.h>
#include <vtkSmartPointer.h>
#include <vtkTriangleFilter.h>
#include <vtkUnstructuredGrid.h>
#include <vtkUnstructuredGridWriter.h>
#include <vtkXMLPolyDataReader.h>
#include <vtkXMLPolyDataWriter.h>

#include <Eigen/Geometry>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <numbers>
#include <set>
#include <string>
#include <vector>

#include "cardio/core/error.hpp"
#include "cardio/surfaces/rasterize.hpp"

namespace fs = std::filesystem;
namespace surf = cardio::surfaces;
using Vec3 = Eigen::Vector3d;
using Tri = std::array<vtkIdType, 3>;

namespace {

/// Real data: closed biventricular surface, mean shape of Bai et al. 2015 as adapted by Schuler et al.,
/// from KIT-IBT/Cobiveco examples/geo1/heart.vtp (Apache-2.0); see data/README.md.
const fs::path kBivSurface = fs::path(CARDIO_SOURCE_DIR) / "data" / "biv_meanshape_surface.vtp";

class SurfacesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    m_dir = fs::temp_directory_path() / ("cardio_surfaces_test_" + std::to_string(::getpid()) + "_" + info->name());
    fs::remove_all(m_dir);
    fs::create_directories(m_dir);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(m_dir, ec);
  }
  fs::path m_dir;
};

struct Surface {
  std::vector<Vec3> points;
  std::vector<Tri> tris;
  void append(const Surface& o) {
    const auto off = vtkIdType(points.size());
    points.insert(points.end(), o.points.begin(), o.points.end());
    for (Tri t : o.tris) tris.push_back({t[0] + off, t[1] + off, t[2] + off});
  }
};

/// UV sphere, outward triangles, poles as single points.
Surface uv_sphere(const Vec3& centre, double r, int n_lon, int n_lat) {
  Surface s;
  const double pi = std::numbers::pi;
  s.points.push_back(centre + Vec3(0, 0, r));
  for (int i = 1; i < n_lat; ++i) {
    const double th = pi * i / n_lat;
    for (int j = 0; j < n_lon; ++j) {
      const double ph = 2 * pi * j / n_lon;
      s.points.push_back(centre + r * Vec3(std::sin(th) * std::cos(ph), std::sin(th) * std::sin(ph), std::cos(th)));
    }
  }
  s.points.push_back(centre - Vec3(0, 0, r));
  const vtkIdType south = vtkIdType(s.points.size()) - 1;
  auto ring = [&](int i, int j) { return vtkIdType(1 + (i - 1) * n_lon + (j % n_lon)); };
  for (int j = 0; j < n_lon; ++j) s.tris.push_back({0, ring(1, j), ring(1, j + 1)});
  for (int i = 1; i + 1 < n_lat; ++i)
    for (int j = 0; j < n_lon; ++j) {
      s.tris.push_back({ring(i, j), ring(i + 1, j), ring(i + 1, j + 1)});
      s.tris.push_back({ring(i, j), ring(i + 1, j + 1), ring(i, j + 1)});
    }
  for (int j = 0; j < n_lon; ++j) s.tris.push_back({south, ring(n_lat - 1, j + 1), ring(n_lat - 1, j)});
  return s;
}

vtkSmartPointer<vtkPolyData> to_vtk(const Surface& s) {
  auto pd = vtkSmartPointer<vtkPolyData>::New();
  vtkNew<vtkPoints> p;
  p->SetDataTypeToDouble();
  for (const Vec3& x : s.points) p->InsertNextPoint(x.data());
  vtkNew<vtkCellArray> c;
  for (const Tri& t : s.tris) c->InsertNextCell(3, t.data());
  pd->SetPoints(p);
  pd->SetPolys(c);
  return pd;
}

void add_int_array(vtkFieldData* fd, const std::string& name, const std::vector<int>& v) {
  vtkNew<vtkIntArray> a;
  a->SetName(name.c_str());
  for (int x : v) a->InsertNextValue(x);
  fd->AddArray(a);
}

void write_vtp(vtkPolyData* pd, const fs::path& f) {
  vtkNew<vtkXMLPolyDataWriter> w;
  w->SetInputData(pd);
  w->SetFileName(f.c_str());
  ASSERT_EQ(w->Write(), 1);
}

vtkSmartPointer<vtkPolyData> read_vtp(const fs::path& f) {
  vtkNew<vtkXMLPolyDataReader> r;
  r->SetFileName(f.c_str());
  r->Update();
  vtkSmartPointer<vtkPolyData> pd = r->GetOutput();
  return pd;
}

std::int64_t count_label(const cardio::imaging::LabelVolume& v, std::int32_t label) {
  return std::count(v.values.begin(), v.values.end(), label);
}

double voxel_volume(const surf::RasterizedSurface& r, std::int32_t label) {
  return double(count_label(r.labels, label)) * r.labels.grid.voxel_volume();
}

std::string error_of(const fs::path& f, const surf::RasterizeOptions& o) {
  try {
    surf::rasterize_surface(f, o);
  } catch (const cardio::Error& e) {
    return e.what();
  }
  return "(no error)";
}

double sphere_volume(double r) { return 4.0 / 3.0 * std::numbers::pi * r * r * r; }

/// Cube of edge 10 mm as 6 separately stored faces (n x n quads each, no shared vertices), rotated to a
/// generic pose, each vertex copy perturbed by up to `jitter` mm.
Surface split_cube(int n, double jitter) {
  const Eigen::Matrix3d rot = (Eigen::AngleAxisd(0.3, Vec3::UnitX()) * Eigen::AngleAxisd(0.5, Vec3::UnitY()) *
                               Eigen::AngleAxisd(0.7, Vec3::UnitZ()))
                                  .toRotationMatrix();
  Surface cube;
  unsigned seed = 12345;
  auto rnd = [&] {  // deterministic, in [-1, 1]
    seed = seed * 1103515245u + 12345u;
    return double((seed >> 8) & 0xffff) / 32767.5 - 1.0;
  };
  for (int axis = 0; axis < 3; ++axis)
    for (int side = 0; side < 2; ++side) {
      Surface f;
      const int u = (axis + 1) % 3, v = (axis + 2) % 3;
      for (int a = 0; a <= n; ++a)
        for (int b = 0; b <= n; ++b) {
          Vec3 x;
          x[axis] = side ? 5.0 : -5.0;
          x[u] = -5.0 + 10.0 * a / n;
          x[v] = -5.0 + 10.0 * b / n;
          f.points.push_back(rot * x + Vec3(3.1, -1.7, 0.9) + jitter * Vec3(rnd(), rnd(), rnd()) / std::sqrt(3.0));
        }
      auto id = [&](int a, int b) { return vtkIdType(a * (n + 1) + b); };
      for (int a = 0; a < n; ++a)
        for (int b = 0; b < n; ++b) {
          // (u, v, axis) is right-handed, so u x v points along +axis: outward on side 1.
          if (side) {
            f.tris.push_back({id(a, b), id(a + 1, b), id(a + 1, b + 1)});
            f.tris.push_back({id(a, b), id(a + 1, b + 1), id(a, b + 1)});
          } else {
            f.tris.push_back({id(a, b), id(a + 1, b + 1), id(a + 1, b)});
            f.tris.push_back({id(a, b), id(a, b + 1), id(a + 1, b + 1)});
          }
        }
      cube.append(f);
    }
  return cube;
}

std::int64_t boundary_edges_vtk(vtkPolyData* pd) {
  vtkNew<vtkFeatureEdges> fe;
  fe->SetInputData(pd);
  fe->BoundaryEdgesOn();
  fe->NonManifoldEdgesOff();
  fe->FeatureEdgesOff();
  fe->ManifoldEdgesOff();
  fe->Update();
  return fe->GetOutput()->GetNumberOfLines();
}

}  // namespace

// ---------------------------------------------------------------------------------------------------------

TEST_F(SurfacesTest, RealBiventricularSurface) {
  ASSERT_TRUE(fs::exists(kBivSurface)) << "real data missing (data/README.md): " << kBivSurface;
  surf::RasterizeOptions o;
  o.voxel_size_mm = 1.5;
  const auto t0 = std::chrono::steady_clock::now();
  const surf::RasterizedSurface r = surf::rasterize_surface(kBivSurface, o);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  // Independent references from the file itself.
  vtkSmartPointer<vtkPolyData> pd = read_vtp(kBivSurface);
  ASSERT_EQ(pd->GetNumberOfPoints(), 24991);
  ASSERT_EQ(pd->GetNumberOfPolys(), 49978);
  EXPECT_EQ(boundary_edges_vtk(pd), 0);
  vtkNew<vtkMassProperties> mass;
  mass->SetInputData(pd);
  mass->Update();
  const double mass_volume = mass->GetVolume();
  // Divergence theorem by hand (the file is consistently oriented; sign removed).
  double div6 = 0;
  vtkCellArray* polys = pd->GetPolys();
  vtkNew<vtkIdList> ids;
  auto pt = [&](vtkIdType i) {
    Vec3 x;
    pd->GetPoint(i, x.data());
    return x;
  };
  for (polys->InitTraversal(); polys->GetNextCell(ids);)
    div6 += pt(ids->GetId(0)).dot(pt(ids->GetId(1)).cross(pt(ids->GetId(2))));
  const double div_volume = std::abs(div6) / 6;
  EXPECT_NEAR(div_volume, 144764, 1.0);
  EXPECT_NEAR(mass_volume, div_volume, 1e-3 * div_volume);
  EXPECT_NEAR(r.tissue_volume_mm3, div_volume, 1e-9 * div_volume);
  EXPECT_EQ(r.points, 24991);
  EXPECT_EQ(r.triangles, 49978);
  EXPECT_EQ(r.merged_points, 0);

  // Cavities: patch = cells whose 3 points share the class; reference lid volume = divergence sum about
  // the boundary-loop centroid (the fan triangles through it contribute nothing).
  vtkDataArray* cls = pd->GetPointData()->GetArray("class");
  ASSERT_NE(cls, nullptr);
  const std::array<int, 2> patch_class{3, 4};
  const std::array<std::int64_t, 2> expected_boundary{90, 142};
  ASSERT_EQ(r.cavity_names, (std::vector<std::string>{"lv", "rv"}));
  for (std::size_t c = 0; c < 2; ++c) {
    vtkNew<vtkCellArray> cells;
    for (polys->InitTraversal(); polys->GetNextCell(ids);) {
      bool all = true;
      for (int k = 0; k < 3; ++k) all &= int(cls->GetTuple1(ids->GetId(k))) == patch_class[c];
      if (all) cells->InsertNextCell(ids);
    }
    vtkNew<vtkPolyData> patch;
    patch->SetPoints(pd->GetPoints());
    patch->SetPolys(cells);
    vtkNew<vtkFeatureEdges> fe;
    fe->SetInputData(patch);
    fe->BoundaryEdgesOn();
    fe->NonManifoldEdgesOff();
    fe->FeatureEdgesOff();
    fe->ManifoldEdgesOff();
    fe->Update();
    vtkPolyData* loop = fe->GetOutput();
    EXPECT_EQ(loop->GetNumberOfLines(), expected_boundary[c]);
    EXPECT_EQ(r.endocardium_boundary_edges[c], expected_boundary[c]);
    ASSERT_EQ(loop->GetNumberOfPoints(), loop->GetNumberOfLines()) << "expected one simple boundary loop";
    Vec3 centroid = Vec3::Zero();
    for (vtkIdType i = 0; i < loop->GetNumberOfPoints(); ++i) {
      Vec3 x;
      loop->GetPoint(i, x.data());
      centroid += x;
    }
    centroid /= double(loop->GetNumberOfPoints());
    double cav6 = 0;
    vtkCellArray* pc = patch->GetPolys();
    for (pc->InitTraversal(); pc->GetNextCell(ids);)
      cav6 += (pt(ids->GetId(0)) - centroid).dot((pt(ids->GetId(1)) - centroid).cross(pt(ids->GetId(2)) - centroid));
    const double cav_ref = std::abs(cav6) / 6;
    EXPECT_NEAR(r.cavity_volume_mm3[c], cav_ref, 1e-9 * cav_ref);
    const double vox = voxel_volume(r, 2 + std::int32_t(c));
    EXPECT_GT(vox, 0);
    EXPECT_NEAR(vox, cav_ref, 0.03 * cav_ref) << r.cavity_names[c];
    std::cout << "[ biv ] " << r.cavity_names[c] << ": closed volume " << cav_ref << " mm3, voxels " << vox << " mm3 ("
              << 100 * (vox / cav_ref - 1) << " %), boundary edges " << expected_boundary[c] << "\n";
  }
  const double myo = voxel_volume(r, 1);
  EXPECT_NEAR(myo, div_volume, 0.03 * div_volume);
  const auto& g = r.labels.grid;
  EXPECT_EQ(g.direction, Eigen::Matrix3d::Identity());
  EXPECT_EQ(g.spacing, Vec3::Constant(1.5));
  // Margin: no label on the outer layer of voxels.
  for (std::int64_t k = 0; k < g.size[2]; ++k)
    for (std::int64_t j = 0; j < g.size[1]; ++j)
      for (std::int64_t i : {std::int64_t(0), g.size[0] - 1}) ASSERT_EQ(r.labels.at(i, j, k), 0);
  std::cout << "[ biv ] tissue: enclosed " << div_volume << " mm3 (vtkMassProperties " << mass_volume
            << "), myocardium voxels " << myo << " mm3 (" << 100 * (myo / div_volume - 1) << " %); grid " << g.size[0]
            << "x" << g.size[1] << "x" << g.size[2] << " at 1.5 mm; rasterize_surface " << secs << " s\n";
}

TEST_F(SurfacesTest, SphereVolumeConvergesWithVoxelSize) {
  const double radius = 20;
  Surface s = uv_sphere(Vec3(1.3, -2.7, 0.4), radius, 256, 128);
  auto pd = to_vtk(s);
  add_int_array(pd->GetCellData(), "class", std::vector<int>(s.tris.size(), 2));  // all epicardium
  const fs::path f = m_dir / "sphere.vtp";
  write_vtp(pd, f);
  surf::RasterizeOptions o;
  o.endocardia.clear();
  const double exact = sphere_volume(radius);
  double previous_error = 1;
  for (const auto& [h, tol] : {std::pair{2.0, 0.02}, std::pair{0.5, 0.004}}) {
    o.voxel_size_mm = h;
    const auto r = surf::rasterize_surface(f, o);
    EXPECT_NEAR(r.tissue_volume_mm3, exact, 1e-3 * exact);  // polyhedral deficit of the UV sphere
    EXPECT_TRUE(r.cavity_names.empty());
    const double err = std::abs(voxel_volume(r, 1) / exact - 1);
    EXPECT_LT(err, tol) << "voxel size " << h;
    EXPECT_LT(err, previous_error);
    previous_error = err;
    std::cout << "[ sphere ] h " << h << " mm: voxel volume error " << 100 * err << " %\n";
  }
}

// The grid of a memory estimate from a config (pipeline/memory_estimate.hpp): the grid
// rasterize_surface allocates, without allocating it; a tiny voxel size is a huge count, no overflow.
TEST_F(SurfacesTest, GridSizeWithoutRasterizingIsTheRasterizedGrid) {
  Surface s = uv_sphere(Vec3(1.3, -2.7, 0.4), 20, 64, 32);
  auto pd = to_vtk(s);
  add_int_array(pd->GetCellData(), "class", std::vector<int>(s.tris.size(), 2));
  const fs::path f = m_dir / "sphere.vtp";
  write_vtp(pd, f);
  surf::RasterizeOptions o;
  o.endocardia.clear();
  for (double h : {2.0, 0.7}) {
    o.voxel_size_mm = h;
    const auto g = surf::rasterize_surface(f, o).labels.grid;
    const Eigen::Vector3d n = surf::surface_grid_size({{f, {}}}, o);
    for (int a = 0; a < 3; ++a) EXPECT_EQ(n[a], double(g.size[std::size_t(a)])) << "h " << h << " axis " << a;
  }
  o.voxel_size_mm = 1e-9;
  const Eigen::Vector3d huge = surf::surface_grid_size({{f, {}}}, o);
  EXPECT_GT(huge.prod(), 1e31);
  EXPECT_TRUE(std::isfinite(huge.prod()));
  EXPECT_THROW(surf::surface_grid_size({{m_dir / "missing.vtp", {}}}, o), cardio::Error);
}

TEST_F(SurfacesTest, ClosedEndocardiumNestedSpheresPointClassesAllFormats) {
  // Outer sphere = epicardium (2), inner closed sphere = LV endocardium (3), per-point classes: the
  // myocardium is the shell (even-odd) and the cavity the inner ball, no lid needed.
  const double R = 20, rin = 12;
  Surface s = uv_sphere(Vec3(0.3, 0.2, -0.1), R, 128, 64);
  const std::size_t n_outer = s.points.size();
  s.append(uv_sphere(Vec3(0.3, 0.2, -0.1), rin, 96, 48));
  std::vector<int> cls(s.points.size(), 3);
  std::fill(cls.begin(), cls.begin() + std::ptrdiff_t(n_outer), 2);
  auto pd = to_vtk(s);
  add_int_array(pd->GetPointData(), "class", cls);
  surf::RasterizeOptions o;
  o.voxel_size_mm = 0.8;
  o.endocardia = {{3, "lv"}};
  const fs::path vtp = m_dir / "nested.vtp", vtk = m_dir / "nested.vtk";
  write_vtp(pd, vtp);
  {
    vtkNew<vtkPolyDataWriter> w;
    w->SetInputData(pd);
    w->SetFileName(vtk.c_str());
    ASSERT_EQ(w->Write(), 1);
  }
  const double shell = sphere_volume(R) - sphere_volume(rin), ball = sphere_volume(rin);
  for (const fs::path& f : {vtp, vtk}) {
    const auto r = surf::rasterize_surface(f, o);
    EXPECT_NEAR(r.tissue_volume_mm3, shell, 2e-3 * shell) << f;
    ASSERT_EQ(r.cavity_volume_mm3.size(), 1u);
    EXPECT_NEAR(r.cavity_volume_mm3[0], ball, 2e-3 * ball);
    EXPECT_EQ(r.endocardium_boundary_edges[0], 0);
    EXPECT_NEAR(voxel_volume(r, 1), shell, 0.02 * shell);
    EXPECT_NEAR(voxel_volume(r, 2), ball, 0.02 * ball);
    // The ball's centre voxel is cavity, a point mid-shell is myocardium.
    const auto c = r.labels.grid.continuous_index(Vec3(0.3, 0.2, -0.1));
    EXPECT_EQ(r.labels.at(std::lround(c[0]), std::lround(c[1]), std::lround(c[2])), 2);
    const auto m = r.labels.grid.continuous_index(Vec3(0.3 + 16, 0.2, -0.1));
    EXPECT_EQ(r.labels.at(std::lround(m[0]), std::lround(m[1]), std::lround(m[2])), 1);
  }
}

TEST_F(SurfacesTest, UnmergedPatchesAreMergedWithinTolerance) {
  const int n = 4;
  Surface cube = split_cube(n, 2e-4);  // vertex copies differ by < 4e-4 mm
  auto pd = to_vtk(cube);
  add_int_array(pd->GetCellData(), "class", std::vector<int>(cube.tris.size(), 2));
  const fs::path f = m_dir / "split_cube.vtp";
  write_vtp(pd, f);
  surf::RasterizeOptions o;
  o.endocardia.clear();
  o.voxel_size_mm = 0.5;
  const auto r = surf::rasterize_surface(f, o);                                           // default tolerance 1e-3 mm
  const std::int64_t unique = (n + 1) * (n + 1) * (n + 1) - (n - 1) * (n - 1) * (n - 1);  // 98
  EXPECT_EQ(r.points, unique);
  EXPECT_EQ(r.merged_points, 6 * (n + 1) * (n + 1) - unique);
  EXPECT_NEAR(r.tissue_volume_mm3, 1000, 1.0);
  EXPECT_NEAR(voxel_volume(r, 1), 1000, 30);

  // Tolerance 0 merges only exact duplicates: the jittered faces stay apart, 4n boundary edges each.
  o.merge_tolerance_mm = 0;
  const std::int64_t expected = boundary_edges_vtk(pd);
  EXPECT_EQ(expected, 6 * 4 * n);
  const std::string msg = error_of(f, o);
  EXPECT_NE(msg.find(std::to_string(expected) + " boundary edges"), std::string::npos) << msg;
  EXPECT_NE(msg.find("split_cube.vtp"), std::string::npos) << msg;
  EXPECT_NE(msg.find("merge tolerance"), std::string::npos) << msg;

  // Exact duplicates merge even at tolerance 0.
  Surface exact = split_cube(n, 0);
  auto pe = to_vtk(exact);
  add_int_array(pe->GetCellData(), "class", std::vector<int>(exact.tris.size(), 2));
  const fs::path fe = m_dir / "exact_cube.vtp";
  write_vtp(pe, fe);
  const auto re = surf::rasterize_surface(fe, o);
  EXPECT_EQ(re.points, unique);
  EXPECT_NEAR(re.tissue_volume_mm3, 1000, 1e-6);
}

TEST_F(SurfacesTest, OpenSurfaceReportsBoundaryEdges) {
  Surface s = uv_sphere(Vec3::Zero(), 10, 64, 32);
  Surface open;
  open.points = s.points;
  for (const Tri& t : s.tris) {
    double zmax = -1e9;
    for (vtkIdType i : t) zmax = std::max(zmax, s.points[std::size_t(i)].z());
    if (zmax < 9.0) open.tris.push_back(t);  // cap removed
  }
  auto pd = to_vtk(open);
  add_int_array(pd->GetCellData(), "class", std::vector<int>(open.tris.size(), 2));
  const fs::path f = m_dir / "open_sphere.vtp";
  write_vtp(pd, f);
  const std::int64_t expected = boundary_edges_vtk(pd);
  ASSERT_EQ(expected, 64);
  surf::RasterizeOptions o;
  o.endocardia.clear();
  const std::string msg = error_of(f, o);
  EXPECT_NE(msg.find("64 boundary edges"), std::string::npos) << msg;
  EXPECT_NE(msg.find("open_sphere.vtp"), std::string::npos) << msg;
  EXPECT_NE(msg.find("epicardium, class 2: 64"), std::string::npos) << msg;
}

// A hole in an endocardium names the cavity: a shell (epicardium r = 20, endocardium r = 10 of
// cavity 'lv') whose inner sphere lost its cap.
TEST_F(SurfacesTest, OpenEndocardiumNamesItsCavity) {
  const Surface outer = uv_sphere(Vec3::Zero(), 20, 64, 32), inner = uv_sphere(Vec3::Zero(), 10, 64, 32);
  Surface shell;
  shell.points = outer.points;
  std::vector<int> cls;
  for (const Tri& t : outer.tris) {
    shell.tris.push_back(t);
    cls.push_back(2);
  }
  const auto offset = vtkIdType(outer.points.size());
  shell.points.insert(shell.points.end(), inner.points.begin(), inner.points.end());
  for (const Tri& t : inner.tris) {
    double zmax = -1e9;
    for (vtkIdType i : t) zmax = std::max(zmax, inner.points[std::size_t(i)].z());
    if (zmax >= 9.0) continue;  // cap removed: 64 open edges on the endocardium
    shell.tris.push_back({t[0] + offset, t[2] + offset, t[1] + offset});
    cls.push_back(3);
  }
  auto pd = to_vtk(shell);
  add_int_array(pd->GetCellData(), "class", cls);
  const fs::path f = m_dir / "open_endocardium.vtp";
  write_vtp(pd, f);
  surf::RasterizeOptions o;
  o.endocardia = {{3, "lv"}};
  const std::string msg = error_of(f, o);
  EXPECT_NE(msg.find("64 boundary edges (cavity 'lv' endocardium, class 3: 64)"), std::string::npos) << msg;
}

TEST_F(SurfacesTest, StlAndPlyAreMyocardiumOnly) {
  const double radius = 15;
  Surface s = uv_sphere(Vec3(-4, 2, 7), radius, 128, 64);
  auto pd = to_vtk(s);
  const fs::path stl = m_dir / "sphere.stl", ply = m_dir / "sphere.ply";
  {
    vtkNew<vtkSTLWriter> w;
    w->SetInputData(pd);
    w->SetFileName(stl.c_str());
    w->SetFileTypeToBinary();
    ASSERT_EQ(w->Write(), 1);
  }
  {
    vtkNew<vtkPLYWriter> w;
    w->SetInputData(pd);
    w->SetFileName(ply.c_str());
    ASSERT_EQ(w->Write(), 1);
  }
  surf::RasterizeOptions o;
  o.voxel_size_mm = 1.0;
  // Cavities requested (the default) but no class array: refused, naming the array and the format.
  const std::string stl_msg = error_of(stl, o);
  EXPECT_NE(stl_msg.find("'class'"), std::string::npos) << stl_msg;
  EXPECT_NE(stl_msg.find("STL"), std::string::npos) << stl_msg;
  EXPECT_NE(stl_msg.find("sphere.stl"), std::string::npos) << stl_msg;
  EXPECT_NE(error_of(ply, o).find("sphere.ply"), std::string::npos);
  o.endocardia.clear();
  for (const fs::path& f : {stl, ply}) {
    const auto r = surf::rasterize_surface(f, o);
    EXPECT_NEAR(r.tissue_volume_mm3, sphere_volume(radius), 3e-3 * sphere_volume(radius)) << f;
    EXPECT_NEAR(voxel_volume(r, 1), sphere_volume(radius), 0.02 * sphere_volume(radius)) << f;
    EXPECT_EQ(r.points, std::int64_t(s.points.size())) << f;
  }
}

TEST_F(SurfacesTest, BadInputsNameTheFileOrArray) {
  surf::RasterizeOptions o;
  std::string msg = error_of(m_dir / "missing.vtp", o);
  EXPECT_NE(msg.find("missing.vtp"), std::string::npos) << msg;
  EXPECT_NE(msg.find("does not exist"), std::string::npos) << msg;

  const fs::path empty = m_dir / "empty.vtp";
  std::ofstream(empty).close();
  msg = error_of(empty, o);
  EXPECT_NE(msg.find("empty.vtp"), std::string::npos) << msg;
  EXPECT_NE(msg.find("empty"), std::string::npos) << msg;

  const fs::path nii = m_dir / "labels.nii";
  std::ofstream(nii) << "not a surface";
  msg = error_of(nii, o);
  EXPECT_NE(msg.find("labels.nii"), std::string::npos) << msg;
  EXPECT_NE(msg.find("unsupported extension"), std::string::npos) << msg;

  const fs::path garbage = m_dir / "garbage.vtp";
  std::ofstream(garbage) << "this is not XML at all\n";
  msg = error_of(garbage, o);
  EXPECT_NE(msg.find("garbage.vtp"), std::string::npos) << msg;

  // A truncated real file passes the header check and fails in the parser.
  if (fs::exists(kBivSurface)) {
    const fs::path trunc = m_dir / "truncated.vtp";
    std::ifstream in(kBivSurface, std::ios::binary);
    std::string head(4000, '\0');
    in.read(head.data(), std::streamsize(head.size()));
    std::ofstream(trunc, std::ios::binary) << head;
    ::testing::internal::CaptureStderr();
    msg = error_of(trunc, o);
    const std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_NE(msg.find("truncated.vtp"), std::string::npos) << msg;
    EXPECT_EQ(msg.find("ERROR: In"), std::string::npos) << msg;
    EXPECT_TRUE(err.empty()) << "VTK printed instead of reporting through the exception: " << err;
  }

  // Legacy VTK file holding an unstructured grid, not polydata.
  const fs::path ug = m_dir / "grid.vtk";
  {
    vtkNew<vtkUnstructuredGrid> g;
    vtkNew<vtkPoints> p;
    p->InsertNextPoint(0, 0, 0);
    g->SetPoints(p);
    vtkNew<vtkUnstructuredGridWriter> w;
    w->SetInputData(g);
    w->SetFileName(ug.c_str());
    ASSERT_EQ(w->Write(), 1);
  }
  msg = error_of(ug, o);
  EXPECT_NE(msg.find("grid.vtk"), std::string::npos) << msg;
  EXPECT_NE(msg.find("polydata"), std::string::npos) << msg;

  // Class array under another name: the message names the expected array and the ones present.
  Surface s = uv_sphere(Vec3::Zero(), 10, 32, 16);
  auto pd = to_vtk(s);
  add_int_array(pd->GetPointData(), "labels", std::vector<int>(s.points.size(), 2));
  const fs::path noclass = m_dir / "noclass.vtp";
  write_vtp(pd, noclass);
  msg = error_of(noclass, o);
  EXPECT_NE(msg.find("noclass.vtp"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'class'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("labels"), std::string::npos) << msg;
  // ... and with the right name but classes that do not match the configuration.
  o.class_array = "labels";
  msg = error_of(noclass, o);
  EXPECT_NE(msg.find("no triangle of endocardium 'lv' class 3"), std::string::npos) << msg;
  EXPECT_NE(msg.find("2 (" + std::to_string(s.tris.size()) + " triangles)"), std::string::npos) << msg;

  // A class that is not configured (here 7) is refused rather than silently ignored.
  std::vector<int> cls(s.tris.size(), 2);
  cls[5] = 7;
  auto pu = to_vtk(s);
  add_int_array(pu->GetCellData(), "class", cls);
  const fs::path unknown = m_dir / "unknown_class.vtp";
  write_vtp(pu, unknown);
  surf::RasterizeOptions ou;
  ou.endocardia.clear();
  msg = error_of(unknown, ou);
  EXPECT_NE(msg.find("unknown_class.vtp"), std::string::npos) << msg;
  EXPECT_NE(msg.find("class 7 of array 'class' is none of the configured patches"), std::string::npos) << msg;

  // Memory guard: the estimate is reported before anything is allocated.
  o.endocardia.clear();
  o.voxel_size_mm = 1e-3;
  msg = error_of(noclass, o);
  EXPECT_NE(msg.find("voxels"), std::string::npos) << msg;
  EXPECT_NE(msg.find("noclass.vtp"), std::string::npos) << msg;
  o.voxel_size_mm = 1;
  o.max_voxels = 1000;
  msg = error_of(noclass, o);
  EXPECT_NE(msg.find("over the limit of 1000 voxels"), std::string::npos) << msg;
}
