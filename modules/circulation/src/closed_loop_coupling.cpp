// The 3-D ventricles in the closed loop: Newton on the step's ventricular pressures (header).
#include "cardio/circulation/closed_loop_coupling.hpp"

#include <Eigen/LU>
#include <cmath>
#include <optional>

#include "cardio/circulation/volume_constraint.hpp"
#include "cardio/core/error.hpp"
#include "cardio/core/units.hpp"

namespace cardio::circulation {
namespace {

constexpr std::array<Compartment, 2> kVentricle{Compartment::left_ventricle, Compartment::right_ventricle};
constexpr int kMaxNewtonIterations = 40, kMaxHalvings = 12;

ClosedLoopState with_3d_ventricles(ClosedLoopState s, const std::array<const meshing::CavitySurface*, 2>& ventricles,
                                   const Eigen::Matrix3Xd& rest) {
  for (int c = 0; c < 2; ++c) {
    if (!ventricles[std::size_t(c)]) continue;
    double& v = s.volume_mL[std::size_t(kVentricle[std::size_t(c)])];
    const double v3d = cavity_volume_mm3(*ventricles[std::size_t(c)], rest) / kMm3PerMl;
    s.volume_mL[std::size_t(Compartment::systemic_veins)] += v - v3d;  // the blood volume stays
    v = v3d;
  }
  if (!(s.volume_mL[std::size_t(Compartment::systemic_veins)] > 0))
    CARDIO_FAIL("closed loop: the 3-D ventricles at rest hold more blood than the loop's initial state offers ("
                << s.volume_mL[std::size_t(Compartment::systemic_veins)]
                << " mL would be left in the systemic veins): raise the loop's blood volume");
  return s;
}

/// Newton on r(p) = 0 from p (updated in place), each step halved until |r| falls (the valve flows
/// are piecewise linear in p, so a full step may overshoot a switch); stops at `tolerance`, at the
/// round-off floor (no halving lowers |r|), or after kMaxNewtonIterations. Returns the last r.
template <class Residual>
Eigen::Vector2d damped_newton(const Residual& residual, double tolerance, Eigen::Vector2d& p, int& iterations) {
  Eigen::Matrix2d J;
  Eigen::Vector2d r = residual(p, &J);
  for (iterations = 0; r.cwiseAbs().maxCoeff() > tolerance && iterations < kMaxNewtonIterations; ++iterations) {
    const Eigen::Vector2d step = -J.partialPivLu().solve(r);
    double step_scale = 1;
    Eigen::Vector2d p_new = p + step, r_new = residual(p_new, nullptr);
    for (int h = 0; h < kMaxHalvings && r_new.cwiseAbs().maxCoeff() >= r.cwiseAbs().maxCoeff(); ++h) {
      step_scale /= 2;
      p_new = p + step_scale * step;
      r_new = residual(p_new, nullptr);
    }
    if (!(r_new.cwiseAbs().maxCoeff() < r.cwiseAbs().maxCoeff())) break;
    p = p_new;
    r = residual(p, &J);
  }
  return r;
}

}  // namespace

ClosedLoopCoupling::ClosedLoopCoupling(const ClosedLoopParams& params, ClosedLoopState initial,
                                       std::array<const meshing::CavitySurface*, 2> ventricles,
                                       const Eigen::Matrix3Xd& rest)
    : m_ventricles(ventricles), m_loop(params, with_3d_ventricles(std::move(initial), ventricles, rest)) {
  CARDIO_CHECK(ventricles[0] || ventricles[1], "closed loop: at least one ventricle must be a 3-D cavity");
  for (int c = 0; c < 2; ++c) m_pressure[c] = is_3d(c) ? 0.0 : m_loop.pressure_mmHg(kVentricle[std::size_t(c)]);
}

Eigen::Vector2d ClosedLoopCoupling::project(const Eigen::VectorXd& mass, const Eigen::Matrix3Xd& free_mask, double dt,
                                            const Eigen::Vector2d& volumes_begin_mL, Eigen::Matrix3Xd& x,
                                            Eigen::Matrix3Xd& v) {
  const double kappa_dt2 = units::kMmHgInKPa * dt * dt;  // phi per mmHg
  std::array<std::optional<VolumePath>, 2> path;
  Eigen::Vector2d v_begin, elastance = Eigen::Vector2d::Zero();
  const std::array<const ChamberParams*, 2> chamber{&m_loop.params().left_ventricle, &m_loop.params().right_ventricle};
  for (int c = 0; c < 2; ++c) {
    if (is_3d(c)) {
      path[std::size_t(c)].emplace(*m_ventricles[std::size_t(c)], mass, free_mask, x);
      v_begin[c] = volumes_begin_mL[c];
    } else {
      v_begin[c] = m_loop.volume_mL(kVentricle[std::size_t(c)]);
      elastance[c] = chamber_elastance(*chamber[std::size_t(c)], m_loop.time_ms() + dt, m_loop.params().period_ms);
    }
  }
  // Residual r_c(p) = V_c(p) - V_c^n - dt net_c(p) [mL], with its Jacobian.
  const auto residual = [&](const Eigen::Vector2d& p, Eigen::Matrix2d* jacobian) {
    const VentricleFlows f = m_loop.trial_step(dt, p);
    Eigen::Vector2d r;
    Eigen::Matrix2d J = -dt * f.d_net_d_pressure;
    for (int c = 0; c < 2; ++c) {
      const double V = is_3d(c) ? path[std::size_t(c)]->volume_mm3(p[c] * kappa_dt2) / kMm3PerMl
                                : chamber[std::size_t(c)]->rest_volume_mL + p[c] / elastance[c];
      J(c, c) +=
          is_3d(c) ? path[std::size_t(c)]->slope_mm3(p[c] * kappa_dt2) * kappa_dt2 / kMm3PerMl : 1 / elastance[c];
      r[c] = V - v_begin[c] - dt * f.net()[c];
    }
    if (jacobian) *jacobian = J;
    return r;
  };
  // To the round-off of V (the blood volume is conserved only as well as this residual is zero);
  // a step whose Newton stalls above the floor is accepted within 1e-9 of the volume, else an error.
  const double scale = std::max(1.0, v_begin.cwiseAbs().maxCoeff());
  Eigen::Vector2d p = m_pressure;
  const Eigen::Vector2d r = damped_newton(residual, 1e-15 * scale, p, m_iterations);
  if (!(r.cwiseAbs().maxCoeff() <= 1e-9 * scale))
    CARDIO_FAIL("closed loop: the ventricular pressures of the step from t = "
                << m_loop.time_ms() << " ms (dt = " << dt << " ms) did not converge in " << m_iterations
                << " Newton iterations (residual " << r.transpose() << " mL at p = " << p.transpose()
                << " mmHg): the wall may have folded; lower simulation.dt_safety");
  if (!p.allFinite())
    CARDIO_FAIL("closed loop: non-finite ventricular pressure at t = " << m_loop.time_ms() << " ms: the wall folded");
  m_pressure = p;
  Eigen::Vector2d end_mm3 = Eigen::Vector2d::Zero();
  for (int c = 0; c < 2; ++c)
    if (is_3d(c)) {
      path[std::size_t(c)]->move(p[c] * kappa_dt2, dt, x, &v);
      end_mm3[c] = path[std::size_t(c)]->volume_mm3(p[c] * kappa_dt2);  // exact: every point moved along phi d
    }
  return end_mm3;
}

VentricleFlows ClosedLoopCoupling::advance(double dt) { return m_loop.step_with_pressures(dt, m_pressure); }

double ClosedLoopCoupling::blood_volume_mL(const Eigen::Matrix3Xd& x) const {
  double sum = m_loop.total_volume_mL();
  for (int c = 0; c < 2; ++c)
    if (is_3d(c))
      sum += cavity_volume_mm3(*m_ventricles[std::size_t(c)], x) / kMm3PerMl -
             m_loop.volume_mL(kVentricle[std::size_t(c)]);
  return sum;
}

void ClosedLoopCoupling::add_blood(double volume_mL) {
  m_loop.add_to_vessels(volume_mL);
  m_added_blood += volume_mL;
}

void ClosedLoopCoupling::save(BinaryWriter& out) const {
  m_loop.save(out);
  out.f64s(m_pressure.data(), 2);
  out.f64(m_added_blood);
}

void ClosedLoopCoupling::restore(BinaryReader& in) {
  m_loop.restore(in);
  in.f64s(m_pressure.data(), 2);
  m_added_blood = in.f64();
}

}  // namespace cardio::circulation
