#include "cardio/phantoms/phantoms.hpp"

#include <Eigen/LU>
#include <algorithm>
#include <cmath>
#include <limits>

#include "cardio/core/error.hpp"
#include "cardio/core/parallel.hpp"

namespace cardio::phantoms {
namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr double kDeg = kPi / 180.0;

/// sum_i (d_i / s_i(t))^2 - 1: positive outside the surface t, decreasing in t.
double level(const EllipsoidShell& shell, const Eigen::Vector3d& d, double t) {
  return d.cwiseQuotient(shell.semi_axes(t)).squaredNorm() - 1.0;
}

double wrap_axis_angle(double deg) {
  if (deg > 90.0) deg -= 180.0;
  if (deg <= -90.0) deg += 180.0;
  return deg;
}

void check_shell(const EllipsoidShell& s, const char* what) {
  for (int a = 0; a < 3; ++a) {
    if (!(s.inner[a] > 0) || !(s.outer[a] > s.inner[a]))
      CARDIO_FAIL(what << ": semi-axes must satisfy 0 < endocardial < epicardial on every axis (got endocardial "
                       << s.inner.transpose() << ", epicardial " << s.outer.transpose() << " mm)");
  }
}

/// Voxel layers of thickness h needed to cover `extent` from a face at 0, plus one empty layer
/// (a double: a tiny h gives a huge count, not an overflow).
double layers_to(double extent, double h) { return std::ceil(std::max(0.0, extent) / h - 1e-9) + 1; }

/// Layers of the phantom grid on each side of its origin planes (x = 0, y = 0, z = z_base): faces at
/// multiples of h in x and y (no centre on the long axis), faces on z = z_base, one empty layer of
/// margin on every side (including above the base).
struct GridLayers {
  double x_lo, x_hi, y_lo, y_hi, z_lo;
};
GridLayers grid_layers(const PhantomSpec& spec) {
  const EllipsoidShell lv = spec.lv.shell(), rv = spec.rv.shell();
  const double h = spec.voxel_size, z_base = spec.lv.z_base;
  // Bounding box of the heart in the phantom frame.
  Eigen::Vector3d lo(-lv.outer.x(), -lv.outer.y(), -lv.outer.z());
  Eigen::Vector3d hi(lv.outer.x(), lv.outer.y(), z_base);
  if (spec.biventricular) {
    lo = lo.cwiseMin(rv.centre - rv.outer);
    hi = hi.cwiseMax(rv.centre + rv.outer);
    hi.z() = z_base;
  }
  return {layers_to(-lo.x(), h), layers_to(hi.x(), h), layers_to(-lo.y(), h), layers_to(hi.y(), h),
          layers_to(z_base - lo.z(), h)};
}

}  // namespace

Eigen::Vector3d phantom_grid_size(const PhantomSpec& spec) {
  const GridLayers g = grid_layers(spec);
  return {g.x_lo + g.x_hi, g.y_lo + g.y_hi, g.z_lo + 1};
}

EllipsoidShell LvGeometry::shell() const {
  return EllipsoidShell{Eigen::Vector3d::Zero(), Eigen::Vector3d(endo_short, endo_short, endo_long),
                        Eigen::Vector3d(epi_short, epi_short, epi_long)};
}

double truncated_ellipsoid_volume(double r_s, double r_l, double z_base) {
  return kPi * r_s * r_s * (z_base - z_base * z_base * z_base / (3.0 * r_l * r_l) + 2.0 * r_l / 3.0);
}

