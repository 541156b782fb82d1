// The 3-D ventricles in the closed loop (closed_loop_coupling.hpp), on a small voxel cavity whose
// wall is tethered to a rest shape that shrinks with a twitch (a stand-in for the myocardium):
// blood volume conserved, the 3-D volume equal to the loop's ventricle volume after every step,
// isovolumic phases with both valves closed, and a checkpoint that continues bit for bit.
#include <gtest/gtest.h>

#include <cmath>

#include "cardio/circulation/closed_loop_coupling.hpp"
#include "cardio/circulation/volume_constraint.hpp"
#include "test_meshes.hpp"

namespace cardio::circulation {
namespace {

/// The wall: nodes pulled by springs k towards the rest shape shrunk by (1 - 0.4 e(t)) about its
/// centroid (e: the 0-D LV activation), with mass-proportional damping; semi-implicit Euler.
struct TetheredWall {
  const meshing::VoxelMesh& mesh;
  ClosedLoopCoupling& coupling;
  Eigen::Matrix3Xd x, v;
  Eigen::VectorXd mass;
  Eigen::Vector3d centre;
  double k = 50.0;  // mN/mm per node

  TetheredWall(const meshing::VoxelMesh& m, ClosedLoopCoupling& c)
      : mesh(m), coupling(c), x(m.mesh.rest), v(Eigen::Matrix3Xd::Zero(3, m.mesh.rest.cols())) {
    mass = Eigen::VectorXd::Constant(x.cols(), 2.0);
    centre = m.mesh.rest.rowwise().mean();
  }

