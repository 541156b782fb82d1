#include "cardio/analysis/axis.hpp"

#include <cmath>
#include <optional>

#include "cardio/core/error.hpp"

namespace cardio::analysis {

Eigen::Vector3d unit_axis_direction(const CardiacAxis& axis) {
  const double n = axis.direction.norm();
  if (!(std::isfinite(n) && n > 1e-12))
    CARDIO_FAIL("cardiac axis: the direction (apex -> base) must be a non-zero finite vector, got ("
                << axis.direction.transpose() << ")");
  if (!axis.point.allFinite()) CARDIO_FAIL("cardiac axis: the point is not finite (" << axis.point.transpose() << ")");
  return axis.direction / n;
}

CardiacAxis cardiac_axis(const meshing::LongAxis& long_axis) {
  CardiacAxis a{long_axis.apex, long_axis.base_normal};
  a.direction = unit_axis_direction(a);
  return a;
}

CardiacAxis cardiac_axis(const meshing::LongAxis& long_axis, const meshing::CavitySurface& lv_cavity,
                         const Eigen::Matrix3Xd& x) {
  CardiacAxis a{cavity_centroid(lv_cavity, x), long_axis.base_normal};
  a.direction = unit_axis_direction(a);
  return a;
}

Eigen::Vector3d cavity_centroid(const meshing::CavitySurface& cavity, const Eigen::Matrix3Xd& x) {
  const Eigen::Matrix3Xd p = meshing::surface_points(cavity, x);
  if (p.cols() == 0 || cavity.triangles.empty()) CARDIO_FAIL("cavity '" << cavity.name << "': empty surface");
  // Tetrahedra from the point mean keep the sums well conditioned far from the origin.
  const Eigen::Vector3d c0 = p.rowwise().mean();
  double volume = 0;
  Eigen::Vector3d moment = Eigen::Vector3d::Zero();
  for (const auto& t : cavity.triangles) {
    const Eigen::Vector3d a = p.col(t[0]) - c0, b = p.col(t[1]) - c0, c = p.col(t[2]) - c0;
    const double v = a.dot(b.cross(c)) / 6.0;
    volume += v;
    moment += v * (a + b + c) / 4.0;
  }
  if (!(volume > 0))
    CARDIO_FAIL("cavity '" << cavity.name << "': enclosed volume " << volume
                           << " mm^3 is not positive (open or inward-oriented surface); no centroid");
  return c0 + moment / volume;
}

Eigen::Vector3d endocardial_apex(const meshing::CavitySurface& lv_cavity, const Eigen::Matrix3Xd& x,
                                 const Eigen::Vector3d& direction) {
  const Eigen::Vector3d l = unit_axis_direction(CardiacAxis{Eigen::Vector3d::Zero(), direction});
  if (lv_cavity.nodes.empty()) CARDIO_FAIL("cavity '" << lv_cavity.name << "': no surface nodes, no endocardial apex");
  std::int32_t best = lv_cavity.nodes.front();
  double lowest = x.col(best).dot(l);
  for (const std::int32_t n : lv_cavity.nodes) {
    const double h = x.col(n).dot(l);
    if (h < lowest) {
      lowest = h;
      best = n;
    }
  }
  return x.col(best);
}

namespace {

/// The line parameter t at which c + t l crosses the triangle (a, b, c2), if it does (Moller and
/// Trumbore 1997, J Graphics Tools 2:21; both orientations, edges included).
std::optional<double> line_crossing(const Eigen::Vector3d& c, const Eigen::Vector3d& l, const Eigen::Vector3d& a,
                                    const Eigen::Vector3d& b, const Eigen::Vector3d& c2) {
  const Eigen::Vector3d e1 = b - a, e2 = c2 - a, p = l.cross(e2);
  const double det = e1.dot(p);
  if (std::abs(det) < 1e-14 * e1.norm() * e2.norm()) return std::nullopt;  // the line is in the triangle's plane
  const Eigen::Vector3d s = c - a;
  const double u = s.dot(p) / det;
  if (u < 0 || u > 1) return std::nullopt;
  const Eigen::Vector3d q = s.cross(e1);
  const double v = l.dot(q) / det;
  if (v < 0 || u + v > 1) return std::nullopt;
  return e2.dot(q) / det;
}

}  // namespace

Eigen::Vector3d axial_apex(const meshing::CavitySurface& cavity, const Eigen::Matrix3Xd& x,
                           const Eigen::Vector3d& direction) {
  const Eigen::Vector3d l = unit_axis_direction(CardiacAxis{Eigen::Vector3d::Zero(), direction});
  const Eigen::Vector3d c = cavity_centroid(cavity, x);
  const Eigen::Matrix3Xd p = meshing::surface_points(cavity, x);
  std::optional<double> lowest;
  for (std::int64_t i = 0; i < cavity.n_endocardial_triangles; ++i) {
    const auto& t = cavity.triangles[std::size_t(i)];
    const auto hit = line_crossing(c, l, p.col(t[0]), p.col(t[1]), p.col(t[2]));
    if (hit && (!lowest || *hit < *lowest)) lowest = hit;
  }
  if (!lowest || *lowest >= 0) return endocardial_apex(cavity, x, direction);
  return c + *lowest * l;
}

}  // namespace cardio::analysis
