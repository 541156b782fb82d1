#include "cardio/mechanics/material.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "cardio/core/error.hpp"

namespace cardio::mechanics {
namespace {

// The element's normal-stress block is diag(d_f, d_c, d_c) + lambda' 1 1^T (one coupling modulus
// for all pairs of axes). These are its parameters for the given constants (docs/calibration.md).
struct NormalBlock {
  double d_f, d_c, lambda;
};

NormalBlock normal_block(const ElasticConstants& c) {
  const double nu = c.nu_cross;
  const double d_c = c.E_cross / (1 + nu);
  const double q = nu * c.E_cross / ((1 + nu) * (1 + nu));
  const double disc = c.E_fibre * c.E_fibre - 4 * c.E_fibre * q;
  if (disc < 0)
    CARDIO_FAIL("material: E_fibre = " << c.E_fibre << " kPa is too small for E_cross = " << c.E_cross
                                       << " kPa and nu = " << nu
                                       << " (the element needs E_fibre >= 4 nu E_cross / (1 + nu)^2)");
  const double d_f = 0.5 * (c.E_fibre + std::sqrt(disc));
  const double s = 1 / d_f + 2 / d_c;
  if (q * s >= 1)
    CARDIO_FAIL("material: the constants are not positive definite for the element (nu = "
                << nu << " too close to the incompressible limit for this anisotropy)");
  return {d_f, d_c, q / (1 - q * s)};
}

double bulk_of(const NormalBlock& b) { return b.lambda + 1 / (1 / b.d_f + 2 / b.d_c); }

void check_positive(double v, const char* what) {
  if (!(v > 0) || !std::isfinite(v)) CARDIO_FAIL("material: " << what << " must be > 0, got " << v);
}

}  // namespace

ElasticConstants ElasticConstants::isotropic(double E, double nu) {
  check_positive(E, "Young's modulus");
  if (!(nu > -1 && nu < 0.5)) CARDIO_FAIL("material: Poisson ratio must be in (-1, 0.5), got " << nu);
  return {E, E, E / (2 * (1 + nu)), nu};
}

ElasticConstants ElasticConstants::transversely_isotropic(double E_f, double E_c, double G, double nu) {
  check_positive(E_f, "E_fibre");
  check_positive(E_c, "E_cross");
  check_positive(G, "G (fibre shear modulus)");
  // In-plane Poisson ratios of anisotropic materials may exceed 1/2 (stiff fibres force the
  // volume change into the cross plane); positive definiteness is checked by the calibration.
  if (!(nu > -1 && nu < 1)) CARDIO_FAIL("material: cross-fibre Poisson ratio must be in (-1, 1), got " << nu);
  return {E_f, E_c, G, nu};
}

ElasticConstants ElasticConstants::transversely_isotropic_bulk(double E_f, double E_c, double G, double K) {
  check_positive(K, "bulk modulus");
  // K grows monotonically with nu_cross: bisection on the admissible interval.
  auto bulk = [&](double nu) -> double {
    try {
      return bulk_of(normal_block(transversely_isotropic(E_f, E_c, G, nu)));
    } catch (const Error&) {
      return std::numeric_limits<double>::infinity();
    }
  };
  double lo = -0.999, hi = 0.9999999;
  while (hi > lo && !std::isfinite(bulk(hi))) hi -= 1e-3;
  if (!(bulk(lo) <= K && K <= bulk(hi)))
    CARDIO_FAIL("material: bulk modulus " << K << " kPa is outside the range " << bulk(lo) << " .. " << bulk(hi)
                                          << " kPa reachable with E_fibre = " << E_f << ", E_cross = " << E_c
                                          << " kPa");
  for (int it = 0; it < 200; ++it) {
    const double mid = 0.5 * (lo + hi);
    (bulk(mid) < K ? lo : hi) = mid;
  }
  return transversely_isotropic(E_f, E_c, G, 0.5 * (lo + hi));
}

BCModuli calibrate_bourguignon_cani(const ElasticConstants& c, const BCCalibration& o) {
  const NormalBlock nb = normal_block(c);
  const double G_sn = 0.5 * nb.d_c;  // E_c / (2 (1 + nu_cross)): isotropy in the s-n plane
  BCModuli m;
  const std::array<double, 3> d{nb.d_f, nb.d_c, nb.d_c};
  for (int a = 0; a < 3; ++a) {
    m.axial[a].kind = o.law;
    m.axial[a].modulus = d[a];
    if (o.law == AxisLaw::Kind::exponential) {
      if (!(o.exponent[a] > 0))
        CARDIO_FAIL("material: exponential law needs b > 0 on every axis, got b[" << a << "] = " << o.exponent[a]);
      m.axial[a].b = o.exponent[a];
    }
  }
  if (!(o.radial_share >= 0 && o.radial_share <= 1))
    CARDIO_FAIL("element: radial_share must be in [0, 1], got " << o.radial_share);
  double r = 0, kappa = 0;
  if (o.volume_terms) {
    r = o.radial_share * std::max(0.0, std::min({nb.lambda, c.G_fibre, G_sn}));
    kappa = nb.lambda - r;
  }
  m.radial = r;
  m.bulk_jacobian = kappa;
  m.shear = {c.G_fibre - r, c.G_fibre - r, G_sn - r};
  m.hourglass = o.hourglass_factor * std::min(c.E_fibre, c.E_cross);
  m.damping_time = o.damping_time;
  return m;
}

BaudetConstants calibrate_baudet(double E, double nu, double h, double damping_time, double hourglass_factor) {
  check_positive(E, "Young's modulus");
  // k_edge > 0 needs nu > -1/4; the corrective coefficient is singular at nu = 1/2.
  if (!(nu > -0.25 && nu < 0.5))
    CARDIO_FAIL("material: Baudet's cube needs a Poisson ratio in (-0.25, 0.5), got " << nu);
  BaudetConstants c;
  c.k_edge = E * h * (4 * nu + 1) / (8 * (1 + nu));  // Baudet et al. 2007, eq. 8
  c.k_diag = 3 * E * h / (8 * (1 + nu));             // eq. 7
  c.gamma = (4 * nu - 1) / 2;                        // eq. 9, see docs/calibration.md
  c.hourglass = hourglass_factor * E * h / 6;
  c.damping_time = damping_time;
  return c;
}

Eigen::Matrix<double, 6, 6> stiffness_voigt(const BCModuli& m) {
  Eigen::Matrix<double, 6, 6> C = Eigen::Matrix<double, 6, 6>::Zero();
  const double coupling = m.bulk_jacobian + m.radial;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) C(i, j) = coupling + (i == j ? m.axial[i].modulus : 0.0);
  C(3, 3) = m.shear[2] + m.radial;  // s-n
  C(4, 4) = m.shear[1] + m.radial;  // f-n
  C(5, 5) = m.shear[0] + m.radial;  // f-s
  return C;
}

