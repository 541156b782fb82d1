#include "cardio/circulation/volume_constraint.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <vector>

#include "cardio/circulation/cubic.hpp"
#include "cardio/circulation/windkessel.hpp"
#include "cardio/core/error.hpp"
#include "cardio/core/parallel.hpp"
#include "cardio/core/units.hpp"

namespace cardio::circulation {
namespace {

using meshing::CavitySurface;

void check_cavity(const CavitySurface& c, Eigen::Index n_nodes) {
  CARDIO_CHECK(!c.nodes.empty() && !c.triangles.empty(), "cavity '" << c.name << "' has an empty surface");
  // Runs every step: the ranges first (vectorised min/max), the offending entry only on failure.
  const auto [node_lo, node_hi] = std::minmax_element(c.nodes.begin(), c.nodes.end());
  const auto n_points = static_cast<std::int32_t>(c.nodes.size() + (c.has_lid() ? 1 : 0));
  std::int32_t point_lo = 0, point_hi = 0;
  for (const auto& t : c.triangles)
    for (std::int32_t i : t) {
      point_lo = std::min(point_lo, i);
      point_hi = std::max(point_hi, i);
    }
  if (*node_lo >= 0 && *node_hi < n_nodes && point_lo >= 0 && point_hi < n_points) return;
  for (std::int32_t node : c.nodes)
    CARDIO_CHECK(node >= 0 && node < n_nodes,
                 "cavity '" << c.name << "' refers to node " << node << " but the mesh has " << n_nodes << " nodes");
  for (const auto& t : c.triangles)
    for (std::int32_t i : t)
      CARDIO_CHECK(i >= 0 && i < n_points,
                   "cavity '" << c.name << "' has a triangle with point " << i << " outside [0, " << n_points << ")");
}

/// Surface points (mesh nodes, then the lid centre) relative to their centroid. This and the other
/// per-node loops below run every step between the element loops, so they run on the team (serial,
/// they idled the second thread: 2.6 % of the default case's beat time, docs/performance.md).
Eigen::Matrix3Xd centred_points(const CavitySurface& c, const Eigen::Matrix3Xd& x) {
  Eigen::Matrix3Xd p = meshing::surface_points(c, x);
  // One pass for the three coordinates (the same bits as three double sums).
  const Eigen::Vector3d centroid = deterministic_sum(p.cols(), Eigen::Vector3d(Eigen::Vector3d::Zero()),
                                                     [&](std::int64_t i) { return Eigen::Vector3d(p.col(i)); }) /
                                   double(p.cols());
  parallel_for(p.cols(), [&](std::int64_t i) { p.col(i) -= centroid; });
  return p;
}

/// Triangles are split into blocks by their count alone, never by the thread count: each block
/// sums in triangle order and the blocks add in block order, so every sum is bit-identical at any
/// thread count. Blocks run in parallel (the projection is serial work between the element loops).
constexpr std::size_t kTrianglesPerBlock = 1024, kMaxTriangleBlocks = 8;

std::int64_t triangle_blocks(const CavitySurface& c) {
  return std::int64_t(std::clamp<std::size_t>(c.triangles.size() / kTrianglesPerBlock, 1, kMaxTriangleBlocks));
}

/// body(block, first, last) over the triangle blocks [first, last).
template <class Body>
void for_each_triangle_block(const CavitySurface& c, std::int64_t blocks, Body&& body) {
  const std::size_t n = c.triangles.size();
  parallel_for_blocks(blocks, [&](std::int64_t b) {
    body(std::size_t(b), n * std::size_t(b) / std::size_t(blocks), n * std::size_t(b + 1) / std::size_t(blocks));
  });
}

double six_volume(const CavitySurface& c, const Eigen::Matrix3Xd& p) {
  const std::int64_t blocks = triangle_blocks(c);
  std::vector<double> partial(std::size_t(blocks), 0.0);
  for_each_triangle_block(c, blocks, [&](std::size_t b, std::size_t first, std::size_t last) {
    double s = 0;
    for (std::size_t i = first; i < last; ++i) {
      const auto& t = c.triangles[i];
      s += p.col(t[0]).dot(p.col(t[1]).cross(p.col(t[2])));
    }
    partial[b] = s;
  });
  double s = 0;
  for (double v : partial) s += v;
  return s;
}

/// The points [first, first + cols) a triangle block touches, with its share of dV/dx (x 6) and of
/// the volume (x 6: the terms six_volume sums, in the same order).
struct BlockGradient {
  Eigen::Index first = 0;
  Eigen::Matrix3Xd g;
  double six_volume = 0;
};

/// One block's scatter into an array over the range of points it touches only. The surface points
/// are numbered in mesh-node order and the triangles come in the mesher's voxel order, so a block's
/// points lie in a few layers of the grid: a whole-surface array per block would be mostly zeros to
/// clear and add (the default case: 6-7 blocks per cavity, one gradient per cavity per step).
BlockGradient block_gradient(const CavitySurface& c, const Eigen::Matrix3Xd& p, std::size_t first, std::size_t last) {
  std::int32_t lo = std::numeric_limits<std::int32_t>::max(), hi = -1;
  for (std::size_t i = first; i < last; ++i)
    for (std::int32_t k : c.triangles[i]) lo = std::min(lo, k), hi = std::max(hi, k);
  BlockGradient b;
  if (hi < lo) return b;
  b.first = lo;
  b.g.setZero(3, hi - lo + 1);
  for (std::size_t i = first; i < last; ++i) {
    const auto& t = c.triangles[i];
    const Eigen::Vector3d a = p.col(t[0]), e = p.col(t[1]), d = p.col(t[2]);
    const Eigen::Vector3d ed = e.cross(d);
    b.six_volume += a.dot(ed);
    b.g.col(t[0] - lo) += ed;
    b.g.col(t[1] - lo) += d.cross(a);
    b.g.col(t[2] - lo) += a.cross(e);
  }
  return b;
}

/// dV/dx per mesh node of the surface (3 x nodes.size()), the lid centre's share on the rim. Each
/// triangle block scatters into its own array; the arrays add per point in block order. With
/// `volume`, also the enclosed volume [mm^3] of the same pass.
Eigen::Matrix3Xd node_gradient(const CavitySurface& c, const Eigen::Matrix3Xd& p, double* volume = nullptr) {
  const std::int64_t blocks = triangle_blocks(c);
  std::vector<BlockGradient> part(static_cast<std::size_t>(blocks));
  for_each_triangle_block(c, blocks, [&](std::size_t b, std::size_t first, std::size_t last) {
    part[b] = block_gradient(c, p, first, last);
  });
  if (volume) {
    double six = 0;
    for (const BlockGradient& b : part) six += b.six_volume;
    *volume = six / 6.0;
  }
  Eigen::Matrix3Xd g(3, p.cols());
  parallel_for(g.cols(), [&](std::int64_t i) {  // per point, the blocks in block order
    Eigen::Vector3d sum = Eigen::Vector3d::Zero();
    for (const BlockGradient& b : part)
      if (i >= b.first && i < b.first + b.g.cols()) sum += b.g.col(i - b.first);
    g.col(i) = sum / 6.0;
  });
  const auto n = static_cast<Eigen::Index>(c.nodes.size());
  if (c.has_lid()) {
    const Eigen::Vector3d share = g.col(n) / double(c.rim.size());
    for (std::int32_t r : c.rim) g.col(r) += share;
  }
  g.conservativeResize(3, n);
  return g;
}

struct Cubic {
  double c[4] = {0, 0, 0, 0};
};

/// V(phi) = c0 + c1 phi + c2 phi^2 + c3 phi^3 for points p + phi d (Promayon sec. 3.4, expanded).
Cubic volume_cubic(const CavitySurface& c, const Eigen::Matrix3Xd& p, const Eigen::Matrix3Xd& d) {
  const std::int64_t blocks = triangle_blocks(c);
  std::vector<Cubic> partial(static_cast<std::size_t>(blocks));
  for_each_triangle_block(c, blocks, [&](std::size_t b, std::size_t first, std::size_t last) {
    Cubic& k = partial[b];
    for (std::size_t i = first; i < last; ++i) {
      const auto& t = c.triangles[i];
      const Eigen::Vector3d a0 = p.col(t[0]), a1 = p.col(t[1]), a2 = p.col(t[2]);
      const Eigen::Vector3d b0 = d.col(t[0]), b1 = d.col(t[1]), b2 = d.col(t[2]);
      const Eigen::Vector3d a12 = a1.cross(a2), b12 = b1.cross(b2);
      const Eigen::Vector3d ab = a1.cross(b2) + b1.cross(a2);
      k.c[0] += a0.dot(a12);
      k.c[1] += b0.dot(a12) + a0.dot(ab);
      k.c[2] += a0.dot(b12) + b0.dot(ab);
      k.c[3] += b0.dot(b12);
    }
  });
  Cubic k;
  for (const Cubic& part : partial)
    for (int i = 0; i < 4; ++i) k.c[i] += part.c[i];
  for (double& v : k.c) v /= 6.0;
  return k;
}

/// Common checks and the projection direction d = M^-1 (free . g) per surface point (lid centre:
/// the mean of the rim's), with gMg = g.M^-1 g over the free components.
struct Direction {
  Eigen::Matrix3Xd d;
  double gMg = 0;
};

Direction direction(const CavitySurface& c, const Eigen::VectorXd& mass, const Eigen::Matrix3Xd& free,
                    const Eigen::Matrix3Xd& g) {
  const auto n = static_cast<Eigen::Index>(c.nodes.size());
  const auto node = [&](std::int64_t k) { return c.nodes[static_cast<std::size_t>(k)]; };
  const auto bad_mass = [&](std::int64_t k) { return !(mass[node(k)] > 0 && std::isfinite(mass[node(k)])); };
  if (const std::int64_t k = parallel_first(n, bad_mass); k >= 0)
    CARDIO_FAIL("cavity '" << c.name << "': node " << node(k) << " has mass " << mass[node(k)]
                           << " mg; expected a finite value > 0");
  Direction r;
  r.d = Eigen::Matrix3Xd::Zero(3, n + (c.has_lid() ? 1 : 0));
  parallel_for(n, [&](std::int64_t k) {
    Eigen::Vector3d gm = g.col(k);
    if (free.size() > 0) gm = gm.cwiseProduct(free.col(node(k)));
    r.d.col(k) = gm / mass[node(k)];
  });
  // g.M^-1 g over the free components = sum m |M^-1 g|^2.
  r.gMg = deterministic_sum(n, [&](std::int64_t k) { return mass[node(k)] * r.d.col(k).squaredNorm(); });
  if (c.has_lid()) {
    Eigen::Vector3d mean = Eigen::Vector3d::Zero();
    for (std::int32_t rim : c.rim) mean += r.d.col(rim);
    r.d.col(n) = mean / double(c.rim.size());
  }
  if (!(r.gMg > 0))
    CARDIO_FAIL("cavity '" << c.name << "': the volume cannot change by moving its free nodes (g.M^-1 g = " << r.gMg
                           << "); are all its nodes fixed?");
  return r;
}

void check_inputs(const CavitySurface& c, const Eigen::VectorXd& mass, const Eigen::Matrix3Xd& free,
                  const Eigen::Matrix3Xd& x) {
  check_cavity(c, x.cols());
  CARDIO_CHECK(mass.size() == x.cols(), "masses: " << mass.size() << " values for " << x.cols() << " nodes");
  CARDIO_CHECK(free.size() == 0 || free.cols() == x.cols(),
               "free mask: " << free.cols() << " columns for " << x.cols() << " nodes (expected 3 x n_nodes or empty)");
}

/// The step's own inputs (the cavity, masses and mask are checked by VolumePath).
void check_step(double dt, const Eigen::Matrix3Xd& x, const Eigen::Matrix3Xd* v) {
  CARDIO_CHECK(std::isfinite(dt) && dt > 0, "volume projection: dt = " << dt << " ms, expected a finite value > 0");
  CARDIO_CHECK(v == nullptr || v->cols() == x.cols(),
               "velocities: " << v->cols() << " columns for " << x.cols() << " nodes");
}

/// The enclosed volume [mm^3] of a checked cavity.
double volume_of(const CavitySurface& c, const Eigen::Matrix3Xd& x) {
  return six_volume(c, centred_points(c, x)) / 6.0;
}

/// x += phi d on the cavity's nodes (each once: the parallel writes are disjoint); v += phi d / dt
/// if given. Returns the largest displacement.
double move(const CavitySurface& c, const Eigen::Matrix3Xd& d, double phi, double dt, Eigen::Matrix3Xd& x,
            Eigen::Matrix3Xd* v) {
  const auto n = static_cast<std::int64_t>(c.nodes.size());
  parallel_for(n, [&](std::int64_t k) {
    const Eigen::Vector3d dx = phi * d.col(k);
    x.col(c.nodes[std::size_t(k)]) += dx;
    if (v) v->col(c.nodes[std::size_t(k)]) += dx / dt;
  });
  return std::abs(phi) * parallel_max(n, [&](std::int64_t k) { return d.col(k).norm(); });
}

}  // namespace

double cavity_volume_mm3(const CavitySurface& cavity, const Eigen::Matrix3Xd& x) {
  check_cavity(cavity, x.cols());
  return volume_of(cavity, x);
}

VolumeGradient volume_gradient(const CavitySurface& cavity, const Eigen::Matrix3Xd& x) {
  check_cavity(cavity, x.cols());
  return {cavity.nodes, node_gradient(cavity, centred_points(cavity, x))};
}

VolumeAndGradient volume_and_gradient(const CavitySurface& cavity, const Eigen::Matrix3Xd& x) {
  check_cavity(cavity, x.cols());
  VolumeAndGradient r;
  r.gradient = {cavity.nodes, node_gradient(cavity, centred_points(cavity, x), &r.volume_mm3)};
  return r;
}

void add_pressure_forces(const CavitySurface& cavity, const Eigen::Matrix3Xd& x, double pressure_kPa,
                         Eigen::Matrix3Xd& f) {
  CARDIO_CHECK(f.cols() == x.cols(), "forces: " << f.cols() << " columns for " << x.cols() << " nodes");
  add_pressure_forces(volume_gradient(cavity, x), pressure_kPa, f);
}

void add_pressure_forces(const VolumeGradient& g, double pressure_kPa, Eigen::Matrix3Xd& f) {
  // The surface's nodes are distinct: each column is written once.
  parallel_for(std::int64_t(g.nodes.size()),
               [&](std::int64_t k) { f.col(g.nodes[std::size_t(k)]) += pressure_kPa * g.grad.col(Eigen::Index(k)); });
}

ProjectionResult project_volume(const CavitySurface& cavity, const Eigen::VectorXd& mass,
                                const Eigen::Matrix3Xd& free_mask, double target_mm3, double dt, Eigen::Matrix3Xd& x,
                                Eigen::Matrix3Xd* v) {
  check_step(dt, x, v);
  CARDIO_CHECK(std::isfinite(target_mm3) && target_mm3 > 0,
               "cavity '" << cavity.name << "': target volume " << target_mm3 << " mm^3, expected a finite value > 0");
  const VolumePath path(cavity, mass, free_mask, x);
  const auto k = [&](int i) { return path.coefficient(i); };
  ProjectionResult r;
  r.volume_free_mm3 = k(0);
  try {
    r.phi = root_nearest_zero(k(0) - target_mm3, k(1), k(2), k(3));
  } catch (const Error& e) {
    CARDIO_FAIL("cavity '" << cavity.name << "': the volume " << k(0) << " mm^3 cannot be projected to " << target_mm3
                           << " mm^3 along its gradient (" << e.what() << ")");
  }
  r.max_displacement = path.move(r.phi, dt, x, v);
  if (v) {
    // Velocity stage: remove the normal component so that dV/dt = g(X).v = 0 (fixed components keep
    // their prescribed velocities but count in g.v).
    const Eigen::Matrix3Xd g = node_gradient(cavity, centred_points(cavity, x));
    const Direction dv = direction(cavity, mass, free_mask, g);
    double gv = 0;
    for (std::size_t i = 0; i < cavity.nodes.size(); ++i) gv += g.col(Eigen::Index(i)).dot(v->col(cavity.nodes[i]));
    r.velocity_multiplier = -gv / dv.gMg;
    for (std::size_t i = 0; i < cavity.nodes.size(); ++i)
      v->col(cavity.nodes[i]) += r.velocity_multiplier * dv.d.col(Eigen::Index(i));
  }
  r.volume_mm3 = path.volume_mm3(r.phi);  // exact: every surface point moved along phi d
  return r;
}

std::vector<ProjectionResult> project_volumes(const std::vector<CavitySurface>& cavities, const Eigen::VectorXd& mass,
                                              const Eigen::Matrix3Xd& free_mask, const std::vector<double>& targets_mm3,
                                              double dt, Eigen::Matrix3Xd& x, Eigen::Matrix3Xd* v) {
  CARDIO_CHECK(targets_mm3.size() == cavities.size(), targets_mm3.size()
                                                          << " target volumes for " << cavities.size() << " cavities");
  for (std::size_t a = 0; a < cavities.size(); ++a) {
    const std::set<std::int32_t> nodes(cavities[a].nodes.begin(), cavities[a].nodes.end());
    for (std::size_t b = a + 1; b < cavities.size(); ++b) {
      std::int64_t shared = 0;
      for (std::int32_t n : cavities[b].nodes) shared += nodes.count(n);
      if (shared > 0)
        CARDIO_FAIL("cavities '" << cavities[a].name << "' and '" << cavities[b].name << "' share " << shared
                                 << " mesh nodes: projecting them in turn would not keep both volumes exact");
    }
  }
  std::vector<ProjectionResult> r;
  for (std::size_t c = 0; c < cavities.size(); ++c)
    r.push_back(project_volume(cavities[c], mass, free_mask, targets_mm3[c], dt, x, v));
  return r;
}

CoupledResult project_volume_windkessel(const CavitySurface& cavity, const Eigen::VectorXd& mass,
                                        const Eigen::Matrix3Xd& free_mask, const Windkessel& windkessel,
                                        double volume_begin_mL, double dt, Eigen::Matrix3Xd& x, Eigen::Matrix3Xd* v) {
  check_step(dt, x, v);
  CARDIO_CHECK(std::isfinite(volume_begin_mL) && volume_begin_mL > 0,
               "cavity '" << cavity.name << "': volume at the start of the step " << volume_begin_mL
                          << " mL, expected a finite value > 0");
  const VolumePath path(cavity, mass, free_mask, x);
  const auto k = [&](int i) { return path.coefficient(i); };
  // phi/(dt^2 kappa) = A + B Q, Q = (V_b - V(phi)) / (1000 dt)  =>  cubic in phi (see header).
  const auto [a, b] = windkessel.end_of_step_pressure(dt);
  const double kappa = units::kMmHgInKPa, vb = volume_begin_mL * kMm3PerMl;
  const double s = kMm3PerMl * dt / b;  // mm^3 per mmHg
  CoupledResult r;
  r.projection.volume_free_mm3 = k(0);
  try {
    r.projection.phi = root_nearest_zero(k(0) - vb - s * a, k(1) + s / (dt * dt * kappa), k(2), k(3));
  } catch (const Error& e) {
    CARDIO_FAIL("cavity '" << cavity.name << "': no Windkessel-coupled projection (" << e.what() << ")");
  }
  r.projection.max_displacement = path.move(r.projection.phi, dt, x, v);
  r.projection.volume_mm3 = path.volume_mm3(r.projection.phi);  // exact: every point moved along phi d
  r.pressure_mmHg = r.projection.phi / (dt * dt * kappa);
  r.outflow = (vb - r.projection.volume_mm3) / (kMm3PerMl * dt);
  return r;
}

VolumePath::VolumePath(const CavitySurface& cavity, const Eigen::VectorXd& mass, const Eigen::Matrix3Xd& free_mask,
                       const Eigen::Matrix3Xd& x)
    : m_cavity(cavity) {
  check_inputs(cavity, mass, free_mask, x);
  const Eigen::Matrix3Xd p = centred_points(cavity, x);
  m_direction = direction(cavity, mass, free_mask, node_gradient(cavity, p)).d;
  const Cubic k = volume_cubic(cavity, p, m_direction);
  std::copy(k.c, k.c + 4, m_c);
}

double VolumePath::volume_mm3(double phi) const { return m_c[0] + phi * (m_c[1] + phi * (m_c[2] + phi * m_c[3])); }

double VolumePath::slope_mm3(double phi) const { return m_c[1] + phi * (2 * m_c[2] + 3 * phi * m_c[3]); }

double VolumePath::move(double phi, double dt, Eigen::Matrix3Xd& x, Eigen::Matrix3Xd* v) const {
  return circulation::move(m_cavity, m_direction, phi, dt, x, v);
}

double max_explicit_impedance_step(const CavitySurface& cavity, const Eigen::VectorXd& mass,
                                   const Eigen::Matrix3Xd& free_mask, const Eigen::Matrix3Xd& x,
                                   double impedance_mmHg_ms_per_mL) {
  check_inputs(cavity, mass, free_mask, x);
  const double z = impedance_mmHg_ms_per_mL * units::kMmHgInKPa / kMm3PerMl;  // kPa ms / mm^3
  if (!(z > 0)) return std::numeric_limits<double>::infinity();
  const Direction dir = direction(cavity, mass, free_mask, node_gradient(cavity, centred_points(cavity, x)));
  return 2.0 / (z * dir.gMg);
}

}  // namespace cardio::circulation
