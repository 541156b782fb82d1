// The closed-loop circulation's time step: backward Euler, valve states by an active-set iteration.
#include "cardio/circulation/closed_loop.hpp"

#include <Eigen/LU>
#include <cmath>

#include "cardio/core/error.hpp"

namespace cardio::circulation {

namespace {

constexpr int kCompartments = 8, kVessels = 4, kUnknowns = kCompartments + kVessels;
using Matrix = Eigen::Matrix<double, kUnknowns, kUnknowns>;
using Vector = Eigen::Matrix<double, kUnknowns, 1>;
using PressureColumns = Eigen::Matrix<double, kUnknowns, kCompartments>;

/// A branch of the loop carries blood from `up` to `down` through a valve or a vessel's inductor.
struct Branch {
  int up, down, valve, vessel;  // valve / vessel index, -1 if none
};
// Loop order: LA -mitral-> LV -aortic-> SA -> SV -> RA -tricuspid-> RV -pulmonary-> PA -> PV -> LA.
constexpr std::array<Branch, 8> kBranches{{{0, 1, 0, -1},
                                           {1, 4, 1, -1},
                                           {4, 5, -1, 0},
                                           {5, 2, -1, 1},
                                           {2, 3, 2, -1},
                                           {3, 6, 3, -1},
                                           {6, 7, -1, 2},
                                           {7, 0, -1, 3}}};
constexpr int kLeftVentricle = 1, kRightVentricle = 3;
// Valve states count as consistent within this pressure difference [mmHg] (no flip-flop at 0).
constexpr double kSwitchTolerance = 1e-9;
constexpr int kMaxActiveSetIterations = 30;

const VesselParams& vessel(const ClosedLoopParams& p, int m) {
  const std::array<const VesselParams*, 4> v{&p.systemic_arteries, &p.systemic_veins, &p.pulmonary_arteries,
                                             &p.pulmonary_veins};
  return *v[m];
}

/// Pressure law p_i = a_i + b_i V_i of each compartment at the end of the step.
struct PressureLaw {
  std::array<double, kCompartments> a{}, b{};
};

PressureLaw pressure_law(const ClosedLoopParams& p, double t, const Eigen::Vector2d* ventricle_pressures) {
  PressureLaw law;
  const std::array<const ChamberParams*, 4> chambers{&p.left_atrium, &p.left_ventricle, &p.right_atrium,
                                                     &p.right_ventricle};
  for (int i = 0; i < 4; ++i) {
    const double e = chamber_elastance(*chambers[i], t, p.period_ms);
    law.b[i] = e;
    law.a[i] = -e * chambers[i]->rest_volume_mL;
  }
  for (int m = 0; m < kVessels; ++m) law.b[4 + m] = 1.0 / vessel(p, m).compliance_mL_per_mmHg;
  if (ventricle_pressures) {
    law.b[kLeftVentricle] = law.b[kRightVentricle] = 0;
    law.a[kLeftVentricle] = (*ventricle_pressures)(0);
    law.a[kRightVentricle] = (*ventricle_pressures)(1);
  }
  return law;
}

/// The backward-Euler step with fixed valve states: K x = base + P a (a: the pressure offsets).
struct LinearStep {
  Matrix K = Matrix::Identity();
  Vector base = Vector::Zero();
  PressureColumns P = PressureColumns::Zero();
};

LinearStep assemble(const ClosedLoopParams& p, const ClosedLoopState& s, const PressureLaw& law,
                    const std::array<bool, 4>& open, double dt) {
  LinearStep sys;
  for (int i = 0; i < kCompartments; ++i) sys.base(i) = s.volume_mL[i];
  for (const Branch& br : kBranches) {
    // Volume rows: V_down - dt Q = V_down^n, V_up + dt Q = V_up^n.
    if (br.valve >= 0) {
      const double g =
          1.0 / (open[br.valve] ? p.valves.open_resistance_mmHg_ms_per_mL : p.valves.closed_resistance_mmHg_ms_per_mL);
      for (const auto& [row, sign] : {std::pair{br.down, -1.0}, std::pair{br.up, 1.0}}) {
        sys.K(row, br.up) += sign * dt * g * law.b[br.up];
        sys.K(row, br.down) -= sign * dt * g * law.b[br.down];
        sys.P(row, br.up) -= sign * dt * g;
        sys.P(row, br.down) += sign * dt * g;
      }
      continue;
    }
    const int q = kCompartments + br.vessel;
    sys.K(br.down, q) -= dt;
    sys.K(br.up, q) += dt;
    // Inductor row: (L/dt + R) Q - (p_up - p_down) = L/dt Q^n.
    const VesselParams& v = vessel(p, br.vessel);
    const double l_dt = v.inductance_mmHg_ms2_per_mL / dt;
    sys.K(q, q) = l_dt + v.resistance_mmHg_ms_per_mL;
    sys.K(q, br.up) -= law.b[br.up];
    sys.K(q, br.down) += law.b[br.down];
    sys.P(q, br.up) += 1;
    sys.P(q, br.down) -= 1;
    sys.base(q) = l_dt * s.vessel_outflow_mL_per_ms[br.vessel];
  }
  return sys;
}

double valve_pressure_drop(const Branch& br, const PressureLaw& law, const Vector& x) {
  return law.a[br.up] + law.b[br.up] * x(br.up) - law.a[br.down] - law.b[br.down] * x(br.down);
}

}  // namespace

struct ClosedLoop::Solution {
  std::array<double, 8> branch_flow{};  ///< mL/ms, in kBranches order
  std::array<bool, 4> open{};
  PressureLaw law;
  Eigen::Matrix2d d_net_d_pressure = Eigen::Matrix2d::Zero();
};

ClosedLoop::ClosedLoop(const ClosedLoopParams& params, const ClosedLoopState& initial)
    : m_params(params), m_state(initial) {
  m_params.validate("closed_loop");
  CARDIO_CHECK(std::isfinite(initial.t_ms), "closed-loop initial time " << initial.t_ms << " ms: expected finite");
  for (int i = 0; i < kCompartments; ++i)
    if (!(std::isfinite(initial.volume_mL[i]) && initial.volume_mL[i] >= 0))
      CARDIO_FAIL("closed-loop initial volume of " << compartment_name(static_cast<Compartment>(i)) << " = "
                                                   << initial.volume_mL[i] << " mL: expected a finite value >= 0");
  for (double q : initial.vessel_outflow_mL_per_ms)
    CARDIO_CHECK(std::isfinite(q), "closed-loop initial vessel flow " << q << " mL/ms: expected finite");
  const PressureLaw law = pressure_law(m_params, m_state.t_ms, nullptr);
  for (int i = 0; i < kCompartments; ++i) m_pressure[i] = law.a[i] + law.b[i] * m_state.volume_mL[i];
  for (const Branch& br : kBranches)
    if (br.valve >= 0) m_valve_open[br.valve] = m_pressure[br.up] > m_pressure[br.down];
}

ClosedLoop::Solution ClosedLoop::solve(double dt, const Eigen::Vector2d* ventricle_pressures) const {
  CARDIO_CHECK(std::isfinite(dt) && dt > 0, "closed-loop step dt = " << dt << " ms: expected a finite value > 0");
  if (ventricle_pressures)
    CARDIO_CHECK(ventricle_pressures->allFinite(), "closed-loop ventricular pressures ("
                                                       << ventricle_pressures->transpose()
                                                       << ") mmHg: expected finite values");
  Solution s;
  s.law = pressure_law(m_params, m_state.t_ms + dt, ventricle_pressures);
  s.open = m_valve_open;
  Eigen::Map<const Eigen::Matrix<double, kCompartments, 1>> a(s.law.a.data());
  for (int iteration = 0; iteration < kMaxActiveSetIterations; ++iteration) {
    const LinearStep sys = assemble(m_params, m_state, s.law, s.open, dt);
    const Eigen::PartialPivLU<Matrix> lu(sys.K);
    const Vector x = lu.solve(sys.base + sys.P * a);
    bool consistent = true;
    for (const Branch& br : kBranches) {
      if (br.valve < 0) continue;
      const double drop = valve_pressure_drop(br, s.law, x);
      const bool open = s.open[br.valve];
      if ((open && drop < -kSwitchTolerance) || (!open && drop > kSwitchTolerance)) {
        s.open[br.valve] = !open;
        consistent = false;
      }
    }
    if (!consistent) continue;
    for (std::size_t k = 0; k < kBranches.size(); ++k) {
      const Branch& br = kBranches[k];
      s.branch_flow[k] = br.vessel >= 0 ? x(kCompartments + br.vessel)
                                        : valve_pressure_drop(br, s.law, x) /
                                              (s.open[br.valve] ? m_params.valves.open_resistance_mmHg_ms_per_mL
                                                                : m_params.valves.closed_resistance_mmHg_ms_per_mL);
    }
    if (ventricle_pressures) {
      // net_v = (V_v^{n+1} - V_v^n)/dt and x is affine in the pressure offsets a: d x / d a = K^-1 P.
      const std::array<int, 2> v{kLeftVentricle, kRightVentricle};
      for (int j = 0; j < 2; ++j) {
        const Vector dx = lu.solve(sys.P.col(v[j]));
        for (int i = 0; i < 2; ++i) s.d_net_d_pressure(i, j) = dx(v[i]) / dt;
      }
    }
    return s;
  }
  CARDIO_FAIL("closed-loop circulation: the valve states did not settle within "
              << kMaxActiveSetIterations << " iterations in the step from t = " << m_state.t_ms
              << " ms with dt = " << dt << " ms (try a smaller step)");
}

namespace {
VentricleFlows ventricle_flows(const std::array<double, 8>& q, const Eigen::Matrix2d& derivative) {
  VentricleFlows f;
  f.inflow = {q[0], q[4]};   // mitral, tricuspid
  f.outflow = {q[1], q[5]};  // aortic, pulmonary
  f.d_net_d_pressure = derivative;
  return f;
}
}  // namespace

VentricleFlows ClosedLoop::commit(const Solution& s, double dt) {
  // Each branch moves dt Q from up to down: the same number leaves one compartment and enters the
  // next, so the sum of the volumes only sees round-off.
  for (std::size_t k = 0; k < kBranches.size(); ++k) {
    const double moved = dt * s.branch_flow[k];
    m_state.volume_mL[kBranches[k].down] += moved;
    m_state.volume_mL[kBranches[k].up] -= moved;
    if (kBranches[k].vessel >= 0) m_state.vessel_outflow_mL_per_ms[kBranches[k].vessel] = s.branch_flow[k];
    if (kBranches[k].valve >= 0) m_valve_flow[kBranches[k].valve] = s.branch_flow[k];
  }
  m_state.t_ms += dt;
  for (int i = 0; i < kCompartments; ++i) m_pressure[i] = s.law.a[i] + s.law.b[i] * m_state.volume_mL[i];
  m_valve_open = s.open;
  return ventricle_flows(s.branch_flow, s.d_net_d_pressure);
}

VentricleFlows ClosedLoop::step(double dt) { return commit(solve(dt, nullptr), dt); }

VentricleFlows ClosedLoop::step_with_pressures(double dt, const Eigen::Vector2d& ventricle_pressures_mmHg) {
  return commit(solve(dt, &ventricle_pressures_mmHg), dt);
}

VentricleFlows ClosedLoop::trial_step(double dt, const Eigen::Vector2d& ventricle_pressures_mmHg) const {
  const Solution s = solve(dt, &ventricle_pressures_mmHg);
  return ventricle_flows(s.branch_flow, s.d_net_d_pressure);
}

double ClosedLoop::total_volume_mL() const {
  double sum = 0;
  for (double v : m_state.volume_mL) sum += v;
  return sum;
}

double ClosedLoop::vessel_compliance_mL_per_mmHg() const {
  double sum = 0;
  for (int m = 0; m < kVessels; ++m) sum += vessel(m_params, m).compliance_mL_per_mmHg;
  return sum;
}

void ClosedLoop::add_to_vessels(double volume_mL) {
  CARDIO_CHECK(std::isfinite(volume_mL), "closed loop: cannot add " << volume_mL << " mL of blood");
  const double dp = volume_mL / vessel_compliance_mL_per_mmHg();
  for (int m = 0; m < kVessels; ++m) {
    const double v = m_state.volume_mL[4 + m] + vessel(m_params, m).compliance_mL_per_mmHg * dp;
    if (!(v >= 0))
      CARDIO_FAIL("closed loop: removing " << -volume_mL << " mL of blood would leave the "
                                           << compartment_name(static_cast<Compartment>(4 + m)) << " at " << v
                                           << " mL");
  }
  for (int m = 0; m < kVessels; ++m) {
    m_state.volume_mL[4 + m] += vessel(m_params, m).compliance_mL_per_mmHg * dp;
    m_pressure[4 + m] = m_state.volume_mL[4 + m] / vessel(m_params, m).compliance_mL_per_mmHg;  // V = C p
  }
}

void ClosedLoop::set_systemic_arteries(double resistance_mmHg_ms_per_mL, double compliance_mL_per_mmHg) {
  CARDIO_CHECK(resistance_mmHg_ms_per_mL > 0 && compliance_mL_per_mmHg > 0 &&
                   std::isfinite(resistance_mmHg_ms_per_mL) && std::isfinite(compliance_mL_per_mmHg),
               "closed loop: systemic arteries R " << resistance_mmHg_ms_per_mL << " mmHg ms/mL, C "
                                                   << compliance_mL_per_mmHg << " mL/mmHg: expected both > 0");
  m_params.systemic_arteries.resistance_mmHg_ms_per_mL = resistance_mmHg_ms_per_mL;
  m_params.systemic_arteries.compliance_mL_per_mmHg = compliance_mL_per_mmHg;
  const int artery = static_cast<int>(Compartment::systemic_arteries);
  m_pressure[artery] = m_state.volume_mL[artery] / compliance_mL_per_mmHg;  // V = C p
}

void ClosedLoop::save(BinaryWriter& out) const {
  out.str("closed_loop");
  out.f64(m_state.t_ms);
  out.f64s(m_state.volume_mL.data(), m_state.volume_mL.size());
  out.f64s(m_state.vessel_outflow_mL_per_ms.data(), m_state.vessel_outflow_mL_per_ms.size());
  out.f64s(m_pressure.data(), m_pressure.size());
  out.f64s(m_valve_flow.data(), m_valve_flow.size());
  for (bool open : m_valve_open) out.i64(open ? 1 : 0);
  // The systemic arteries' R and C may have been calibrated (set_systemic_arteries).
  out.f64(m_params.systemic_arteries.resistance_mmHg_ms_per_mL);
  out.f64(m_params.systemic_arteries.compliance_mL_per_mmHg);
}

void ClosedLoop::restore(BinaryReader& in) {
  const std::string tag = in.str();
  CARDIO_CHECK(tag == "closed_loop", "checkpoint holds '" << tag << "' where the closed-loop circulation was expected");
  m_state.t_ms = in.f64();
  in.f64s(m_state.volume_mL.data(), m_state.volume_mL.size());
  in.f64s(m_state.vessel_outflow_mL_per_ms.data(), m_state.vessel_outflow_mL_per_ms.size());
  in.f64s(m_pressure.data(), m_pressure.size());
  in.f64s(m_valve_flow.data(), m_valve_flow.size());
  for (bool& open : m_valve_open) open = in.i64() != 0;
  m_params.systemic_arteries.resistance_mmHg_ms_per_mL = in.f64();
  m_params.systemic_arteries.compliance_mL_per_mmHg = in.f64();
}

}  // namespace cardio::circulation
