// The closed loop's interface to a 3-D heart: ventricular pressures in, valve flows out; the flows'
// pressure derivative against finite differences; an implicit coupling built on it reproduces the
// 0-D ventricles; checkpoints continue bit for bit.
#include <gtest/gtest.h>

#include <Eigen/LU>
#include <cmath>

#include "cardio/circulation/closed_loop.hpp"
#include "cardio/circulation/closed_loop_beats.hpp"
#include "cardio/core/error.hpp"

namespace cardio::circulation {
namespace {

ClosedLoop periodic_model() {
  const ClosedLoopParams p = ClosedLoopParams::regazzoni2022();
  ClosedLoop m(p, ClosedLoopState::regazzoni2022(p));
  run_until_periodic(m, 1.0, 0.01, 40);
  return m;
}

TEST(ClosedLoopCoupling, FlowDerivativeMatchesCentralDifferences) {
  ClosedLoop m = periodic_model();
  // Mid-ejection (aortic and pulmonary valves open), then mid-filling (mitral and tricuspid open).
  for (const double advance_ms : {150.0, 400.0}) {
    for (int n = 0; n < static_cast<int>(advance_ms); ++n) m.step(1.0);
    const Eigen::Vector2d p(m.pressure_mmHg(Compartment::left_ventricle),
                            m.pressure_mmHg(Compartment::right_ventricle));
    for (const double dt : {0.01, 0.1, 1.0}) {
      const VentricleFlows f = m.trial_step(dt, p);
      const double h = 1e-4;  // mmHg: no valve switches within +-h here
      for (int j = 0; j < 2; ++j) {
        Eigen::Vector2d dp = Eigen::Vector2d::Zero();
        dp(j) = h;
        const Eigen::Vector2d fd = (m.trial_step(dt, p + dp).net() - m.trial_step(dt, p - dp).net()) / (2 * h);
        for (int i = 0; i < 2; ++i)
          EXPECT_NEAR(f.d_net_d_pressure(i, j), fd(i), 1e-6 * f.d_net_d_pressure.cwiseAbs().maxCoeff())
              << "t " << m.time_ms() << " dt " << dt << " (" << i << "," << j << ")";
      }
      // Raising a ventricle's pressure drives blood out of it: d net_i / d p_i < 0.
      EXPECT_LT(f.d_net_d_pressure(0, 0), 0);
      EXPECT_LT(f.d_net_d_pressure(1, 1), 0);
    }
  }
}

/// A stand-in for the 3-D ventricles: cavity volume for a pressure, V = V0 + p / E(t) (the paper's
/// 0-D law inverted), so that the coupled run must reproduce the monolithic 0-D run.
Eigen::Vector2d cavity_volumes(const ClosedLoopParams& prm, double t, const Eigen::Vector2d& p,
                               Eigen::Vector2d& dv_dp) {
  const double e_lv = chamber_elastance(prm.left_ventricle, t, prm.period_ms);
  const double e_rv = chamber_elastance(prm.right_ventricle, t, prm.period_ms);
  dv_dp = {1 / e_lv, 1 / e_rv};
  return {prm.left_ventricle.rest_volume_mL + p(0) / e_lv, prm.right_ventricle.rest_volume_mL + p(1) / e_rv};
}

TEST(ClosedLoopCoupling, ImplicitPressureCouplingReproducesTheZeroDVentricles) {
  ClosedLoop monolithic = periodic_model();
  ClosedLoop coupled = monolithic;
  const ClosedLoopParams& prm = coupled.params();
  const double dt = 0.5;
  int max_newton = 0;
  double worst = 0;
  for (int n = 0; n < 1600; ++n) {  // one beat
    monolithic.step(dt);
    // Newton on the pressures: cavity volume (the "3-D" one) = 0-D volume V^n + dt net(p).
    const Eigen::Vector2d v_old(coupled.volume_mL(Compartment::left_ventricle),
                                coupled.volume_mL(Compartment::right_ventricle));
    const double t_new = coupled.time_ms() + dt;
    Eigen::Vector2d p(coupled.pressure_mmHg(Compartment::left_ventricle),
                      coupled.pressure_mmHg(Compartment::right_ventricle));
    int it = 0;
    for (; it < 20; ++it) {
      Eigen::Vector2d dv_dp;
      const Eigen::Vector2d v_cavity = cavity_volumes(prm, t_new, p, dv_dp);
      const VentricleFlows f = coupled.trial_step(dt, p);
      const Eigen::Vector2d residual = v_cavity - (v_old + dt * f.net());
      if (residual.cwiseAbs().maxCoeff() < 1e-11) break;
      const Eigen::Matrix2d jacobian = Eigen::Matrix2d(dv_dp.asDiagonal()) - dt * f.d_net_d_pressure;
      p -= jacobian.partialPivLu().solve(residual);
    }
    ASSERT_LT(it, 20) << "Newton on the ventricular pressures did not converge at t = " << t_new;
    max_newton = std::max(max_newton, it);
    coupled.step_with_pressures(dt, p);
    for (const Compartment c : {Compartment::left_ventricle, Compartment::right_ventricle,
                                Compartment::systemic_arteries, Compartment::pulmonary_veins})
      worst = std::max(worst, std::abs(coupled.volume_mL(c) - monolithic.volume_mL(c)));
  }
  EXPECT_LT(worst, 1e-8);  // mL
  EXPECT_LE(max_newton, 6);
  std::printf("implicit pressure coupling: <= %d Newton iterations per step, volumes within %.1e mL\n", max_newton,
              worst);
}

TEST(ClosedLoopCoupling, CheckpointContinuesBitForBit) {
  ClosedLoop a = periodic_model();
  for (int n = 0; n < 333; ++n) a.step(0.7);
  BinaryWriter out;
  a.save(out);
  const ClosedLoopParams p = ClosedLoopParams::regazzoni2022();
  ClosedLoop b(p, ClosedLoopState::regazzoni2022(p));
  BinaryReader in(out.bytes(), "checkpoint");
  b.restore(in);
  in.expect_end();
  for (int n = 0; n < 1000; ++n) {
    a.step(0.7);
    b.step(0.7);
  }
  EXPECT_EQ(a.time_ms(), b.time_ms());
  for (int i = 0; i < 8; ++i) EXPECT_EQ(a.state().volume_mL[i], b.state().volume_mL[i]) << i;
  for (int i = 0; i < 4; ++i) EXPECT_EQ(a.state().vessel_outflow_mL_per_ms[i], b.state().vessel_outflow_mL_per_ms[i]);
  for (const Valve v : {Valve::mitral, Valve::aortic, Valve::tricuspid, Valve::pulmonary})
    EXPECT_EQ(a.valve_flow_mL_per_ms(v), b.valve_flow_mL_per_ms(v)) << valve_name(v);
  BinaryWriter wrong;
  wrong.str("beat");
  BinaryReader bad(wrong.bytes(), "checkpoint");
  EXPECT_THROW(b.restore(bad), Error);
}

}  // namespace
}  // namespace cardio::circulation
