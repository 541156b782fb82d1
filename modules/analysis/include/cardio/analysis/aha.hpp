#pragma once
/// @file aha.hpp
/// AHA 17-segment model of the left ventricle (Cerqueira et al. 2002, Circulation 105:539-542) on a
/// hexahedral mesh, and regional (per-segment) volumes and means.
///
/// Rule (docs/analysis.md, "AHA segments"), with the element centre c at rest, l the unit axis
/// direction (apex -> base), h = (c - base_point).l its height above the base plane (negative below)
/// and h_a = (endocardial_apex - base_point).l < 0:
/// - longitudinal: h < h_a -> 17 (apical cap: below the endocardial apex); otherwise the range
///   [h_a, 0] is cut into thirds: h >= h_a/3 basal (elements above the base plane too),
///   h >= 2 h_a/3 mid, else apical.
/// - circumferential: theta = the angle of the centre's radial offset from the axis line, measured
///   from `anterior_rv_insertion` (projected orthogonal to l). With the default order theta grows
///   clockwise seen from the base (= counterclockwise seen from the apex, as in the bull's eye plot
///   with the septum on the left; in a right-handed anatomical frame this takes the anterior wall to
///   the septum). Basal/mid: 6 sectors of 60 deg starting at the anterior RV insertion:
///   [0, 60) anteroseptal 2/8, [60, 120) inferoseptal 3/9, [120, 180) inferior 4/10,
///   [180, 240) inferolateral 5/11, [240, 300) anterolateral 6/12, [300, 360) anterior 1/7.
///   Apical: 4 sectors of 90 deg centred on the same septum (theta = 60): [15, 105) septal 14,
///   [105, 195) inferior 15, [195, 285) lateral 16, [285, 375) anterior 13.
#include <Eigen/Core>
#include <array>
#include <cstdint>
#include <vector>

#include "cardio/analysis/axis.hpp"
#include "cardio/mechanics/mesh.hpp"

namespace cardio::analysis {

inline constexpr int kAhaSegments = 17;

/// Geometry of the AHA rule (all in the configuration the segments are assigned in, normally rest).
struct AhaSpec {
  CardiacAxis axis;                                ///< LV long axis (point, direction apex -> base)
  Eigen::Vector3d base_point{0, 0, 0};             ///< a point on the base plane (normal = axis direction) [mm]
  Eigen::Vector3d endocardial_apex{0, 0, 0};       ///< only its height along the axis is used [mm]
  Eigen::Vector3d anterior_rv_insertion{1, 0, 0};  ///< direction from the axis to the anterior RV insertion
  bool clockwise_from_base = true;                 ///< sector order; false mirrors it (left-handed geometry)
  std::vector<std::int32_t> lv_labels;             ///< element labels of the LV; empty = every element
};

/// Segment id per element: 1..17, 0 for elements whose label is not in spec.lv_labels. Assigned from
/// the rest positions (segments are material). `element_label` has one entry per element (may be
/// empty when spec.lv_labels is empty). Throws cardio::Error for a zero axis direction, a reference
/// direction that is zero or parallel to the axis, an endocardial apex not below the base plane, or
/// a label array of the wrong size.
std::vector<std::uint8_t> aha_segments(const mechanics::HexMesh& mesh, const std::vector<std::int32_t>& element_label,
                                       const AhaSpec& spec);

/// Segment of one point (the rule above; `lv` is not checked). 1..17.
int aha_segment_of(const Eigen::Vector3d& centre, const AhaSpec& spec);

/// Volume per segment at positions x [mm^3]: index 0 = elements outside the LV, 1..17 the segments.
/// Summed in element order (deterministic).
std::array<double, kAhaSegments + 1> segment_volumes(const mechanics::HexMesh& mesh, const Eigen::Matrix3Xd& x,
                                                     const std::vector<std::uint8_t>& segment);

/// Volume-weighted mean of a per-element value per segment: sum(w v) / sum(w) over the segment's
/// elements (NaN for an empty segment); index as segment_volumes. weight = element volumes at rest
/// for a material average (Lagrangian regional strain).
std::array<double, kAhaSegments + 1> segment_means(const Eigen::VectorXd& value, const Eigen::VectorXd& weight,
                                                   const std::vector<std::uint8_t>& segment);

}  // namespace cardio::analysis
