// Pacing at an anatomical place (activation.sites: {apex: CAVITY}): the site is the cavity's
// endocardial apex found on the mesh, so a config paces the same place on any heart, whatever the
// image's coordinates. Checked against the LV phantom's analytic apex (0, 0, -17) mm, and on the real
// biventricular surface turned and moved, where a fixed point would no longer be on the heart.
#include <gtest/gtest.h>
#include <vtkNew.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>
#include <vtkXMLPolyDataReader.h>
#include <vtkXMLPolyDataWriter.h>

#include <fstream>
#include <iostream>
#include <iterator>

#include "cardio/config/config.hpp"
#include "cardio/core/error.hpp"
#include "config/heart_config.hpp"
#include "heart/beat_loop.hpp"
#include "mesh/mesh_stage.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
using namespace cardio;

namespace {

std::string config_text(const std::string& name) {
  std::ifstream in(std::string(CARDIO_SOURCE_DIR) + "/configs/" + name);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

/// `text` with its one line that contains `marker` replaced by `line`.
std::string with_line(std::string text, const std::string& marker, const std::string& line) {
  const auto at = text.find(marker);
  EXPECT_NE(at, std::string::npos) << "no line with '" << marker << "'";
  const auto begin = text.rfind('\n', at) + 1, end = text.find('\n', at);
  return text.replace(begin, end - begin, line);
}

/// The centre [mm] of the element activated first, and the activation times, for a config text.
struct FirstActivated {
  Eigen::Vector3d centre;
  double time_ms;
};

FirstActivated first_activated(const std::string& yaml, const std::string& name,
                               const std::vector<std::string>& overrides) {
  auto doc = config::Document::load_string(yaml, name);
  for (const auto& o : overrides) doc->set_override(o);
  const pipeline::HeartConfig cfg = pipeline::parse_heart_config(*doc);
  const pipeline::MeshStageResult mesh = pipeline::run_mesh_stages(cfg.mesh);
  const pipeline::BeatSetup setup = pipeline::prepare_heart_beat(*cfg.simulation, mesh.mesh, nullptr);
  Eigen::Index e = 0;
  const double t = setup.activation_time.minCoeff(&e);
  Eigen::Vector3d c = Eigen::Vector3d::Zero();
  for (const std::int32_t n : mesh.mesh.mesh.hexes[e]) c += mesh.mesh.mesh.rest.col(n) / 8.0;
  return {c, t};
}

const std::string kApexSite = "    - {apex: lv, time: 0 ms}";

}  // namespace

TEST(PacingSite, TheLvApexOfThePhantomIsItsAnalyticEndocardialApex) {
  const std::string yaml = with_line(config_text("lv_phantom.yaml"), "apical pacing", kApexSite);
  const FirstActivated first =
      first_activated(yaml, "lv_phantom.yaml (apex site)", {"geometry.phantom.voxel_size=2 mm"});
  EXPECT_EQ(first.time_ms, 0.0);
  // Land et al. 2015: the endocardium's long semi-axis is 17 mm, on the z axis. The first element
  // touches the apex node: its centre is within half a voxel diagonal (1.73 mm), plus the boundary fit.
  EXPECT_LT((first.centre - Eigen::Vector3d(0, 0, -17)).norm(), 2.5) << first.centre.transpose();
}

TEST(PacingSite, FollowsTheHeartWhenItIsTurnedAndMoved) {
  test_support::TempDir dir("cardio_pacing_");
  // The real biventricle turned by 90 degrees about x (its long axis then lies along y) and moved by
  // 300 mm: the point site of configs/biv_calibrated.yaml before 2026-12-05 is then far off the heart.
  vtkNew<vtkXMLPolyDataReader> reader;
  reader->SetFileName((std::string(CARDIO_SOURCE_DIR) + "/data/biv_meanshape_surface.vtp").c_str());
  reader->Update();
  vtkPolyData* surface = reader->GetOutput();
  const Eigen::Vector3d shift(300, -120, 40);
  auto move = [&](const Eigen::Vector3d& p) -> Eigen::Vector3d {
    return Eigen::Vector3d(p.x(), -p.z(), p.y()) + shift;
  };
  vtkPoints* points = surface->GetPoints();
  for (vtkIdType i = 0; i < points->GetNumberOfPoints(); ++i) {
    double p[3];
    points->GetPoint(i, p);
    const Eigen::Vector3d q = move(Eigen::Vector3d(p[0], p[1], p[2]));
    points->SetPoint(i, q.x(), q.y(), q.z());
  }
  const fs::path moved = dir.path() / "moved.vtp";
  vtkNew<vtkXMLPolyDataWriter> writer;
  writer->SetFileName(moved.c_str());
  writer->SetInputData(surface);
  ASSERT_EQ(writer->Write(), 1);

  const std::string data = std::string(CARDIO_SOURCE_DIR) + "/data/biv_meanshape_surface.vtp";
  const std::string yaml = with_line(config_text("biv_calibrated.yaml"), "file: ../data/", "    file: " + data);
  const std::vector<std::string> coarse = {"geometry.surface.voxel_size=4 mm"};
  const FirstActivated original = first_activated(yaml, "biv_calibrated.yaml", coarse);
  const std::string moved_yaml = with_line(yaml, "file: " + data, "    file: " + moved.string());
  const FirstActivated turned = first_activated(moved_yaml, "biv_calibrated.yaml (moved)", coarse);
  EXPECT_EQ(turned.time_ms, 0.0);
  // The voxel grid does not turn with the heart, so the meshes differ by up to a voxel at the apex.
  std::cout << "first activated element of the turned heart: " << (turned.centre - move(original.centre)).norm()
            << " mm from the original's, turned and moved\n";
  EXPECT_LT((turned.centre - move(original.centre)).norm(), 4.0 * std::sqrt(3.0))
      << "turned " << turned.centre.transpose() << ", original moved " << move(original.centre).transpose();
}

TEST(PacingSite, AnUnknownCavityIsNamedWithTheMeshsCavities) {
  const std::string yaml = with_line(config_text("lv_phantom.yaml"), "apical pacing", "    - {apex: la, time: 0 ms}");
  try {
    first_activated(yaml, "lv_phantom.yaml (apex of la)", {"geometry.phantom.voxel_size=2 mm"});
    FAIL() << "a site at the apex of a cavity the mesh does not have was accepted";
  } catch (const Error& e) {
    EXPECT_HAS(e.what(), ".apex: no cavity 'la' in the mesh (its cavities: lv)");
  }
}

TEST(PacingSite, APointAndAnApexTogetherAreRefused) {
  const std::string yaml =
      with_line(config_text("lv_phantom.yaml"), "apical pacing", "    - {apex: lv, point: [0 mm, 0 mm, -18 mm]}");
  auto doc = config::Document::load_string(yaml, "lv_phantom.yaml (two sites in one)");
  try {
    pipeline::parse_heart_config(*doc);
    FAIL() << "a site with both point and apex was accepted";
  } catch (const Error& e) {
    EXPECT_HAS(e.what(), "give exactly one of point, label or apex");
  }
}
