#pragma once
/// @file activation_times.hpp
/// Local activation time t_act [ms] of every element of a voxel mesh, from one of three sources
/// (DESIGN.md, "Non-linear active axial springs"): synchronous, an anisotropic eikonal front from
/// pacing sites, or an imported activation-time image.
///
/// Eikonal method. The arrival time T solves sqrt(grad T^T D grad T) = 1 with the conduction
/// tensor D = v_f^2 f f^T + v_t^2 (I - f f^T); its dual, the travel-time metric, is
/// M = D^-1 = f f^T / v_f^2 + (I - f f^T) / v_t^2: a straight path d takes t = sqrt(d^T M d).
/// Discretisation on the element (voxel-centre) grid with the 26-neighbour stencil, split into
/// its 48 tetrahedra (x, x + s_a e_a, x + s_a e_a + s_b e_b, x + s_a e_a + s_b e_b + s_c e_c):
/// the local update is the Hopf-Lax formula
///   T(x) = min over y in a stencil face of  T_lin(y) + sqrt((y - x)^T M (y - x)),
/// T_lin the linear interpolation of the neighbours' times on the face (a semi-Lagrangian,
/// ordered-upwind update: Sethian & Vladimirsky 2003, SIAM J Numer Anal 41:325-363; simplex
/// updates: Kimmel & Sethian 1998, PNAS 95:8431; the tetrahedral local solver as in Fu, Kirby &
/// Whitaker 2013, SIAM J Sci Comput 35:C473). Face interior: the linear T through the face whose
/// gradient G solves G^T D G = 1 (a quadratic), accepted if the characteristic D G enters through
/// the face; else the face's edges (closed-form 1-D minimisation) and vertices. Metrics: on an edge
/// the two voxels' M averaged; on a face the conduction tensors D of the element and the face's
/// voxels averaged (the inverse of the averaged M to first order in the fibre variation, without a
/// 3x3 inverse per face). The anisotropic update is not causal on this stencil, so the march is
/// label-correcting (Dijkstra order, an element re-opened whenever its time drops) and converges
/// to the discrete solution; skipping the re-openings doubles the error.
///
/// Accuracy. Edge-only updates (pure Dijkstra on the 26-neighbour graph) keep a direction-dependent
/// relative error of a few percent at any resolution; the face updates make the scheme consistent,
/// and exact for planar fronts (linear T) within their domain of dependence. A point source's T is
/// a cone whose curvature ~ 1/r the linear interpolation misses: an error ~ h (v_f/v_t)^2 log(r/h),
/// tens of percent near the fibre axis at anisotropy 3. Point sources are therefore factored
/// (additive factoring: Fomel, Luo & Zhao 2009, J Comput Phys 228:6440; Luo & Qian 2012, J Sci
/// Comput 52:360): T = T0 + tau, T0(x) = t_site + |x - x_site|_{M_site}; each face or edge value
/// is re-evaluated at its minimiser y as T0(y) + tau_lin(y). In a uniform block this cuts the
/// error about 15-fold, and it is first order in h (max 0.29 / 0.16 / 0.085 ms at h = 1 / 0.5 /
/// 0.25 mm over a 12 x 10 x 8 mm block with arrival times up to 46 ms; modules/activation/README.md).
/// Several sites: T = min over the single-site solutions (exact for a distance to a set): one run
/// for all label sites, one factored run per point site. Serial and deterministic (queue ties by
/// element index). Cost ~25 us per element and point site (0.5 M elements: ~13 s).
///
/// Default velocities: v_f = 0.6, v_t = 0.2 mm/ms (= m/s), an anisotropy ratio of 3, within the
/// ranges reviewed by Kleber & Rudy 2004 (Physiol Rev 84:431-488) for ventricular myocardium
/// (longitudinal ~0.3-1 m/s, transverse ~0.1-0.3 m/s).
#include <Eigen/Core>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cardio/imaging/volume.hpp"
#include "cardio/meshing/voxel_mesh.hpp"

namespace cardio::activation {

/// Conduction velocities [mm/ms].
struct ConductionVelocity {
  double fibre = 0.6;  ///< v_f along the fibre, > 0
  double cross = 0.2;  ///< v_t across the fibre, in (0, v_f]
  void validate(std::string_view where = "activation.velocity") const;
};

/// A pacing site: a point (the nearest myocardium element within the tolerance) or every element
/// of an image label, activated at time_ms.
struct PacingSite {
  enum class Kind { point, label };
  Kind kind = Kind::point;
  Eigen::Vector3d point{0, 0, 0};  ///< [mm], point sites
  std::int32_t label = 0;          ///< image label, label sites
  double time_ms = 0;              ///< stimulus time
  std::string name;                ///< for messages, e.g. "activation.sites[0]"

  static PacingSite at_point(const Eigen::Vector3d& p, double time_ms = 0, std::string name = "");
  static PacingSite at_label(std::int32_t label, double time_ms = 0, std::string name = "");
};

struct EikonalOptions {
  ConductionVelocity velocity;
  double point_tolerance_mm = 0;  ///< max distance from a point site to its element centre; 0: one voxel diagonal
};

struct EikonalReport {
  std::int64_t elements = 0;
  std::vector<std::int64_t> site_elements;  ///< per site: the element of a point site, -1 for label sites
  std::int64_t pops = 0;                    ///< queue pops that updated neighbours
  std::int64_t reopened = 0;                ///< pops of an element popped before (non-causal updates)
  double max_time_ms = 0;
};

/// Every element activated at time_ms.
Eigen::VectorXd synchronous_activation(const meshing::VoxelMesh& mesh, double time_ms = 0);

/// Eikonal arrival times [ms] from the pacing sites (see the file comment). Errors (cardio::Error):
/// no site, a non-finite time, a point farther than the tolerance from the myocardium (naming the
/// site, the point and the distance), a label without elements, elements not reached (naming how
/// many and the first one's voxel).
Eigen::VectorXd eikonal_activation(const meshing::VoxelMesh& mesh, const std::vector<PacingSite>& sites,
                                   const EikonalOptions& options = {}, EikonalReport* report = nullptr);

/// The same on any set of elements of a voxel grid: voxel[e] (linear index in grid), fibre
/// (3 x n, unit), label[e].
Eigen::VectorXd eikonal_activation(const imaging::Grid& grid, const std::vector<std::int64_t>& voxel,
                                   const Eigen::Matrix3Xd& fibre, const std::vector<std::int32_t>& label,
                                   const std::vector<PacingSite>& sites, const EikonalOptions& options = {},
                                   EikonalReport* report = nullptr);

/// Activation times read from an image on the element grid [ms]: the value at each element's
/// voxel. Errors: a different grid (naming what differs), NaN or infinite values at myocardium
/// voxels (the count and the first voxel). `source` names the image in messages (file or key).
Eigen::VectorXd activation_from_image(const meshing::VoxelMesh& mesh, const imaging::ScalarVolume& image,
                                      std::string_view source);

}  // namespace cardio::activation
