// Determinism: the same block experiment gives bit-identical states at 1 and 2 threads.
#include <gtest/gtest.h>

#include <cstring>

#include "cardio/core/parallel.hpp"
#include "cardio/mechanics/integrators.hpp"
#include "test_support.hpp"

namespace cardio::mechanics {
namespace {

Eigen::Matrix3Xd run_block(int threads, bool baudet) {
  const int previous = thread_count();
  set_thread_count(threads);
  FibreField ff;
  ff.kind = FibreField::Kind::random;
  // Large enough that the element schedule has many chunks to spread over the threads.
  const HexMesh mesh = make_block({24, 12, 12, 1.0, Eigen::Vector3d::Zero()}, ff);
  std::unique_ptr<InternalForces> model;
  BCCalibration opt;
  opt.damping_time = 0.05;
  opt.radial_share = 0.3;
  if (baudet)
    model = std::make_unique<BaudetCubeForces>(mesh, std::vector<BaudetConstants>{calibrate_baudet(10, 0.4, 1.0, 0.05)});
  else
    model = std::make_unique<BourguignonCaniForces>(mesh, std::vector<BCModuli>{testing::bc_iso(10, 0.4, opt)});
  MassSpringSystem sys(mesh, std::move(model), lumped_masses(mesh, {1.06}));
  DofConstraint clamp;
  for (std::int32_t n = 0; n < mesh.n_nodes(); ++n)
    if (mesh.rest(0, n) == 0) clamp.nodes.push_back(n);
  sys.constraints = {clamp};
  sys.update_constraint_mask();
  sys.loads.gravity = Eigen::Vector3d(0, 0, -0.01);
  const auto boundary = boundary_faces(mesh);
  std::vector<Quad> top;
  for (const Quad& q : boundary)
    if (mesh.rest(2, q[0]) == 12 && mesh.rest(2, q[1]) == 12 && mesh.rest(2, q[2]) == 12) top.push_back(q);
  sys.loads.pressures.push_back({top, 0.05});
  NodeState s = sys.rest_state(1.0);
  const double dt = 0.5 * stable_time_step(estimate_max_frequency(sys, s.x), sys.internal().max_damping_time());
  const ForceFn f = [&](const Eigen::Matrix3Xd& x, const Eigen::Matrix3Xd& v, double, Eigen::Matrix3Xd& out) {
    sys.forces(x, v, 1.0, out);
  };
  const ProjectFn p = [&](Eigen::Matrix3Xd& x, Eigen::Matrix3Xd& v, double) { sys.project(x, v, 1.0, 0.0); };
  for (int k = 0; k < 200; ++k) step(Scheme::verlet, s, k * dt, dt, f, p);
  set_thread_count(previous);
  return s.x;
}

TEST(DeterminismTest, BitIdenticalAtOneAndTwoThreads) {
  for (bool baudet : {false, true}) {
    const Eigen::Matrix3Xd a = run_block(1, baudet), b = run_block(2, baudet);
    ASSERT_EQ(a.size(), b.size());
    EXPECT_EQ(std::memcmp(a.data(), b.data(), sizeof(double) * a.size()), 0)
        << (baudet ? "Baudet" : "Bourguignon-Cani") << ": max difference " << (a - b).cwiseAbs().maxCoeff();
    const HexMesh rest = make_block({24, 12, 12, 1.0, Eigen::Vector3d::Zero()}, FibreField{});
    EXPECT_GT((a - rest.rest).cwiseAbs().maxCoeff(), 1e-6);  // the block really moved
  }
}

}  // namespace
}  // namespace cardio::mechanics
