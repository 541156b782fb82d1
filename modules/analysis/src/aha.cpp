#include "cardio/analysis/aha.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

#include "cardio/core/error.hpp"
#include "cardio/core/parallel.hpp"

namespace cardio::analysis {
namespace {

/// The checked geometry of an AhaSpec: unit axis l, in-plane basis (ref, q) with theta measured from
/// ref towards q, and the endocardial apex height h_a < 0.
struct AhaFrame {
  Eigen::Vector3d l, ref, q;
  double h_apex = 0;
};

AhaFrame make_frame(const AhaSpec& spec) {
  AhaFrame f;
  f.l = unit_axis_direction(spec.axis);
  if (!spec.base_point.allFinite() || !spec.endocardial_apex.allFinite())
    CARDIO_FAIL("AHA segments: base point (" << spec.base_point.transpose() << ") and endocardial apex ("
                                             << spec.endocardial_apex.transpose() << ") must be finite");
  const Eigen::Vector3d& a = spec.anterior_rv_insertion;
  const Eigen::Vector3d a_perp = a - a.dot(f.l) * f.l;
  if (!(a.allFinite() && a.norm() > 1e-12 && a_perp.norm() > 1e-6 * a.norm()))
    CARDIO_FAIL("AHA segments: the reference direction (anterior RV insertion) ("
                << a.transpose() << ") must be non-zero and not parallel to the long axis (" << f.l.transpose() << ")");
  f.ref = a_perp.normalized();
  // Positive rotation about -l looks clockwise from the base (the viewer on the +l side).
  const Eigen::Vector3d n_rot = spec.clockwise_from_base ? Eigen::Vector3d(-f.l) : f.l;
  f.q = n_rot.cross(f.ref);
  f.h_apex = (spec.endocardial_apex - spec.base_point).dot(f.l);
  if (!(f.h_apex < 0))
    CARDIO_FAIL(
        "AHA segments: the endocardial apex must lie below the base plane (towards the apex); its height "
        "along the axis is "
        << f.h_apex << " mm");
  return f;
}

int segment_in_frame(const Eigen::Vector3d& c, const AhaSpec& spec, const AhaFrame& f) {
  const double h = (c - spec.base_point).dot(f.l);
  if (h < f.h_apex) return 17;
  const int ring = h >= f.h_apex / 3 ? 0 : h >= 2 * f.h_apex / 3 ? 1 : 2;  // basal, mid, apical
  const Eigen::Vector3d offset = c - spec.axis.point;
  double theta = std::atan2(offset.dot(f.q), offset.dot(f.ref)) * 180.0 / std::numbers::pi;
  if (theta < 0) theta += 360.0;
  if (ring < 2) {
    // Sector k from the anterior RV insertion: anteroseptal, inferoseptal, inferior, inferolateral,
    // anterolateral, anterior = segments 2, 3, 4, 5, 6, 1 (+6 for mid).
    const int k = std::min(5, static_cast<int>(theta / 60.0));
    return 6 * ring + (k + 1) % 6 + 1;
  }
  // Apical: 90 deg sectors from theta = 15: septal 14, inferior 15, lateral 16, anterior 13.
  double shifted = theta - 15.0;
  if (shifted < 0) shifted += 360.0;
  const int k = std::min(3, static_cast<int>(shifted / 90.0));
  return 13 + (k + 1) % 4;
}

}  // namespace

int aha_segment_of(const Eigen::Vector3d& centre, const AhaSpec& spec) {
  return segment_in_frame(centre, spec, make_frame(spec));
}

std::vector<std::uint8_t> aha_segments(const mechanics::HexMesh& mesh, const std::vector<std::int32_t>& element_label,
                                       const AhaSpec& spec) {
  const AhaFrame f = make_frame(spec);
  const std::int64_t n = mesh.n_elements();
  if (!spec.lv_labels.empty() && std::int64_t(element_label.size()) != n)
    CARDIO_FAIL("AHA segments: " << element_label.size() << " element labels for " << n << " elements");
  std::vector<std::uint8_t> segment(std::size_t(n), 0);
  parallel_for(n, [&](std::int64_t e) {
    if (!spec.lv_labels.empty() &&
        std::find(spec.lv_labels.begin(), spec.lv_labels.end(), element_label[std::size_t(e)]) == spec.lv_labels.end())
      return;
    const Eigen::Vector3d c = mechanics::gather(mesh.rest, mesh.hexes[std::size_t(e)]).rowwise().sum() / 8.0;
    segment[std::size_t(e)] = static_cast<std::uint8_t>(segment_in_frame(c, spec, f));
  });
  return segment;
}

std::array<double, kAhaSegments + 1> segment_volumes(const mechanics::HexMesh& mesh, const Eigen::Matrix3Xd& x,
                                                     const std::vector<std::uint8_t>& segment) {
  CARDIO_CHECK(std::int64_t(segment.size()) == mesh.n_elements(),
               "segment volumes: " << segment.size() << " segment ids for " << mesh.n_elements() << " elements");
  const Eigen::VectorXd v = mechanics::element_volumes(mesh, x);
  std::array<double, kAhaSegments + 1> total{};
  for (std::size_t e = 0; e < segment.size(); ++e) {
    CARDIO_CHECK(segment[e] <= kAhaSegments, "segment id " << int(segment[e]) << " of element " << e << " > 17");
    total[segment[e]] += v(Eigen::Index(e));
  }
  return total;
}

std::array<double, kAhaSegments + 1> segment_means(const Eigen::VectorXd& value, const Eigen::VectorXd& weight,
                                                   const std::vector<std::uint8_t>& segment) {
  CARDIO_CHECK(value.size() == weight.size() && std::size_t(value.size()) == segment.size(),
               "segment means: " << value.size() << " values, " << weight.size() << " weights, " << segment.size()
                                 << " segment ids");
  std::array<double, kAhaSegments + 1> sum{}, wsum{};
  for (std::size_t e = 0; e < segment.size(); ++e) {
    CARDIO_CHECK(segment[e] <= kAhaSegments, "segment id " << int(segment[e]) << " of element " << e << " > 17");
    sum[segment[e]] += weight(Eigen::Index(e)) * value(Eigen::Index(e));
    wsum[segment[e]] += weight(Eigen::Index(e));
  }
  std::array<double, kAhaSegments + 1> mean{};
  for (int s = 0; s <= kAhaSegments; ++s)
    mean[std::size_t(s)] = wsum[std::size_t(s)] > 0 ? sum[std::size_t(s)] / wsum[std::size_t(s)]
                                                    : std::numeric_limits<double>::quiet_NaN();
  return mean;
}

}  // namespace cardio::analysis