ShellCoordinates shell_coordinates(const EllipsoidShell& shell, const Eigen::Vector3d& p) {
  const Eigen::Vector3d d = p - shell.centre;
  // Bracket the root of level(t) = 0; the semi-axes stay positive for t > t_min.
  double t_min = -std::numeric_limits<double>::infinity();
  for (int a = 0; a < 3; ++a) {
    const double slope = shell.outer[a] - shell.inner[a];
    if (slope > 0) t_min = std::max(t_min, -shell.inner[a] / slope);
  }
  double lo = 0.0, hi = 1.0;
  if (level(shell, d, 0.0) < 0.0) {
    hi = 0.0;
    lo = std::isfinite(t_min) ? t_min + 1e-12 * (1.0 - t_min) : -1.0;
  } else if (level(shell, d, 1.0) > 0.0) {
    lo = 1.0;
    hi = 2.0;
    while (level(shell, d, hi) > 0.0 && hi < 1e12) hi *= 2.0;
  }
  for (int it = 0; it < 200 && hi - lo > 1e-14; ++it) {
    const double mid = 0.5 * (lo + hi);
    (level(shell, d, mid) > 0.0 ? lo : hi) = mid;
  }
  ShellCoordinates c;
  c.t = 0.5 * (lo + hi);
  const Eigen::Vector3d s = shell.semi_axes(c.t);
  const Eigen::Vector3d q = d.cwiseQuotient(s);  // on the unit sphere
  const double cos_u = std::clamp(q.z(), -1.0, 1.0);
  const double sin_u = -std::sqrt(std::max(0.0, 1.0 - cos_u * cos_u));  // u in [-pi, 0]
  c.u = std::atan2(sin_u, cos_u);
  // x = a sin(u) cos(v) with sin(u) <= 0, hence v = atan2(-y/b, -x/a) (v = 0 on the axis).
  c.v = (q.x() == 0.0 && q.y() == 0.0) ? 0.0 : std::atan2(-q.y(), -q.x());
  const double cos_v = std::cos(c.v), sin_v = std::sin(c.v);
  // dx/dv = sin(u) (-a sin v, b cos v, 0); with sin(u) < 0 its direction is (a sin v, -b cos v, 0).
  c.e_v = Eigen::Vector3d(s.x() * sin_v, -s.y() * cos_v, 0.0).normalized();
  const Eigen::Vector3d dxdu(s.x() * cos_u * cos_v, s.y() * cos_u * sin_v, -s.z() * sin_u);
  Eigen::Vector3d e_u = dxdu.normalized();
  e_u -= e_u.dot(c.e_v) * c.e_v;  // a no-op when a == b (the LV)
  c.e_u = e_u.normalized();
  c.normal = q.cwiseQuotient(s).normalized();
  return c;
}

Eigen::Vector3d analytic_fibre(const EllipsoidShell& shell, const HelixRule& rule, const Eigen::Vector3d& p) {
  const ShellCoordinates c = shell_coordinates(shell, p);
  const double alpha = (rule.endo_deg + c.t * (rule.epi_deg - rule.endo_deg)) * kDeg;
  return (std::sin(alpha) * c.e_u + std::cos(alpha) * c.e_v).normalized();
}

double helix_angle_deg(const EllipsoidShell& shell, const Eigen::Vector3d& p, const Eigen::Vector3d& w) {
  const ShellCoordinates c = shell_coordinates(shell, p);
  return wrap_axis_angle(std::atan2(w.dot(c.e_u), w.dot(c.e_v)) / kDeg);
}

namespace {

// The helix rule in the phantom frame at p: f = sin(alpha) e_u + cos(alpha) e_v, s = the shell
// normal orthogonalised against f.
FibreSheet rule_frame(const EllipsoidShell& shell, const HelixRule& helix, const Eigen::Vector3d& p) {
  const ShellCoordinates c = shell_coordinates(shell, p);
  const double alpha = (helix.endo_deg + c.t * (helix.epi_deg - helix.endo_deg)) * kDeg;
  const Eigen::Vector3d f = (std::sin(alpha) * c.e_u + std::cos(alpha) * c.e_v).normalized();
  return {f, (c.normal - c.normal.dot(f) * f).normalized()};
}

}  // namespace

FibreSheet phantom_fibre_sheet(const PhantomSpec& spec, std::int32_t label, const Eigen::Vector3d& p) {
  const bool rv = spec.biventricular && label == spec.labels.rv_myocardium;
  const EllipsoidShell shell = rv ? spec.rv.shell() : spec.lv.shell();
  const FibreSheet local = rule_frame(shell, spec.helix, spec.rotation.transpose() * p);
  return {spec.rotation * local.fibre, spec.rotation * local.sheet};
}

Eigen::Vector3d project_onto_surface(const PhantomSpec& spec, PhantomSurface surface, const Eigen::Vector3d& p) {
  const bool rv = surface == PhantomSurface::rv_endocardium || surface == PhantomSurface::rv_epicardium;
  const bool outer = surface == PhantomSurface::lv_epicardium || surface == PhantomSurface::rv_epicardium;
  const EllipsoidShell shell = rv ? spec.rv.shell() : spec.lv.shell();
  const Eigen::Vector3d semi = outer ? shell.outer : shell.inner;
  const Eigen::Vector3d d = spec.rotation.transpose() * p - shell.centre;
  const double s = d.cwiseQuotient(semi).norm();
  if (!(s > 0)) return p;  // the centre itself: no ray
  return spec.rotation * (shell.centre + d / s);
}

