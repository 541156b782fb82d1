#pragma once
/// @file system.hpp
/// Node state, loads, constraints, and the mass-spring system that sums them. The force model
/// is kept apart from the integrators: integrators see only forces and a projection.
#include <Eigen/Core>
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "cardio/mechanics/internal_forces.hpp"
#include "cardio/mechanics/mesh.hpp"

namespace cardio::mechanics {

/// Struct-of-arrays node state. Vector fields are 3 x n_nodes (a node's xyz contiguous).
struct NodeState {
  Eigen::Matrix3Xd x;    ///< positions [mm]
  Eigen::Matrix3Xd v;    ///< velocities [mm/ms]
  Eigen::Matrix3Xd f;    ///< total forces [mN] at (x, v)
  Eigen::VectorXd mass;  ///< lumped masses [mg]
};

/// Follower pressure on a set of boundary quads: force -p n dA (p > 0 pushes into the body),
/// integrated exactly on the bilinear quad (2x2 Gauss) in the current configuration.
struct PressureLoad {
  std::vector<Quad> faces;
  double pressure = 0;  ///< [kPa] at load factor 1
};

/// The same force added to each node of a set.
struct NodalLoad {
  std::vector<std::int32_t> nodes;
  Eigen::Vector3d force = Eigen::Vector3d::Zero();  ///< per node [mN] at load factor 1
};

/// The pressure of a cavity's blood on the flat cap that closes it over its open rim (the valve
/// plane), carried by the rim nodes: the cap is the fan of triangles (c, a, b) over the rim edges
/// (a, b) to c, the mean of the rim nodes, as meshing::CavitySurface closes a cavity, each with a
/// follower pressure. With the follower pressure on the endocardium this is the load p dV/dx of the
/// closed cavity that the beat's pressure applies (Promayon et al. 1996), and its net force vanishes.
struct LidPressureLoad {
  std::vector<std::array<std::int32_t, 2>> edges;  ///< mesh nodes (a, b): (c, a, b) faces out of the cavity
  std::vector<std::int32_t> rim;                   ///< the distinct rim nodes (c is their mean)
  double pressure = 0;                             ///< [kPa] at load factor 1
};

/// Loads, all scaled by the load factor s in [0, 1] (a ramp in time, or a load step).
struct Loads {
  Eigen::Vector3d gravity = Eigen::Vector3d::Zero();  ///< [mm/ms^2]
  std::vector<NodalLoad> nodal;
  std::vector<PressureLoad> pressures;
  std::vector<LidPressureLoad> lids;
};

/// Prescribed displacement of some components of a set of nodes (Promayon et al. 1996:
/// positions projected onto the constraint after each step). The displacement is the affine
/// field u(X) = s (M X + b) of the rest position X, s the load factor: fixed nodes have M = 0,
/// b = 0; a moving face has b != 0; a sheared boundary has M != 0.
struct DofConstraint {
  std::vector<std::int32_t> nodes;
  std::uint8_t mask = 0b111;  ///< bit i set: component i is prescribed
  Eigen::Matrix3d M = Eigen::Matrix3d::Zero();
  Eigen::Vector3d b = Eigen::Vector3d::Zero();
};

/// Elastic foundation on boundary quads (a Robin condition, e.g. the pericardium as in Pfaller et
/// al. 2019, Biomech Model Mechanobiol 18:503): traction t = -k P u with P = N N^T (normal), I (all)
/// or I - N N^T (tangential), u = x - X the displacement, N the rest unit normal, k [kPa/mm], lumped
/// to the nodes by a quarter of each quad's rest area. Conservative (energy k/2 sum_i A_i u_i.P u_i)
/// and independent of the load factor: it is part of the body's support, not a load.
struct ElasticFoundation {
  enum class Direction {
    normal,     ///< resists only the normal displacement (the tissue slides, e.g. in the pericardium)
    all,        ///< resists every displacement
    tangential  ///< resists only the in-plane displacement (a base that moves along its normal)
  };
  std::vector<Quad> faces;
  double stiffness = 0;  ///< k [kPa/mm] = [mN/mm^3]
  Direction direction = Direction::normal;
  /// P of the traction -k P u for the rest unit normal N.
  Eigen::Matrix3d projection(const Eigen::Vector3d& N) const {
    if (direction == Direction::all) return Eigen::Matrix3d::Identity();
    const Eigen::Matrix3d nn = N * N.transpose();
    return direction == Direction::normal ? nn : Eigen::Matrix3d(Eigen::Matrix3d::Identity() - nn);
  }
};

/// What acts on the body besides its elements, given to the system at construction: loads,
/// prescribed displacements, elastic supports.
struct BoundaryConditions {
  Loads loads;
  std::vector<DofConstraint> constraints;
  std::vector<ElasticFoundation> foundations;
};

/// Internal forces + loads + constraints + masses. Immutable after construction: the
/// time-dependent inputs (load factor, active tension) are arguments of each evaluation.
class MassSpringSystem {
 public:
  /// Checks the masses and every node index of the boundary conditions; computes the free mask.
  MassSpringSystem(const HexMesh& mesh, std::unique_ptr<InternalForces> internal, Eigen::VectorXd mass,
                   BoundaryConditions boundary = {});