Eigen::Matrix<double, 6, 6> rotate_voigt(const Eigen::Matrix<double, 6, 6>& C, const Eigen::Matrix3d& R) {
  // Rotate the 4th-order tensor C_ijkl -> R_ip R_jq R_kr R_ls C_pqrs via index tables.
  const int vi[3][3] = {{0, 5, 4}, {5, 1, 3}, {4, 3, 2}};
  auto c4 = [&](int i, int j, int k, int l) { return C(vi[i][j], vi[k][l]); };
  Eigen::Matrix<double, 6, 6> out = Eigen::Matrix<double, 6, 6>::Zero();
  const int pairs[6][2] = {{0, 0}, {1, 1}, {2, 2}, {1, 2}, {0, 2}, {0, 1}};
  for (int I = 0; I < 6; ++I)
    for (int J = 0; J < 6; ++J) {
      const int i = pairs[I][0], j = pairs[I][1], k = pairs[J][0], l = pairs[J][1];
      double s = 0;
      for (int p = 0; p < 3; ++p)
        for (int q = 0; q < 3; ++q)
          for (int r = 0; r < 3; ++r)
            for (int t = 0; t < 3; ++t) s += R(i, p) * R(j, q) * R(k, r) * R(l, t) * c4(p, q, r, t);
      out(I, J) = s;
    }
  return out;
}

}  // namespace cardio::mechanics
