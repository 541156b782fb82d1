#include "cardio/analysis/axis.hpp"

#include <cmath>

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

}  // namespace cardio::analysis
