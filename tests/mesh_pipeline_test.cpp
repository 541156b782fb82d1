// Images -> hexahedral heart (issue 3 verification): round trips through image formats with an
// oblique direction matrix, rotation equivariance, cavity volume of the Land et al. 2015 LV
// against the analytic truncated ellipsoid, the real biventricular surface and the real CT mask,
// and the written outputs read back with VTK's readers.
#include <gtest/gtest.h>

#include <vtkCellData.h>
#include <vtkDataArray.h>
#include <vtkFieldData.h>
#include <vtkImplicitPolyDataDistance.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkPolyData.h>
#include <vtkStringArray.h>
#include <vtkUnstructuredGrid.h>
#include <vtkXMLPolyDataReader.h>
#include <vtkXMLUnstructuredGridReader.h>
#include <Eigen/Geometry>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "cardio/config/config.hpp"
#include "cardio/core/error.hpp"
#include "cardio/imaging/image_io.hpp"
#include "cardio/phantoms/phantoms.hpp"
#include "config/mesh_config.hpp"
#include "mesh/mesh_stage.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
using namespace cardio;

namespace {

class MeshPipeline : public ::testing::Test {
 public:
  /// Parse a heart config given as YAML text (written into the test dir so relative paths work).
  pipeline::MeshConfig config(const std::string& yaml) {
    const fs::path file = dir / "case.yaml";
    std::ofstream(file) << yaml;
    auto doc = config::Document::load_file(file);
    return pipeline::parse_mesh_config(*doc);
  }
  test_support::TempDir tmp{"cardio_mesh_"};
  fs::path dir = tmp.path();
};

pipeline::MeshStageResult mesh_phantom(const std::string& extra, double h, MeshPipeline& t) {
  std::ostringstream y;
  // The staircase: these tests check voxelization (boundary fitting is tested in meshing_tests).
  y << "geometry:\n  source: phantom\n  boundary_fit: staircase\n  phantom: {voxel_size: " << h << " mm" << extra
    << "}\nfibres: {source: phantom}\n";
  return pipeline::run_mesh_stages(t.config(y.str()));
}

TEST_F(MeshPipeline, LvPhantomCavityVolumeConvergesToTheAnalyticTruncatedEllipsoid) {
  const double exact = phantoms::truncated_ellipsoid_volume(7, 17, 5);
  EXPECT_NEAR(exact, 2492.13, 0.01);  // the value quoted by the benchmark description
  const double exact_tissue = phantoms::truncated_ellipsoid_volume(10, 20, 5) - exact;
  double previous = 1e9, previous_tissue = 1e9;
  for (double h : {2.0, 1.0, 0.5}) {
    const auto r = mesh_phantom("", h, *this);
    ASSERT_EQ(r.mesh.cavities.size(), 1u);
    const double v = meshing::cavity_volume(r.mesh.cavities[0], r.mesh.mesh.rest);
    const double error = std::abs(v - exact) / exact;
    std::cout << "h = " << h << " mm: cavity " << v << " mm^3 (error " << 100 * error << " %), tissue "
              << r.mesh.volume.sum() << " mm^3 (analytic " << exact_tissue << "), elements " << r.mesh.mesh.n_elements()
              << "\n";
    EXPECT_LT(error, previous);
    previous = error;
    EXPECT_TRUE(r.report["cavities"][0]["closed"].get<bool>());
    const double tissue_error = std::abs(r.mesh.volume.sum() - exact_tissue) / exact_tissue;
    EXPECT_LT(tissue_error, previous_tissue);
    previous_tissue = tissue_error;
  }
  EXPECT_LT(previous, 0.03);
  EXPECT_LT(previous_tissue, 0.01);
}

TEST_F(MeshPipeline, RoundTripsThroughImageFormatsWithAnObliqueDirection) {
  phantoms::PhantomSpec spec;
  spec.voxel_size = 1.5;
  spec.rotation = Eigen::AngleAxisd(0.6, Eigen::Vector3d(1, -2, 0.5).normalized()).toRotationMatrix();
  const phantoms::Phantom ph = phantoms::make_phantom(spec);
  const auto direct = mesh_phantom(", rotation_axis: [1, -2, 0.5], rotation_angle: 0.6 rad", 1.5, *this);
  for (const std::string ext : {"nii.gz", "mha", "nrrd"}) {
    const fs::path labels = dir / ("labels." + ext), fibre = dir / ("fibre." + ext), sheet = dir / ("sheet." + ext);
    imaging::write_label_image(ph.labels, labels);
    imaging::write_vector_image(ph.fibre, fibre);
    imaging::write_vector_image(ph.sheet, sheet);
    const auto r = pipeline::run_mesh_stages(
        config("geometry:\n  source: image\n  labels: labels." + ext +
               "\n  boundary_fit: staircase\n  roles: {myocardium: [1], cavities: [{name: lv, labels: [2]}]}\n"
               "fibres: {source: vectors, fibre: fibre." +
               ext + ", sheet: sheet." + ext + "}\n"));
    EXPECT_EQ(r.mesh.mesh.n_elements(), direct.mesh.mesh.n_elements()) << ext;
    EXPECT_EQ(r.mesh.mesh.hexes, direct.mesh.mesh.hexes) << ext;
    // NIfTI stores the geometry in float32: positions agree to ~1e-6 relative.
    EXPECT_LT((r.mesh.mesh.rest - direct.mesh.mesh.rest).cwiseAbs().maxCoeff(), 1e-4) << ext;
    EXPECT_NEAR(r.mesh.volume.sum(), direct.mesh.volume.sum(), 1e-5 * direct.mesh.volume.sum()) << ext;
    // Fibres are stored as float32 vectors.
    EXPECT_LT((r.mesh.mesh.fibre - direct.mesh.mesh.fibre).cwiseAbs().maxCoeff(), 1e-6) << ext;
  }
}

TEST_F(MeshPipeline, MeshOfARotatedImageIsTheRotatedMesh) {
  const Eigen::Matrix3d R = Eigen::AngleAxisd(0.9, Eigen::Vector3d(0.2, 1, -0.4).normalized()).toRotationMatrix();
  const auto plain = mesh_phantom("", 2.0, *this);
  const auto rotated = mesh_phantom(", rotation_axis: [0.2, 1, -0.4], rotation_angle: 0.9 rad", 2.0, *this);
  ASSERT_EQ(plain.mesh.mesh.hexes, rotated.mesh.mesh.hexes);
  EXPECT_LT((R * plain.mesh.mesh.rest - rotated.mesh.mesh.rest).cwiseAbs().maxCoeff(), 1e-10);
  EXPECT_LT((R * plain.mesh.mesh.fibre - rotated.mesh.mesh.fibre).cwiseAbs().maxCoeff(), 1e-6);
  EXPECT_EQ(plain.mesh.surface_tag, rotated.mesh.surface_tag);
  EXPECT_NEAR(meshing::cavity_volume(plain.mesh.cavities[0], plain.mesh.mesh.rest),
              meshing::cavity_volume(rotated.mesh.cavities[0], rotated.mesh.mesh.rest), 1e-9);
}

TEST_F(MeshPipeline, OutputsAreReadByVtkWithTheirFields) {
  const auto r = mesh_phantom("", 2.0, *this);
  pipeline::write_mesh_outputs(dir, r, true);
  vtkNew<vtkXMLUnstructuredGridReader> reader;
  reader->SetFileName((dir / "mesh.vtu").c_str());
  reader->Update();
  vtkUnstructuredGrid* g = reader->GetOutput();
  ASSERT_EQ(g->GetNumberOfCells(), r.mesh.mesh.n_elements());
  ASSERT_EQ(g->GetNumberOfPoints(), r.mesh.mesh.n_nodes());
  for (const char* name : {"label", "fibre", "sheet", "normal", "volume"})
    EXPECT_NE(g->GetCellData()->GetArray(name), nullptr) << name;
  ASSERT_NE(g->GetPointData()->GetArray("mass"), nullptr);
  double mass = 0;
  for (vtkIdType i = 0; i < g->GetNumberOfPoints(); ++i) mass += g->GetPointData()->GetArray("mass")->GetTuple1(i);
  EXPECT_NEAR(mass, 1.06 * r.mesh.volume.sum(), 1e-9 * mass);
  auto* units = vtkStringArray::SafeDownCast(g->GetFieldData()->GetAbstractArray("units"));
  ASSERT_NE(units, nullptr);
  EXPECT_EQ(units->GetValue(2), "mass: mg");
  // normal = fibre x sheet in the file.
  auto* f = g->GetCellData()->GetArray("fibre");
  auto* s = g->GetCellData()->GetArray("sheet");
  auto* n = g->GetCellData()->GetArray("normal");
  for (vtkIdType c = 0; c < g->GetNumberOfCells(); c += 97) {
    const Eigen::Vector3d fc(f->GetTuple3(c)), sc(s->GetTuple3(c)), nc(n->GetTuple3(c));
    EXPECT_LT((fc.cross(sc) - nc).norm(), 1e-12);
  }

  vtkNew<vtkXMLPolyDataReader> surf;
  surf->SetFileName((dir / "surfaces.vtp").c_str());
  surf->Update();
  EXPECT_EQ(surf->GetOutput()->GetNumberOfCells(), vtkIdType(r.mesh.surface_quads.size()));
  EXPECT_NE(surf->GetOutput()->GetCellData()->GetArray("tag"), nullptr);
  auto* names = vtkStringArray::SafeDownCast(surf->GetOutput()->GetFieldData()->GetAbstractArray("tag_names"));
  ASSERT_NE(names, nullptr);
  EXPECT_EQ(names->GetValue(2), "endocardium_lv");

  vtkNew<vtkXMLPolyDataReader> cav;
  cav->SetFileName((dir / "cavity_lv.vtp").c_str());
  cav->Update();
  EXPECT_EQ(cav->GetOutput()->GetNumberOfCells(), vtkIdType(r.mesh.cavities[0].triangles.size()));

  std::ifstream report(dir / "mesh_report.json");
  const auto j = nlohmann::json::parse(report);
  for (const char* key : {"element_count", "node_count", "tissue_volume_mL", "cavities", "fibre_source", "islands"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(j["element_count"].get<long>(), r.mesh.mesh.n_elements());
  EXPECT_NEAR(j["cavities"][0]["cavity_volume_mL"].get<double>(),
              meshing::cavity_volume(r.mesh.cavities[0], r.mesh.mesh.rest) / 1000, 1e-12);
}

/// Volumes of a mesh against the surface it came from: tissue and each cavity, as mesh / surface.
std::map<std::string, double> volume_ratios(const pipeline::MeshStageResult& r) {
  const auto& src = r.report["source"];
  std::map<std::string, double> out{
      {"tissue", r.report["tissue_volume_mL"].get<double>() / src["surface_tissue_volume_mL"].get<double>()}};
  for (const auto& c : r.report["cavities"])
    out[c["name"]] = c["cavity_volume_mL"].get<double>() /
                     src["surface_cavity_volume_mL"][c["name"].get<std::string>()].get<double>();
  return out;
}

TEST_F(MeshPipeline, RealBiventricularSurfaceRasterizesWithClosedCavitiesAndRuleFibres) {
  // Bai et al. 2015 mean shape as adapted by Schuler et al. (KIT-IBT/Cobiveco, Apache-2.0); data/README.md.
  // Fitted (the default) and staircase: both within 1.5 % of the surface's own enclosed volumes
  // (the divergence theorem on the source triangles); the fitted boundary on the surface.
  const std::string yaml = "fibres: {source: rule}\ngeometry:\n  source: surface\n  surface: {file: " CARDIO_SOURCE_DIR
                           "/data/biv_meanshape_surface.vtp, voxel_size: 1.5 mm}\n";
  const auto fitted = pipeline::run_mesh_stages(config(yaml));
  const auto staircase = pipeline::run_mesh_stages(config(yaml + "  boundary_fit: staircase\n"));
  EXPECT_EQ(fitted.report["boundary_fit"]["method"], "smooth");
  EXPECT_EQ(fitted.report["boundary_fit"]["surface"], "source surface patches");
  EXPECT_GT(fitted.report["boundary_fit"]["fitted_nodes"].get<long>(), 1000);
  EXPECT_GT(fitted.report["boundary_fit"]["min_corner_jacobian_ratio"].get<double>(), 0.0);
  const auto f = volume_ratios(fitted), s = volume_ratios(staircase);
  ASSERT_EQ(f.size(), 3u);
  for (const auto& [name, ratio] : f) {
    std::cout << name << ": fitted " << ratio << ", staircase " << s.at(name) << " of the surface's volume\n";
    EXPECT_NEAR(ratio, 1.0, 0.015) << name;
    EXPECT_NEAR(s.at(name), 1.0, 0.015) << name;
  }
  // The fitted boundary lies on the source surface: distances of the boundary nodes to it, by
  // VTK's implicit distance (not the fit's own locator), median and 90th percentile.
  auto distances = [&](const pipeline::MeshStageResult& r) {
    vtkNew<vtkXMLPolyDataReader> reader;
    reader->SetFileName(CARDIO_SOURCE_DIR "/data/biv_meanshape_surface.vtp");
    reader->Update();
    vtkNew<vtkImplicitPolyDataDistance> distance;
    distance->SetInput(reader->GetOutput());
    const auto& m = r.mesh;
    const auto base = std::find(m.tag_names.begin(), m.tag_names.end(), "base") - m.tag_names.begin();
    std::set<std::int32_t> on_base, on_wall;
    for (std::size_t q = 0; q < m.surface_quads.size(); ++q)
      for (std::int32_t n : m.surface_quads[q]) (m.surface_tag[q] == base ? on_base : on_wall).insert(n);
    std::vector<double> d;
    for (std::int32_t n : on_wall)
      if (!on_base.count(n)) {
        Eigen::Vector3d p = m.mesh.rest.col(n);
        d.push_back(std::abs(distance->EvaluateFunction(p.data())));
      }
    std::sort(d.begin(), d.end());
    return std::pair{d[d.size() / 2], d[d.size() * 9 / 10]};
  };
  const auto [f50, f90] = distances(fitted);
  const auto [s50, s90] = distances(staircase);
  std::cout << "boundary nodes off the source surface [mm]: fitted median " << f50 << ", p90 " << f90
            << "; staircase median " << s50 << ", p90 " << s90 << "\n";
  // Not zero: where a node's move would flatten an element below 5 % of its rest corner Jacobian it
  // is scaled back (meshing/boundary_fit.hpp), which at 1.5 mm in thin walls is common.
  EXPECT_LT(f50, 0.6 * s50);
  EXPECT_LT(f90, 0.6 * s90);
  ASSERT_EQ(fitted.mesh.cavities.size(), 2u);
  for (const auto& c : fitted.report["cavities"]) EXPECT_TRUE(c["closed"].get<bool>());
  EXPECT_EQ(fitted.report["fibre_source"], "rule");
}

TEST_F(MeshPipeline, LabelImageIsFittedToItsSmoothedContours) {
  // The Land LV phantom written as a label image: its smooth surfaces are known (truncated
  // ellipsoids), so the fitted image mesh is checked against the analytic volumes, not the phantom path.
  phantoms::PhantomSpec spec;
  spec.voxel_size = 1.0;
  imaging::write_label_image(phantoms::make_phantom(spec).labels, dir / "labels.nrrd");
  const std::string yaml =
      "fibres: {source: rule}\ngeometry:\n  source: image\n  labels: labels.nrrd\n"
      "  roles: {myocardium: [1], cavities: [{name: lv, labels: [2]}]}\n";
  const auto fitted = pipeline::run_mesh_stages(config(yaml));
  const auto staircase = pipeline::run_mesh_stages(config(yaml + "  boundary_fit: staircase\n"));
  EXPECT_EQ(fitted.report["boundary_fit"]["method"], "smooth");
  EXPECT_GT(fitted.report["boundary_fit"]["fitted_nodes"].get<long>(), 1000);
  const double cavity = phantoms::truncated_ellipsoid_volume(7, 17, 5);
  const double tissue = phantoms::truncated_ellipsoid_volume(10, 20, 5) - cavity;
  auto errors = [&](const pipeline::MeshStageResult& r) {
    return std::pair{meshing::cavity_volume(r.mesh.cavities.at(0), r.mesh.mesh.rest) / cavity - 1,
                     r.mesh.volume.sum() / tissue - 1};
  };
  const auto [fc, ft] = errors(fitted);
  const auto [sc, st] = errors(staircase);
  std::cout << "cavity error: fitted " << 100 * fc << " %, staircase " << 100 * sc << " %; tissue: fitted " << 100 * ft
            << " %, staircase " << 100 * st << " %\n";
  EXPECT_LT(std::abs(fc), 0.01);
  // The tissue: the 1 mm label image itself holds 1.2 % too little (its staircase volume), and the
  // smoothed contours keep the labels' volume, so the fitted mesh follows it (measured -0.64 %
  // with two fitting passes, staircase -1.20 %).
  EXPECT_LT(std::abs(ft), 0.015);
  EXPECT_LE(std::abs(ft), std::abs(st));
  // The fitted LV endocardial nodes lie closer to the analytic ellipsoid
  // (x^2 + y^2)/7^2 + z^2/17^2 = 1 than the staircase's: median and 90th percentile distance.
  auto distances = [](const pipeline::MeshStageResult& r) {
    const auto& m = r.mesh;
    const auto lv = std::find(m.tag_names.begin(), m.tag_names.end(), "endocardium_lv") - m.tag_names.begin();
    const auto base = std::find(m.tag_names.begin(), m.tag_names.end(), "base") - m.tag_names.begin();
    std::set<std::int32_t> on_base, on_lv;
    for (std::size_t q = 0; q < m.surface_quads.size(); ++q)
      for (std::int32_t n : m.surface_quads[q]) {
        if (m.surface_tag[q] == base) on_base.insert(n);
        if (m.surface_tag[q] == lv) on_lv.insert(n);
      }
    std::vector<double> dist;
    for (std::int32_t n : on_lv) {
      if (on_base.count(n)) continue;  // the rim: on the base plane, not on the ellipsoid
      const Eigen::Vector3d p = m.mesh.rest.col(n);
      // Distance along the normal ~ (level - 1) / |grad level| for a level set close to 1.
      const double level = (p.x() * p.x() + p.y() * p.y()) / 49 + p.z() * p.z() / 289;
      const Eigen::Vector3d grad(2 * p.x() / 49, 2 * p.y() / 49, 2 * p.z() / 289);
      dist.push_back(std::abs(level - 1) / grad.norm());
    }
    std::sort(dist.begin(), dist.end());
    return std::pair{dist[dist.size() / 2], dist[dist.size() * 9 / 10]};
  };
  const auto [f50, f90] = distances(fitted);
  const auto [s50, s90] = distances(staircase);
  std::cout << "LV endocardial nodes off the ellipsoid [mm]: fitted median " << f50 << ", p90 " << f90
            << "; staircase median " << s50 << ", p90 " << s90 << "\n";
  EXPECT_LT(f50, 0.7 * s50);
  EXPECT_LT(f90, 0.7 * s90);
}

/// The NRRD header of the real CT mask, parsed here independently of ITK.
struct NrrdGeometry {
  Eigen::Vector3d origin;
  Eigen::Matrix3d axes;  ///< columns: space directions (spacing included)
};
NrrdGeometry read_nrrd_header(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  NrrdGeometry g;
  std::string line;
  const std::regex vec(R"(\(([-0-9.eE+]+),([-0-9.eE+]+),([-0-9.eE+]+)\))");
  while (std::getline(in, line) && !line.empty()) {
    std::vector<Eigen::Vector3d> v;
    for (auto it = std::sregex_iterator(line.begin(), line.end(), vec); it != std::sregex_iterator(); ++it)
      v.emplace_back(std::stod((*it)[1]), std::stod((*it)[2]), std::stod((*it)[3]));
    if (line.rfind("space origin:", 0) == 0) g.origin = v.at(0);
    if (line.rfind("space directions:", 0) == 0)
      for (int a = 0; a < 3; ++a) g.axes.col(a) = v.at(std::size_t(a));
  }
  return g;
}

TEST_F(MeshPipeline, RealCtMaskKeepsItsPhysicalGeometry) {
  // LIDC-IDRI case via AIM-Harvard/DeepCAC (CC BY 3.0); data/README.md. LPS, 0.68 x 0.68 x 2.5 mm.
  const fs::path file = CARDIO_SOURCE_DIR "/data/ct_heart_mask_0187.nrrd";
  const auto r = pipeline::run_mesh_stages(
      config("geometry:\n  source: image\n  labels: " + file.string() +
             "\n  roles: {myocardium: [1]}\n  islands: keep\n  boundary_fit: staircase\n"
             "fibres: {source: uniform, direction: [0, 0, 1], sheet_direction: [1, 0, 0]}\n"));
  // Bounding box of the label-1 voxels' corners, from the header's own geometry.
  const NrrdGeometry h = read_nrrd_header(file);
  const imaging::LabelVolume labels = imaging::read_label_image(file);
  Eigen::Vector3d lo = Eigen::Vector3d::Constant(1e300), hi = -lo;
  long count = 0;
  for (long k = 0; k < labels.grid.size[2]; ++k)
    for (long j = 0; j < labels.grid.size[1]; ++j)
      for (long i = 0; i < labels.grid.size[0]; ++i) {
        if (labels.at(i, j, k) != 1) continue;
        ++count;
        for (int c = 0; c < 8; ++c) {
          const Eigen::Vector3d idx(i + ((c & 1) ? 0.5 : -0.5), j + ((c & 2) ? 0.5 : -0.5), k + ((c & 4) ? 0.5 : -0.5));
          const Eigen::Vector3d x = h.origin + h.axes * idx;
          lo = lo.cwiseMin(x);
          hi = hi.cwiseMax(x);
        }
      }
  EXPECT_EQ(r.mesh.mesh.n_elements(), count);
  const Eigen::Vector3d mlo = r.mesh.mesh.rest.rowwise().minCoeff(), mhi = r.mesh.mesh.rest.rowwise().maxCoeff();
  EXPECT_LT((mlo - lo).cwiseAbs().maxCoeff(), 1e-6) << mlo.transpose() << " vs " << lo.transpose();
  EXPECT_LT((mhi - hi).cwiseAbs().maxCoeff(), 1e-6) << mhi.transpose() << " vs " << hi.transpose();
  EXPECT_NEAR(r.mesh.volume.sum(), count * std::abs(h.axes.determinant()), 1e-6 * r.mesh.volume.sum());
  EXPECT_NEAR(r.report["tissue_volume_mL"].get<double>(), 658, 0.01 * 658);  // data/README.md: about 658 mL
}

TEST_F(MeshPipeline, BadInputsAreClearErrors) {
  const auto expect_error = [&](const std::string& yaml, const std::string& needle) {
    try {
      pipeline::run_mesh_stages(config(yaml));
      ADD_FAILURE() << "expected an error containing '" << needle << "'";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  // No voxel with the selected labels: the labels present are listed.
  phantoms::PhantomSpec spec;
  spec.voxel_size = 2;
  const auto ph = phantoms::make_phantom(spec);
  imaging::write_label_image(ph.labels, dir / "labels.nii.gz");
  expect_error("geometry: {source: image, labels: labels.nii.gz, roles: {myocardium: [7]}}\n", "labels present");
  // Label and fibre images on different grids.
  auto shifted = ph.fibre;
  shifted.grid.origin += Eigen::Vector3d(0.5, 0, 0);
  imaging::write_vector_image(shifted, dir / "fibre.nii.gz");
  expect_error(
      "geometry: {source: image, labels: labels.nii.gz, roles: {myocardium: [1], cavities: [{name: lv, labels: "
      "[2]}]}}\n"
      "fibres: {source: vectors, fibre: fibre.nii.gz}\n",
      "origin");
  // Fibre vectors with NaN or zero length inside the myocardium: count and first voxel, or filled by rule.
  auto holes = ph.fibre;
  long n_holes = 0;
  for (std::size_t v = 0; v < holes.values.size() && n_holes < 5; ++v)
    if (ph.labels.values[v] == 1) {
      holes.values[v] = n_holes % 2 ? Eigen::Vector3f::Zero() : Eigen::Vector3f::Constant(std::nanf(""));
      ++n_holes;
    }
  imaging::write_vector_image(holes, dir / "holes.nii.gz");
  const std::string with_holes =
      "geometry: {source: image, labels: labels.nii.gz, roles: {myocardium: [1], cavities: [{name: lv, labels: "
      "[2]}]}}\n"
      "fibres: {source: vectors, fibre: holes.nii.gz";
  expect_error(with_holes + "}\n", "5 ");
  const auto filled = pipeline::run_mesh_stages(config(with_holes + ", missing: rule}\n"));
  EXPECT_EQ(filled.report["fibre_voxels_filled_by_rule"].get<long>(), 5);
  // A missing file.
  expect_error("geometry: {source: image, labels: nothing.nii.gz, roles: {myocardium: [1]}}\n", "nothing.nii.gz");
  // An element size that would exceed the memory: the estimate is in the message.
  expect_error(
      "geometry: {source: image, labels: labels.nii.gz, element_size: 0.001 mm, roles: {myocardium: [1], cavities: "
      "[{name: lv, labels: [2]}]}}\n",
      "GB");
}

}  // namespace
