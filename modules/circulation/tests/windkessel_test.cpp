// Windkessel models: exact decay, steady state, linear inflow, validation.
#include <gtest/gtest.h>

#include <cmath>

#include "cardio/circulation/windkessel.hpp"
#include "cardio/core/error.hpp"

namespace cardio::circulation {
namespace {

TEST(Windkessel, TwoElementDecaysExactlyWithoutInflow) {
  WindkesselParams p;
  p.elements = 2;
  p.characteristic_impedance = 0;
  p.peripheral_resistance = 1200;  // mmHg ms/mL
  p.compliance = 1.3;              // mL/mmHg
  p.venous_pressure = 0;
  p.initial_pressure = 95;
  const double tau = 1200 * 1.3;
  for (double dt : {0.01, 1.0, 37.0, 2000.0}) {
    Windkessel wk(p);
    double t = 0;
    for (int n = 0; n < 50; ++n) {
      wk.advance(dt, 0.0);
      t += dt;
      const double exact = 95 * std::exp(-t / tau);
      EXPECT_NEAR(wk.pressure(), exact, 1e-12 * 95) << "dt " << dt << " n " << n;
    }
  }
}

TEST(Windkessel, SteadyStateUnderConstantFlowIsVenousPlusFlowTimesResistance) {
  for (int elements : {2, 3}) {
    WindkesselParams p;
    p.elements = elements;
    p.characteristic_impedance = elements == 3 ? 40.0 : 0.0;
    p.venous_pressure = 5;
    p.initial_pressure = 20;
    Windkessel wk(p);
    const double q = 0.09;  // mL/ms (5.4 L/min)
    // Exact at every step: P(t) = P_inf + (P0 - P_inf) e^{-t/tau}.
    const double p_inf = 5 + q * p.peripheral_resistance, tau = wk.time_constant();
    double t = 0;
    for (int n = 0; n < 100; ++n) {
      wk.advance(97.0, q);
      t += 97.0;
      EXPECT_NEAR(wk.pressure(), p_inf + (20 - p_inf) * std::exp(-t / tau), 1e-12 * p_inf);
    }
    wk.advance(1e6, q);
    EXPECT_NEAR(wk.pressure(), p_inf, 1e-12 * p_inf);
    EXPECT_NEAR(wk.cavity_pressure(q), p_inf + (elements == 3 ? 40.0 * q : 0.0), 1e-12 * p_inf);
  }
}

TEST(Windkessel, LinearOutflowIsIntegratedExactly) {
  WindkesselParams p;
  p.initial_pressure = 70;
  p.venous_pressure = 3;
  Windkessel exact(p), fine(p);
  const double dt = 150, q0 = 0.4, q1 = -0.1;
  exact.advance_linear(dt, q0, q1);
  // Reference: many sub-steps, each exact for its (midpoint) constant flow: error O(h^2).
  const int n = 20000;
  for (int i = 0; i < n; ++i) {
    const double s = (i + 0.5) / n;
    fine.advance(dt / n, q0 + s * (q1 - q0));
  }
  EXPECT_NEAR(exact.pressure(), fine.pressure(), 1e-7 * exact.pressure());
}

TEST(Windkessel, EndOfStepPressureIsAffineInTheOutflow) {
  const Windkessel wk(WindkesselParams{});
  const double dt = 0.5;
  const auto [a, b] = wk.end_of_step_pressure(dt);
  for (double q : {0.0, 0.3, -0.05}) {
    Windkessel w = wk;
    w.advance(dt, q);
    EXPECT_NEAR(w.cavity_pressure(q), a + b * q, 1e-12 * a);
  }
  EXPECT_GT(b, WindkesselParams{}.characteristic_impedance);
}

void expect_error(const WindkesselParams& p, const std::string& key) {
  try {
    p.validate("lv.windkessel");
    ADD_FAILURE() << "expected an error naming " << key;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("lv.windkessel." + key), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("expected"), std::string::npos) << e.what();
  }
}

TEST(Windkessel, ParametersAreValidated) {
  WindkesselParams p;
  EXPECT_NO_THROW(p.validate());
  auto bad = p;
  bad.peripheral_resistance = -1;
  expect_error(bad, "peripheral_resistance");
  bad = p;
  bad.compliance = 0;
  expect_error(bad, "compliance");
  bad = p;
  bad.characteristic_impedance = -3;
  expect_error(bad, "characteristic_impedance");
  bad = p;
  bad.elements = 2;  // with a characteristic impedance still set
  expect_error(bad, "characteristic_impedance");
  bad = p;
  bad.elements = 4;
  expect_error(bad, "elements");
  bad = p;
  bad.venous_pressure = -2;
  expect_error(bad, "venous_pressure");
  bad = p;
  bad.initial_pressure = std::nan("");
  expect_error(bad, "initial_pressure");
  EXPECT_THROW(Windkessel{bad}, Error);
}

}  // namespace
}  // namespace cardio::circulation
