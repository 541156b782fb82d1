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
/// T_lin the linear interpolation of the neighbours' times on the face (a semi-Lagrangian /
/// ordered-upwind update: Sethian & Vladimirsky 2003, SIAM J Numer Anal 41:325-363; Kimmel &
/// Sethian 1998, PNAS 95:8431, for the simplex update; the tetrahedral local solver as in Fu, Kirby & Whitaker 2013, SIAM J Sci
/// Comput 35:C473). Face interior: the linear T with grad G through the face solves
/// G^T D G = 1 (a quadratic), accepted if its characteristic D G enters through the face; else
/// the face's edges (closed-form 1-D minimisation) and vertices. M is averaged over the updated
/// voxel and the face's voxels (on an edge: the two voxels' metrics). Because the metric is
/// anisotropic the update is not causal on this stencil, so the march is label-correcting
/// (Dijkstra order, an element re-opened whenever its time drops): it converges to the discrete
/// solution. Edge-only updates (pure Dijkstra on the 26-neighbour graph) would keep a
/// direction-dependent relative error of a few percent at any resolution; the face updates make
/// the scheme consistent, first order: exact for planar fronts (linear T), and for a point source
/// the error decreases with the voxel size (measured against the exact ellipsoidal front
/// t = sqrt(d^T M d) in a uniform block: modules/activation/README.md and tests). Near a point source the
/// elements within exact_radius_voxels get that local exact distance (standard initialisation of
/// the point-source singularity). Serial and deterministic (ties in the queue by element index).
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
  double point_tolerance_mm = 0;     ///< max distance from a point site to its element centre; 0: one voxel diagonal
  double exact_radius_voxels = 2.0;  ///< exact initialisation radius around point sites (x largest spacing); 0: off
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
