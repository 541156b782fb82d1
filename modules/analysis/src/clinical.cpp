#include "cardio/analysis/clinical.hpp"

#include <Eigen/Geometry>
#include <cmath>
#include <numbers>

#include "cardio/core/error.hpp"

namespace cardio::analysis {

double engineering_strain(double green_lagrange) {
  const double stretch_squared = 1.0 + 2.0 * green_lagrange;
  if (!std::isfinite(stretch_squared) || stretch_squared < 0) return std::numeric_limits<double>::quiet_NaN();
  return std::sqrt(stretch_squared) - 1.0;
}

Eigen::VectorXd engineering_strain(const Eigen::VectorXd& green_lagrange) {
  return green_lagrange.unaryExpr([](double E) { return engineering_strain(E); });
}

std::vector<std::int32_t> slice_nodes(const Eigen::Matrix3Xd& x, const std::vector<std::int32_t>& candidates,
                                      const Eigen::Vector3d& point, const Eigen::Vector3d& direction, double height,
                                      double half_thickness) {
  CARDIO_CHECK(direction.norm() > 1e-12, "slice nodes: zero axis direction");
  const Eigen::Vector3d l = direction.normalized();
  std::vector<std::int32_t> out;
  for (const std::int32_t n : candidates) {
    CARDIO_CHECK(n >= 0 && n < x.cols(), "slice nodes: node " << n << " outside the " << x.cols() << " positions");
    if (std::abs((x.col(n) - point).dot(l) - height) <= half_thickness) out.push_back(n);
  }
  return out;
}

double slice_rotation_deg(const Eigen::Matrix3Xd& x_ref, const Eigen::Matrix3Xd& x,
                          const std::vector<std::int32_t>& nodes, const Eigen::Vector3d& direction) {
  CARDIO_CHECK(direction.norm() > 1e-12, "slice rotation: zero axis direction");
  CARDIO_CHECK(!nodes.empty(), "slice rotation: the slice has no nodes");
  CARDIO_CHECK(x_ref.cols() == x.cols(),
               "slice rotation: " << x_ref.cols() << " reference and " << x.cols() << " current positions");
  const Eigen::Vector3d l = direction.normalized();
  Eigen::Vector3d c_ref = Eigen::Vector3d::Zero(), c = Eigen::Vector3d::Zero();
  for (const std::int32_t n : nodes) {
    CARDIO_CHECK(n >= 0 && n < x.cols(), "slice rotation: node " << n << " outside the " << x.cols() << " positions");
    c_ref += x_ref.col(n);
    c += x.col(n);
  }
  c_ref /= double(nodes.size());
  c /= double(nodes.size());
  const auto in_plane = [&](const Eigen::Vector3d& v) -> Eigen::Vector3d { return v - v.dot(l) * l; };
  double sin_sum = 0, cos_sum = 0;
  for (const std::int32_t n : nodes) {
    const Eigen::Vector3d a = in_plane(x_ref.col(n) - c_ref), b = in_plane(x.col(n) - c);
    sin_sum += a.cross(b).dot(-l);
    cos_sum += a.dot(b);
  }
  return std::atan2(sin_sum, cos_sum) * 180.0 / std::numbers::pi;
}

RateExtremes rate_extremes(const Eigen::VectorXd& t_ms, const Eigen::VectorXd& y, double t_begin_ms, double t_end_ms) {
  CARDIO_CHECK(t_ms.size() == y.size(), "rate extremes: " << t_ms.size() << " times and " << y.size() << " values");
  RateExtremes r;
  Eigen::Index inside = 0;
  for (Eigen::Index i = 0; i < t_ms.size(); ++i) {
    if (i > 0) CARDIO_CHECK(t_ms[i] > t_ms[i - 1], "rate extremes: times not increasing at sample " << i);
    if (t_ms[i] < t_begin_ms || t_ms[i] > t_end_ms) continue;
    CARDIO_CHECK(std::isfinite(y[i]), "rate extremes: value " << y[i] << " at t = " << t_ms[i] << " ms");
    ++inside;
  }
  CARDIO_CHECK(inside >= 3, "rate extremes: " << inside << " samples in [" << t_begin_ms << ", " << t_end_ms
                                              << "] ms, at least 3 needed");
  for (Eigen::Index i = 1; i + 1 < t_ms.size(); ++i) {
    if (t_ms[i - 1] < t_begin_ms || t_ms[i + 1] > t_end_ms) continue;
    const double rate = (y[i + 1] - y[i - 1]) / (t_ms[i + 1] - t_ms[i - 1]);
    if (!(rate <= r.max)) r.max = rate, r.t_max_ms = t_ms[i];
    if (!(rate >= r.min)) r.min = rate, r.t_min_ms = t_ms[i];
  }
  return r;
}

}  // namespace cardio::analysis
