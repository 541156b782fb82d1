// Determinism: the same block experiment gives bit-identical states at 1 and 2 threads, for the
// block experiments' elements and the heart's (sampled axes in SIMD lanes, active and damped, in
// double and in single precision).
#include <gtest/gtest.h>

#include <cstring>

#include "cardio/core/parallel.hpp"
#include "cardio/mechanics/integrators.hpp"
#include "cardio/mechanics/myocardium.hpp"
#include "test_support.hpp"

namespace cardio::mechanics {
namespace {

enum class Element { bourguignon_cani, baudet, heart, heart_single };

std::unique_ptr<InternalForces> make_model(Element kind, const HexMesh& mesh) {
  BCCalibration opt;
  opt.damping_time = 0.05;
  opt.radial_share = 0.3;
  if (kind == Element::baudet)
    return std::make_unique<BaudetCubeForces>(mesh, std::vector<BaudetConstants>{calibrate_baudet(10, 0.4, 1.0, 0.05)});
  if (kind == Element::bourguignon_cani)
    return std::make_unique<BourguignonCaniForces>(mesh, std::vector<BCModuli>{testing::bc_iso(10, 0.4, opt)});
  GuccioneLaw law;
  law.damping_time = 0.05;
  law.active.beta = 0.1;
  const Precision storage = kind == Element::heart_single ? Precision::single_precision : Precision::double_precision;
  return std::make_unique<GuccioneForces>(mesh, std::vector<GuccioneLaw>{law}, ElementKind::sampled_axes, storage);
}

Eigen::Matrix3Xd run_block(int threads, Element kind) {
  const int previous = thread_count();
  set_thread_count(threads);
  FibreField ff;
  ff.kind = FibreField::Kind::random;
  // Large enough that the element schedule has many chunks to spread over the threads.
  const HexMesh mesh = make_block({24, 12, 12, 1.0, Eigen::Vector3d::Zero()}, ff);
  BoundaryConditions bc;
  DofConstraint clamp;
  for (std::int32_t n = 0; n < mesh.n_nodes(); ++n)
    if (mesh.rest(0, n) == 0) clamp.nodes.push_back(n);
  bc.constraints = {clamp};
  bc.loads.gravity = Eigen::Vector3d(0, 0, -0.01);
  const auto boundary = boundary_faces(mesh);
  std::vector<Quad> top;
  for (const Quad& q : boundary)
    if (mesh.rest(2, q[0]) == 12 && mesh.rest(2, q[1]) == 12 && mesh.rest(2, q[2]) == 12) top.push_back(q);
  bc.loads.pressures.push_back({top, 0.05});
  MassSpringSystem sys(mesh, make_model(kind, mesh), lumped_masses(mesh, {1.06}), std::move(bc));
  // Active tension and activation vary by element (the passive elements ignore them).
  std::vector<double> Ta, activation;
  for (std::int64_t e = 0; e < mesh.n_elements(); ++e) {
    Ta.push_back(double(e % 7));
    activation.push_back(double(e % 5) / 4);
  }
  const ForceInputs in{1.0, Ta, activation};
  NodeState s = sys.rest_state(in);
  const double dt = 0.5 * stable_time_step(estimate_max_frequency(sys, s.x, 60, in), sys.internal().max_damping_time());
  ForceInputs step_inputs = in;  // as the beat steps: single precision where the element stores it
  step_inputs.precision = Precision::single_precision;
  const ForceFn f = [&](const Eigen::Matrix3Xd& x, const Eigen::Matrix3Xd& v, double, Eigen::Matrix3Xd& out) {
    sys.forces(x, v, step_inputs, out);
  };
  const ProjectFn p = [&](Eigen::Matrix3Xd& x, Eigen::Matrix3Xd& v, double) { sys.project(x, v, 1.0, 0.0); };
  for (int k = 0; k < 200; ++k) step(Scheme::verlet, s, k * dt, dt, f, p);
  set_thread_count(previous);
  return s.x;
}

TEST(DeterminismTest, BitIdenticalAtOneAndTwoThreads) {
  for (Element kind : {Element::bourguignon_cani, Element::baudet, Element::heart, Element::heart_single}) {
    const Eigen::Matrix3Xd a = run_block(1, kind), b = run_block(2, kind);
    ASSERT_EQ(a.size(), b.size());
    EXPECT_EQ(std::memcmp(a.data(), b.data(), sizeof(double) * a.size()), 0)
        << int(kind) << ": max difference " << (a - b).cwiseAbs().maxCoeff();
    const HexMesh rest = make_block({24, 12, 12, 1.0, Eigen::Vector3d::Zero()}, FibreField{});
    EXPECT_GT((a - rest.rest).cwiseAbs().maxCoeff(), 1e-6);  // the block really moved
  }
}

}  // namespace
}  // namespace cardio::mechanics
