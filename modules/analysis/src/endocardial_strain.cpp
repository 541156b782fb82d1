#include "cardio/analysis/endocardial_strain.hpp"

#include <Eigen/Geometry>
#include <algorithm>
#include <map>

#include "cardio/analysis/axis.hpp"
#include "cardio/core/error.hpp"
#include "cardio/surfaces/smoothing.hpp"

namespace cardio::analysis {
namespace {

/// The tangents of a bilinear quad at its centre: the means of its opposite edges.
std::pair<Eigen::Vector3d, Eigen::Vector3d> centre_tangents(const Eigen::Matrix3Xd& y, const mechanics::Quad& q) {
  const auto p = [&](int k) { return y.col(q[std::size_t(k)]); };
  return {0.5 * ((p(1) - p(0)) + (p(2) - p(3))), 0.5 * ((p(3) - p(0)) + (p(2) - p(1)))};
}

/// |F t| - 1 for the unit t in the plane of (a, b), F mapping a -> a2 and b -> b2.
double stretch_minus_one(const Eigen::Vector3d& t, const Eigen::Vector3d& a, const Eigen::Vector3d& b,
                         const Eigen::Vector3d& a2, const Eigen::Vector3d& b2) {
  Eigen::Matrix2d gram;
  gram << a.dot(a), a.dot(b), a.dot(b), b.dot(b);
  const Eigen::Vector2d coef = gram.inverse() * Eigen::Vector2d(t.dot(a), t.dot(b));
  return (coef[0] * a2 + coef[1] * b2).norm() - 1.0;
}

}  // namespace

EndocardialSurface endocardial_surface(const std::vector<mechanics::Quad>& faces) {
  std::map<std::int32_t, std::int32_t> local;
  for (std::size_t f = 0; f < faces.size(); ++f)
    for (const std::int32_t n : faces[f]) {
      CARDIO_CHECK(n >= 0, "endocardial surface: face " << f << " has node " << n);
      local.emplace(n, 0);
    }
  EndocardialSurface s;
  for (auto& [node, index] : local) {  // ascending node ids: the same surface for the same faces
    index = std::int32_t(s.nodes.size());
    s.nodes.push_back(node);
  }
  for (const mechanics::Quad& q : faces) s.quads.push_back({local[q[0]], local[q[1]], local[q[2]], local[q[3]]});
  return s;
}

Eigen::Matrix3Xd smoothed_positions(const EndocardialSurface& s, const Eigen::Matrix3Xd& x) {
  Eigen::Matrix3Xd y(3, Eigen::Index(s.nodes.size()));
  for (std::size_t i = 0; i < s.nodes.size(); ++i) {
    CARDIO_CHECK(s.nodes[i] < x.cols(),
                 "endocardial surface: node " << s.nodes[i] << " of " << x.cols() << " positions");
    y.col(Eigen::Index(i)) = x.col(s.nodes[i]);
  }
  return surfaces::smoothed_points(y, s.quads);
}

EndocardialFrame endocardial_frame(const EndocardialSurface& s, const Eigen::Matrix3Xd& y_ref,
                                   const Eigen::Vector3d& axis_direction) {
  CARDIO_CHECK(y_ref.cols() == Eigen::Index(s.nodes.size()),
               "endocardial frame: " << y_ref.cols() << " positions for " << s.nodes.size() << " surface nodes");
  const Eigen::Vector3d l = unit_axis_direction(CardiacAxis{Eigen::Vector3d::Zero(), axis_direction});
  const Eigen::Index n_faces = Eigen::Index(s.quads.size());
  EndocardialFrame fr{Eigen::Matrix3Xd::Zero(3, n_faces), Eigen::Matrix3Xd::Zero(3, n_faces),
                      Eigen::Matrix3Xd::Zero(3, n_faces), Eigen::Matrix3Xd::Zero(3, n_faces),
                      Eigen::VectorXd::Zero(n_faces)};
  for (Eigen::Index f = 0; f < n_faces; ++f) {
    const auto [a, b] = centre_tangents(y_ref, s.quads[std::size_t(f)]);
    fr.tangent_a.col(f) = a;
    fr.tangent_b.col(f) = b;
    const Eigen::Vector3d area = a.cross(b);  // the bilinear quad's vector area
    if (!(area.norm() > 0)) continue;         // a collapsed face has no normal and no length
    const Eigen::Vector3d n = area.normalized();
    const Eigen::Vector3d t_l = l - l.dot(n) * n;
    if (!(t_l.norm() > 1e-9)) continue;  // the wall is normal to the axis: no meridian
    fr.meridional.col(f) = t_l.normalized();
    fr.circumferential.col(f) = n.cross(fr.meridional.col(f));
    fr.weight[f] = area.norm() * t_l.norm();
  }
  CARDIO_CHECK(fr.weight.sum() > 0, "endocardial frame: none of the " << n_faces
                                                                      << " faces has a meridian (every face normal "
                                                                         "is parallel to the axis, or no faces)");
  return fr;
}

EndocardialStrain endocardial_strain(const EndocardialFrame& frame, const EndocardialSurface& s,
                                     const Eigen::Matrix3Xd& y) {
  const Eigen::Index n_faces = frame.weight.size();
  CARDIO_CHECK(n_faces == Eigen::Index(s.quads.size()) && y.cols() == Eigen::Index(s.nodes.size()),
               "endocardial strain: a frame of " << n_faces << " faces and " << y.cols()
                                                 << " positions for a surface of " << s.quads.size() << " faces and "
                                                 << s.nodes.size() << " nodes");
  double sw = 0, sl = 0, sc = 0;
  for (Eigen::Index f = 0; f < n_faces; ++f) {
    const double w = frame.weight[f];
    if (w == 0) continue;
    const auto [a2, b2] = centre_tangents(y, s.quads[std::size_t(f)]);
    const Eigen::Vector3d a = frame.tangent_a.col(f), b = frame.tangent_b.col(f);
    sw += w;
    sl += w * stretch_minus_one(frame.meridional.col(f), a, b, a2, b2);
    sc += w * stretch_minus_one(frame.circumferential.col(f), a, b, a2, b2);
  }
  return {sl / sw, sc / sw};
}

}  // namespace cardio::analysis
