#pragma once
/// @file clinical.hpp
/// The measures clinicians report, from the model's kinematics and pressures (docs/analysis.md,
/// "Clinical measures"): engineering strain (what echo and MR call strain), the rotation of a
/// short-axis slice about the long axis (LV twist and torsion), and the extreme rates of a sampled
/// curve (dP/dt max and min).
#include <Eigen/Core>
#include <cstdint>
#include <limits>
#include <vector>

namespace cardio::analysis {

/// Engineering normal strain along a direction from the Green-Lagrange normal strain E along it:
/// e = lambda - 1 = sqrt(1 + 2 E) - 1, since E = (lambda^2 - 1) / 2 with lambda the stretch of the
/// material line. NaN when 1 + 2 E < 0 (no real stretch) or E is not finite.
double engineering_strain(double green_lagrange);
/// Element-wise engineering_strain.
Eigen::VectorXd engineering_strain(const Eigen::VectorXd& green_lagrange);

/// Nodes among `candidates` whose height (x - point).direction lies in [height - half_thickness,
/// height + half_thickness] [mm] (direction need not be unit; it is normalised). Ascending order.
std::vector<std::int32_t> slice_nodes(const Eigen::Matrix3Xd& x, const std::vector<std::int32_t>& candidates,
                                      const Eigen::Vector3d& point, const Eigen::Vector3d& direction, double height,
                                      double half_thickness);

/// Rotation [deg] of a slice of nodes about the long axis from x_ref to x, positive counterclockwise
/// seen from the apex (the clinical sign: a right-handed rotation about -l, l = `direction` apex ->
/// base). The least-squares rigid rotation in the plane normal to l: with a_i and b_i the offsets
/// of node i from the slice's centroid at x_ref and at x, projected onto that plane,
///   theta = atan2(sum_i (a_i x b_i).(-l), sum_i a_i.b_i)   in (-180, 180],
/// exact for any rotation about an axis parallel to l combined with any translation (the
/// translation of the centroid drops out). Throws cardio::Error for an empty slice, a zero direction
/// or sizes that differ.
double slice_rotation_deg(const Eigen::Matrix3Xd& x_ref, const Eigen::Matrix3Xd& x,
                          const std::vector<std::int32_t>& nodes, const Eigen::Vector3d& direction);

/// The steepest rise and fall of a sampled curve y(t) within [t_begin, t_end] (e.g. dP/dt max and
/// min of a cavity pressure), in units of y per unit of t.
struct RateExtremes {
  double max = std::numeric_limits<double>::quiet_NaN();
  double min = std::numeric_limits<double>::quiet_NaN();
  double t_max_ms = std::numeric_limits<double>::quiet_NaN();
  double t_min_ms = std::numeric_limits<double>::quiet_NaN();
};

/// dy/dt at each interior sample i by the central difference (y[i+1] - y[i-1]) / (t[i+1] - t[i-1])
/// (exact for a quadratic; error t_step^2 y'''/6 otherwise), over the samples with both neighbours
/// inside [t_begin, t_end]; the largest and smallest. Throws cardio::Error for sizes that differ, t
/// not increasing, a non-finite y in the window, or fewer than 3 samples in it.
RateExtremes rate_extremes(const Eigen::VectorXd& t_ms, const Eigen::VectorXd& y, double t_begin_ms, double t_end_ms);

}  // namespace cardio::analysis