  /// The step; returns the coupling's end-of-step volume of the 3-D LV [mm^3].
  double step(double dt) {
    const ClosedLoopParams& p = coupling.loop().params();
    const double shrink = 1 - 0.4 * chamber_activation(p.left_ventricle, coupling.loop().time_ms(), p.period_ms);
    const Eigen::Matrix3Xd target =
        (centre * Eigen::RowVectorXd::Ones(x.cols())) + shrink * (mesh.mesh.rest.colwise() - centre);
    for (Eigen::Index n = 0; n < x.cols(); ++n) v.col(n) += dt * (-k * (x.col(n) - target.col(n))) / mass[n];
    v *= std::exp(-dt / 5.0);
    const Eigen::Vector2d begin(cavity_volume_mm3(mesh.cavities[0], x) / kMm3PerMl, 0.0);  // at the step's start
    x += dt * v;
    const Eigen::Vector2d end_mm3 = coupling.project(mass, Eigen::Matrix3Xd(), dt, begin, x, v);
    coupling.advance(dt);
    return end_mm3[0];
  }
};

ClosedLoopParams small_heart_loop() {
  // The reference set with its vessels and atria scaled down 10^4 x in volume (compliances / 1e4,
  // resistances and elastances x 1e4), so that a cavity of a few tens of mm^3 fills and ejects.
  ClosedLoopParams p = ClosedLoopParams::regazzoni2022();
  for (ChamberParams* c : {&p.left_atrium, &p.right_atrium, &p.left_ventricle, &p.right_ventricle}) {
    c->active_elastance_mmHg_per_mL *= 1e4;
    c->passive_elastance_mmHg_per_mL *= 1e4;
    c->rest_volume_mL /= 1e4;
  }
  for (VesselParams* v : {&p.systemic_arteries, &p.systemic_veins, &p.pulmonary_arteries, &p.pulmonary_veins}) {
    v->compliance_mL_per_mmHg /= 1e4;
    v->resistance_mmHg_ms_per_mL *= 1e4;
    v->inductance_mmHg_ms2_per_mL *= 1e4;
  }
  p.valves.open_resistance_mmHg_ms_per_mL *= 1e4;
  p.valves.closed_resistance_mmHg_ms_per_mL *= 1e4;
  return p;
}

ClosedLoopState small_heart_state(const ClosedLoopParams& p) {
  ClosedLoopState s = ClosedLoopState::regazzoni2022(p);
  for (Compartment c :
       {Compartment::left_atrium, Compartment::left_ventricle, Compartment::right_atrium, Compartment::right_ventricle})
    s.volume_mL[std::size_t(c)] /= 1e4;
  return s;
}

TEST(ClosedLoop3D, BloodVolumeIsConservedAndTheCavityFollowsTheLoop) {
  const meshing::VoxelMesh mesh = testing::open_box_mesh({9, 8, 7}, {1.0, 1.0, 1.0});
  const ClosedLoopParams params = small_heart_loop();
  ClosedLoopCoupling coupling(params, small_heart_state(params), {&mesh.cavities[0], nullptr}, mesh.mesh.rest);
  TetheredWall wall(mesh, coupling);
  const double blood0 = coupling.blood_volume_mL(wall.x), dt = 0.05;
  double max_drift = 0, max_mismatch = 0, max_returned_error = 0, v_min = 1e9, v_max = 0, isovolumic_change = 0;
  bool ejected = false;
  for (int n = 0; n < int(2 * params.period_ms / dt); ++n) {
    const double v_before = cavity_volume_mm3(mesh.cavities[0], wall.x) / kMm3PerMl;
    const double returned_mm3 = wall.step(dt);
    const double v3d = cavity_volume_mm3(mesh.cavities[0], wall.x) / kMm3PerMl;
    // The returned volume (the projection path's cubic) is the moved surface's, summed afresh.
    max_returned_error = std::max(max_returned_error, std::abs(returned_mm3 / kMm3PerMl - v3d) / v3d);
    const ClosedLoop& loop = coupling.loop();
    max_drift = std::max(max_drift, std::abs(coupling.blood_volume_mL(wall.x) - blood0) / blood0);
    max_mismatch = std::max(max_mismatch, std::abs(v3d - loop.volume_mL(Compartment::left_ventricle)) / v3d);
    // Mitral and aortic valves are never open together; with both closed the volume holds (the
    // closed resistance leaks ~1e-7 of the flow).
    EXPECT_FALSE(loop.valve_open(Valve::mitral) && loop.valve_open(Valve::aortic)) << "t " << loop.time_ms();
    if (!loop.valve_open(Valve::mitral) && !loop.valve_open(Valve::aortic))
      isovolumic_change = std::max(isovolumic_change, std::abs(v3d - v_before) / v3d);
    ejected = ejected || loop.valve_open(Valve::aortic);
    v_min = std::min(v_min, v3d);
    v_max = std::max(v_max, v3d);
  }
  EXPECT_LT(max_drift, 1e-9);
  EXPECT_LT(max_mismatch, 1e-9);
  EXPECT_LT(max_returned_error, 1e-12);
  EXPECT_LT(isovolumic_change, 1e-6);
  EXPECT_TRUE(ejected) << "the stand-in ventricle never opened its aortic valve";
  EXPECT_GT((v_max - v_min) / v_max, 0.05) << "stroke volume " << v_max - v_min << " mL";
}

TEST(ClosedLoop3D, CheckpointContinuesBitForBit) {
  const meshing::VoxelMesh mesh = testing::open_box_mesh({9, 8, 7}, {1.0, 1.0, 1.0});
  const ClosedLoopParams params = small_heart_loop();
  ClosedLoopCoupling a(params, small_heart_state(params), {&mesh.cavities[0], nullptr}, mesh.mesh.rest);
  ClosedLoopCoupling b = a;
  TetheredWall wa(mesh, a);
  for (int n = 0; n < 3000; ++n) wa.step(0.05);
  BinaryWriter w;
  a.save(w);
  BinaryReader r(w.bytes(), "test");
  b.restore(r);
  TetheredWall wb(mesh, b);
  wb.x = wa.x;
  wb.v = wa.v;
  for (int n = 0; n < 2000; ++n) {
    wa.step(0.05);
    wb.step(0.05);
  }
  EXPECT_EQ(a.pressures_mmHg(), b.pressures_mmHg());
  EXPECT_EQ(a.loop().total_volume_mL(), b.loop().total_volume_mL());
  EXPECT_EQ((wa.x - wb.x).cwiseAbs().maxCoeff(), 0.0);
}

}  // namespace
}  // namespace cardio::circulation