  const InternalForces& internal() const { return *m_internal; }
  const Loads& loads() const { return m_boundary.loads; }
  const std::vector<DofConstraint>& constraints() const { return m_boundary.constraints; }
  const std::vector<ElasticFoundation>& foundations() const { return m_boundary.foundations; }
  const Eigen::Matrix3Xd& rest() const { return m_rest; }
  const Eigen::VectorXd& mass() const { return m_mass; }
  std::int64_t n_nodes() const { return m_rest.cols(); }
  /// Smallest element edge length at rest [mm] (instability detection scale).
  double min_edge() const { return m_min_edge; }

  /// A state at rest (x = rest, v = 0, projected) with forces evaluated at `in`.
  NodeState rest_state(const ForceInputs& in) const;
  /// The same at load factor s without active tension.
  NodeState rest_state(double s = 0.0) const { return rest_state(proportional_load(s)); }

  /// f = internal(x, v; in) + foundations(x) + loads at factor in.load_factor.
  void forces(const Eigen::Matrix3Xd& x, const Eigen::Matrix3Xd& v, const ForceInputs& in, Eigen::Matrix3Xd& f) const;
  /// The same at load factor s without active tension.
  void forces(const Eigen::Matrix3Xd& x, const Eigen::Matrix3Xd& v, double s, Eigen::Matrix3Xd& f) const {
    forces(x, v, proportional_load(s), f);
  }
  /// Elastic foundation forces at x (added into f).
  void add_foundation_forces(const Eigen::Matrix3Xd& x, Eigen::Matrix3Xd& f) const;
  /// External loads only at factor s (added into f).
  void add_loads(const Eigen::Matrix3Xd& x, double s, Eigen::Matrix3Xd& f) const;
  /// Stiffness -df/dx of the elastic foundations and the pressures (at factor s) as 3x3
  /// node blocks: add(a, b, K_ab) with K_ab = -d f_a / d x_b (serial, in face order). The pressure
  /// part is not symmetric (a follower load).
  using BlockAdder = std::function<void(std::int32_t a, std::int32_t b, const Eigen::Matrix3d& K_ab)>;
  void add_boundary_stiffness(const Eigen::Matrix3Xd& x, double s, const BlockAdder& add) const;
  /// Project onto the constraints: prescribed positions at factor s, velocities at rate s_dot.
  void project(Eigen::Matrix3Xd& x, Eigen::Matrix3Xd& v, double s, double s_dot) const;
  /// 3 x n mask, 1 where the component is free (not prescribed).
  const Eigen::Matrix3Xd& free_mask() const { return m_free; }

 private:
  void check_nodes() const;
  /// Rest unit normal N of a foundation quad and the stiffness k A / 4 each of its nodes carries
  /// (zero for a degenerate quad).
  std::pair<Eigen::Vector3d, double> foundation_share(const ElasticFoundation& fd, const Quad& q) const;
  /// The foundations' nodal stiffness matrices, summed over their faces once (the forces are linear
  /// in the displacement): f_n -= K_n (x_n - X_n).
  void assemble_foundation_stiffness();

  std::unique_ptr<InternalForces> m_internal;
  BoundaryConditions m_boundary;
  Eigen::Matrix3Xd m_rest;
  Eigen::VectorXd m_mass;
  Eigen::Matrix3Xd m_free;
  std::vector<std::int32_t> m_foundation_nodes;         ///< ascending
  std::vector<Eigen::Matrix3d> m_foundation_stiffness;  ///< K_n of m_foundation_nodes[k]
  double m_min_edge = 0;
};

}  // namespace cardio::mechanics