Phantom make_phantom(const PhantomSpec& spec) {
  const double h = spec.voxel_size;
  if (!(h > 0) || !std::isfinite(h)) CARDIO_FAIL("phantom voxel size must be positive (got " << h << " mm)");
  const Eigen::Matrix3d& R = spec.rotation;
  if (!R.allFinite() || (R.transpose() * R - Eigen::Matrix3d::Identity()).cwiseAbs().maxCoeff() > 1e-9 ||
      R.determinant() < 0)
    CARDIO_FAIL("phantom rotation must be a proper orthonormal matrix (R^T R = I, det R = +1)");
  const EllipsoidShell lv = spec.lv.shell();
  check_shell(lv, "LV phantom");
  const EllipsoidShell rv = spec.rv.shell();
  if (spec.biventricular) check_shell(rv, "RV of the biventricular phantom");
  const double z_base = spec.lv.z_base;
  if (!(z_base > -spec.lv.endo_long))
    CARDIO_FAIL("phantom base plane z = " << z_base << " mm lies below the endocardial apex");

  const Eigen::Vector3d n = phantom_grid_size(spec);
  if (n.prod() > 2e9)
    CARDIO_FAIL("phantom grid of " << n.x() << "x" << n.y() << "x" << n.z()
                                   << " voxels is too large; use a larger voxel size");
  const GridLayers layers = grid_layers(spec);
  const auto nx_lo = std::int64_t(layers.x_lo), ny_lo = std::int64_t(layers.y_lo), nz_lo = std::int64_t(layers.z_lo);
  imaging::Grid grid;
  grid.size = {std::int64_t(n.x()), std::int64_t(n.y()), std::int64_t(n.z())};
  grid.spacing = Eigen::Vector3d::Constant(h);
  const Eigen::Vector3d local_origin((0.5 - double(nx_lo)) * h, (0.5 - double(ny_lo)) * h,
                                     z_base + (0.5 - double(nz_lo)) * h);
  grid.origin = local_origin;
  grid.direction = Eigen::Matrix3d::Identity();

  Phantom out;
  out.labels.grid = grid;
  out.labels.values.assign(static_cast<std::size_t>(grid.n_voxels()), spec.labels.outside);
  out.fibre.grid = grid;
  out.fibre.values.assign(static_cast<std::size_t>(grid.n_voxels()), Eigen::Vector3f::Zero());
  out.sheet.grid = grid;
  out.sheet.values.assign(static_cast<std::size_t>(grid.n_voxels()), Eigen::Vector3f::Zero());

  const double a0 = spec.lv.endo_short, l0 = spec.lv.endo_long, a1 = spec.lv.epi_short, l1 = spec.lv.epi_long;
  const PhantomLabels& L = spec.labels;
  const std::int64_t plane = grid.size[0] * grid.size[1];
  parallel_for(grid.n_voxels(), [&](std::int64_t v) {
    const std::int64_t k = v / plane;
    const std::int64_t j = (v - k * plane) / grid.size[0];
    const std::int64_t i = v - k * plane - j * grid.size[0];
    const Eigen::Vector3d p = grid.point(i, j, k);  // phantom frame (identity direction here)
    if (p.z() > z_base) return;
    const double rho2 = p.x() * p.x() + p.y() * p.y();
    const double f_endo = rho2 / (a0 * a0) + p.z() * p.z() / (l0 * l0);
    const double f_epi = rho2 / (a1 * a1) + p.z() * p.z() / (l1 * l1);
    const EllipsoidShell* shell = nullptr;
    std::int32_t label = L.outside;
    if (f_endo < 1.0) {
      label = L.lv_cavity;
    } else if (f_epi <= 1.0) {
      label = L.lv_myocardium;
      shell = &lv;
    } else if (spec.biventricular) {
      const Eigen::Vector3d d = p - rv.centre;
      if (d.cwiseQuotient(rv.inner).squaredNorm() < 1.0) {
        label = L.rv_cavity;
      } else if (d.cwiseQuotient(rv.outer).squaredNorm() <= 1.0) {
        label = L.rv_myocardium;
        shell = &rv;
      }
    }
    const auto idx = static_cast<std::size_t>(v);
    out.labels.values[idx] = label;
    if (!shell) return;
    const FibreSheet fs = rule_frame(*shell, spec.helix, p);
    out.fibre.values[idx] = (R * fs.fibre).cast<float>();
    out.sheet.values[idx] = (R * fs.sheet).cast<float>();
  });

  // Rotate the physical object: centre(i,j,k) = R * (unrotated centre).
  for (imaging::Grid* g : {&out.labels.grid, &out.fibre.grid, &out.sheet.grid}) {
    g->direction = R;
    g->origin = R * local_origin;
  }
  return out;
}

}  // namespace cardio::phantoms
