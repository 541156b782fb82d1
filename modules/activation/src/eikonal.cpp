// Anisotropic eikonal on the element grid: label-correcting march with Hopf-Lax updates over the
// 48 tetrahedra of the 26-neighbour stencil (see activation_times.hpp for the method and sources).
#include <Eigen/LU>
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <queue>
#include <sstream>

#include "cardio/activation/activation_times.hpp"
#include "cardio/core/error.hpp"

namespace cardio::activation {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// The 26 neighbour offsets, their physical vectors, and the 48 tetrahedra of the stencil.
struct Stencil {
  struct Tet {
    std::array<int, 3> v;   ///< offsets (indices into `offset`) of the face vertices
    Eigen::Matrix3d d_inv;  ///< D^-1, D = [d_v0 d_v1 d_v2] (vertex minus centre, physical)
    Eigen::Vector3d u;      ///< D^-T (1, 1, 1)
  };
  std::array<Eigen::Vector3i, 26> offset;
  std::array<Eigen::Vector3d, 26> d;
  std::array<int, 26> opposite{};
  std::vector<Tet> tets;
  std::array<std::vector<int>, 26> tets_of;  ///< tetrahedra having offset o as a vertex

  int index(const Eigen::Vector3i& o) const {
    for (int i = 0; i < 26; ++i)
      if (offset[std::size_t(i)] == o) return i;
    return -1;
  }
};

Stencil make_stencil(const imaging::Grid& g) {
  Stencil s;
  int n = 0;
  for (int k = -1; k <= 1; ++k)
    for (int j = -1; j <= 1; ++j)
      for (int i = -1; i <= 1; ++i) {
        if (i == 0 && j == 0 && k == 0) continue;
        s.offset[std::size_t(n)] = Eigen::Vector3i(i, j, k);
        s.d[std::size_t(n)] = g.direction * g.spacing.cwiseProduct(Eigen::Vector3d(i, j, k));
        ++n;
      }
  for (int o = 0; o < 26; ++o) s.opposite[std::size_t(o)] = s.index(-s.offset[std::size_t(o)]);
  std::array<int, 3> perm{0, 1, 2};
  do {
    for (int signs = 0; signs < 8; ++signs) {
      Eigen::Vector3i step[3];
      for (int a = 0; a < 3; ++a) {
        step[a] = Eigen::Vector3i::Zero();
        step[a][perm[std::size_t(a)]] = (signs >> a & 1) ? -1 : 1;
      }
      Stencil::Tet t;
      const Eigen::Vector3i o1 = step[0], o2 = o1 + step[1], o3 = o2 + step[2];
      t.v = {s.index(o1), s.index(o2), s.index(o3)};
      Eigen::Matrix3d D;
      for (int c = 0; c < 3; ++c) D.col(c) = s.d[std::size_t(t.v[std::size_t(c)])];
      t.d_inv = D.inverse();
      t.u = t.d_inv.transpose() * Eigen::Vector3d::Ones();
      const int id = static_cast<int>(s.tets.size());
      s.tets.push_back(t);
      for (int c : t.v) s.tets_of[std::size_t(c)].push_back(id);
    }
  } while (std::next_permutation(perm.begin(), perm.end()));
  return s;
}

double metric_norm(const Eigen::Vector3d& d, const Eigen::Matrix3d& m) {
  return std::sqrt(std::max(0.0, d.dot(m * d)));
}

/// min over s in [0, 1] of t1 + s (t2 - t1) + |d1 + s (d2 - d1)|_M (convex; closed form); the
/// minimiser in `arg`.
double segment_time(double t1, const Eigen::Vector3d& d1, double t2, const Eigen::Vector3d& d2,
                    const Eigen::Matrix3d& m, double& arg) {
  const Eigen::Vector3d q = d2 - d1;
  const Eigen::Vector3d mq = m * q;
  const double a = q.dot(mq), b = d1.dot(mq), c = d1.dot(m * d1), delta = t2 - t1;
  const double v0 = t1 + std::sqrt(std::max(0.0, c)), v1 = t2 + std::sqrt(std::max(0.0, a + 2 * b + c));
  double best = v0;
  arg = 0;
  if (v1 < best) {
    best = v1;
    arg = 1;
  }
  if (a > delta * delta) {
    // Stationary point of f(s): (a s + b) = -delta sqrt(a s^2 + 2 b s + c).
    const double s = -b / a - delta * std::sqrt(std::max(0.0, a * c - b * b)) / (a * std::sqrt(a - delta * delta));
    if (s > 0 && s < 1) {
      const double v = t1 + delta * s + std::sqrt(std::max(0.0, (a * s + 2 * b) * s + c));
      if (v < best) {
        best = v;
        arg = s;
      }
    }
  }
  return best;
}

/// Interior of a face: the linear T with gradient G through the face values t solving
/// G^T D G = 1 (D = M^-1), accepted if the characteristic -D G points into the face; `lambda`
/// gets the barycentric coordinates of the foot of the characteristic on the face.
bool face_time(const Eigen::Vector3d& t, const Stencil::Tet& tet, const Eigen::Matrix3d& d_tensor, double& out,
               Eigen::Vector3d& lambda) {
  const Eigen::Vector3d w = tet.d_inv.transpose() * t;
  const Eigen::Vector3d du = d_tensor * tet.u, dw = d_tensor * w;
  const double a = tet.u.dot(du), b = tet.u.dot(dw), c = w.dot(dw) - 1.0;
  const double disc = b * b - a * c;
  if (!(disc >= 0) || !(a > 0)) return false;
  const double time = (b + std::sqrt(disc)) / a;
  const Eigen::Vector3d alpha = -(tet.d_inv * (dw - time * du));  // -D G = [d_i] alpha
  if (alpha.minCoeff() < 0 || !(alpha.sum() > 0)) return false;
  out = time;
  lambda = alpha / alpha.sum();
  return true;
}

struct Problem {
  const imaging::Grid& grid;
  const std::vector<std::int64_t>& voxel;
  Stencil stencil;
  std::vector<Eigen::Matrix3d> metric;  ///< per element M [ms^2/mm^2]
  std::vector<Eigen::Matrix3d> tensor;  ///< per element D = M^-1 [mm^2/ms^2]
  Eigen::Matrix3Xd centres;             ///< element (voxel) centres [mm]
  /// Dense element map over the elements' bounding box padded by one voxel (-1 = none), so that
  /// every neighbour of an element is inside it: neighbour = element_at[box_index[e] + shift[o]].
  std::vector<std::int32_t> element_at;
  std::vector<std::int64_t> box_index;
  std::array<std::int64_t, 26> shift{};

  std::int64_t neighbour(std::int64_t e, int o) const {
    return element_at[std::size_t(box_index[std::size_t(e)] + shift[std::size_t(o)])];
  }
  Eigen::Vector3d centre(std::int64_t e) const { return centres.col(e); }

  // Factoring of a point source s (additive, T = T0 + tau, T0(x) = |x - s|_{M_s}): face values are
  // T0(y) + tau_lin(y) instead of T_lin(y), which removes the source singularity's error.
  bool factored = false;
  Eigen::Vector3d source{0, 0, 0};
  Eigen::Matrix3d source_metric = Eigen::Matrix3d::Zero();
  Eigen::VectorXd t0;  ///< T0 at the element centres (factored runs)

  double factor(const Eigen::Vector3d& y) const { return metric_norm(y - source, source_metric); }
};

/// Best time for element j from the faces of its stencil containing the neighbour at offset o.
/// In a factored run the minimiser y of each face or edge problem is kept and the face value
/// re-evaluated as T0(y) + tau_lin(y) (T0 exact, tau = T - T0 linear): below the unfactored value
/// (T0 is convex) and exact in a uniform medium.
double candidate(const Problem& P, const Eigen::VectorXd& T, std::int64_t j, int o) {
  const Stencil& S = P.stencil;
  const std::int64_t i = P.neighbour(j, o);
  const Eigen::Matrix3d& mj = P.metric[std::size_t(j)];
  double best = T[i] + metric_norm(S.d[std::size_t(o)], 0.5 * (mj + P.metric[std::size_t(i)]));
  const Eigen::Vector3d xj = P.factored ? P.centre(j) : Eigen::Vector3d::Zero();
  for (int id : S.tets_of[std::size_t(o)]) {
    const Stencil::Tet& tet = S.tets[std::size_t(id)];
    std::array<std::int64_t, 3> e{};
    Eigen::Vector3d t;
    int n_finite = 0;
    for (int c = 0; c < 3; ++c) {
      e[std::size_t(c)] = tet.v[std::size_t(c)] == o ? i : P.neighbour(j, tet.v[std::size_t(c)]);
      t[c] = e[std::size_t(c)] >= 0 ? T[e[std::size_t(c)]] : kInf;
      n_finite += std::isfinite(t[c]);
    }
    if (n_finite == 3) {
      // Conduction tensors averaged over the element and the face (the inverse of the averaged
      // metric to first order in the fibre variation, without a 3x3 inverse per face).
      const Eigen::Matrix3d d =
          0.5 * P.tensor[std::size_t(j)] +
          (P.tensor[std::size_t(e[0])] + P.tensor[std::size_t(e[1])] + P.tensor[std::size_t(e[2])]) / 6.0;
      double ft;
      Eigen::Vector3d lambda;
      if (face_time(t, tet, d, ft, lambda)) {
        if (P.factored) {
          Eigen::Vector3d dy = Eigen::Vector3d::Zero();
          double t0_lin = 0;
          for (int c = 0; c < 3; ++c) {
            dy += lambda[c] * S.d[std::size_t(tet.v[std::size_t(c)])];
            t0_lin += lambda[c] * P.t0[e[std::size_t(c)]];
          }
          ft += P.factor(xj + dy) - t0_lin;
        }
        best = std::min(best, ft);
        continue;
      }
    }
    // The face's minimum lies on an edge: those through i (the others do not depend on T[i]).
    int ci = 0;
    while (tet.v[std::size_t(ci)] != o) ++ci;
    for (int c = 0; c < 3; ++c) {
      if (c == ci || !std::isfinite(t[c])) continue;
      const Eigen::Matrix3d m = 0.5 * mj + 0.25 * (P.metric[std::size_t(i)] + P.metric[std::size_t(e[std::size_t(c)])]);
      const Eigen::Vector3d& di = S.d[std::size_t(o)];
      const Eigen::Vector3d& dc = S.d[std::size_t(tet.v[std::size_t(c)])];
      double arg;
      double st = segment_time(t[ci], di, t[c], dc, m, arg);
      if (P.factored && arg > 0 && arg < 1)
        st += P.factor(xj + di + arg * (dc - di)) - ((1 - arg) * P.t0[i] + arg * P.t0[e[std::size_t(c)]]);
      best = std::min(best, st);
    }
  }
  return best;
}

/// Label-correcting march from the seeded times (Dijkstra order, re-opening on any decrease).
void march(const Problem& P, Eigen::VectorXd& T, EikonalReport& rep) {
  using Entry = std::pair<double, std::int64_t>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> heap;
  for (Eigen::Index e = 0; e < T.size(); ++e)
    if (std::isfinite(T[e])) heap.push({T[e], e});
  std::vector<char> popped(std::size_t(T.size()), 0);
  while (!heap.empty()) {
    const auto [t, e] = heap.top();
    heap.pop();
    if (t != T[e]) continue;  // stale entry: the time dropped since
    rep.reopened += popped[std::size_t(e)];
    popped[std::size_t(e)] = 1;
    ++rep.pops;
    for (int o = 0; o < 26; ++o) {
      const std::int64_t nb = P.neighbour(e, o);
      if (nb < 0) continue;
      const double c = candidate(P, T, nb, P.stencil.opposite[std::size_t(o)]);
      // Strict decrease beyond round-off, so that re-opening terminates.
      if (c < T[nb] - 1e-13 * std::max(1.0, std::abs(c))) {
        T[nb] = c;
        heap.push({c, nb});
      }
    }
  }
}

std::string voxel_text(const imaging::Grid& g, std::int64_t v) {
  const auto ijk = g.index(v);
  std::ostringstream os;
  os << "(" << ijk[0] << ", " << ijk[1] << ", " << ijk[2] << ")";
  return os.str();
}

}  // namespace

void ConductionVelocity::validate(std::string_view where) const {
  if (!(std::isfinite(fibre) && fibre > 0))
    CARDIO_FAIL(where << ".fibre = " << fibre << " mm/ms: expected a finite value > 0");
  if (!(cross > 0 && cross <= fibre))
    CARDIO_FAIL(where << ".cross = " << cross << " mm/ms: expected a value in (0, " << fibre
                      << "] (conduction is fastest along the fibre)");
}

PacingSite PacingSite::at_point(const Eigen::Vector3d& p, double time_ms, std::string name) {
  return {Kind::point, p, 0, time_ms, std::move(name)};
}

PacingSite PacingSite::at_label(std::int32_t label, double time_ms, std::string name) {
  return {Kind::label, Eigen::Vector3d::Zero(), label, time_ms, std::move(name)};
}

Eigen::VectorXd eikonal_activation(const meshing::VoxelMesh& mesh, const std::vector<PacingSite>& sites,
                                   const EikonalOptions& options, EikonalReport* report) {
  return eikonal_activation(mesh.grid, mesh.voxel, mesh.mesh.fibre, mesh.label, sites, options, report);
}

Eigen::VectorXd eikonal_activation(const imaging::Grid& grid, const std::vector<std::int64_t>& voxel,
                                   const Eigen::Matrix3Xd& fibre, const std::vector<std::int32_t>& label,
                                   const std::vector<PacingSite>& sites, const EikonalOptions& options,
                                   EikonalReport* report) {
  options.velocity.validate();
  const auto n = static_cast<std::int64_t>(voxel.size());
  CARDIO_CHECK(n > 0, "eikonal activation: the mesh has no elements");
  CARDIO_CHECK(
      fibre.cols() == n && std::int64_t(label.size()) == n,
      "eikonal activation: " << n << " elements but " << fibre.cols() << " fibres and " << label.size() << " labels");
  if (sites.empty()) CARDIO_FAIL("eikonal activation needs at least one pacing site (a point or a label)");
  if (!(std::isfinite(options.point_tolerance_mm) && options.point_tolerance_mm >= 0))
    CARDIO_FAIL("activation.point_tolerance = " << options.point_tolerance_mm << " mm: expected a finite value >= 0");

  Problem P{grid, voxel, make_stencil(grid), {}, {}, {}, {}, {}, {}, false, {}, {}, {}};
  // Travel-time metric per element.
  const double inv_f2 = 1.0 / (options.velocity.fibre * options.velocity.fibre);
  const double inv_t2 = 1.0 / (options.velocity.cross * options.velocity.cross);
  const double vf2 = options.velocity.fibre * options.velocity.fibre,
               vt2 = options.velocity.cross * options.velocity.cross;
  P.metric.resize(std::size_t(n));
  P.tensor.resize(std::size_t(n));
  for (std::int64_t e = 0; e < n; ++e) {
    const Eigen::Vector3d f = fibre.col(e).normalized();
    CARDIO_CHECK(f.allFinite(), "eikonal activation: element " << e << " has no fibre direction");
    P.metric[std::size_t(e)] = inv_t2 * Eigen::Matrix3d::Identity() + (inv_f2 - inv_t2) * f * f.transpose();
    P.tensor[std::size_t(e)] = vt2 * Eigen::Matrix3d::Identity() + (vf2 - vt2) * f * f.transpose();
  }
  // Centres and the padded dense element map.
  Eigen::Vector3i lo = Eigen::Vector3i::Constant(std::numeric_limits<int>::max()), hi = -lo;
  P.centres.resize(3, n);
  for (std::int64_t e = 0; e < n; ++e) {
    const std::int64_t v = voxel[std::size_t(e)];
    CARDIO_CHECK(v >= 0 && v < grid.n_voxels(), "element " << e << ": voxel " << v << " outside the grid");
    const auto ijk = grid.index(v);
    P.centres.col(e) = grid.point(ijk[0], ijk[1], ijk[2]);
    for (int a = 0; a < 3; ++a) {
      lo[a] = std::min(lo[a], int(ijk[std::size_t(a)]));
      hi[a] = std::max(hi[a], int(ijk[std::size_t(a)]));
    }
  }
  const Eigen::Vector3i box_min = lo - Eigen::Vector3i::Ones();
  const Eigen::Matrix<std::int64_t, 3, 1> box = (hi - lo + Eigen::Vector3i::Constant(3)).cast<std::int64_t>();
  P.element_at.assign(std::size_t(box.prod()), -1);
  P.box_index.resize(std::size_t(n));
  for (std::int64_t e = 0; e < n; ++e) {
    const auto ijk = grid.index(voxel[std::size_t(e)]);
    const std::int64_t k = (ijk[0] - box_min[0]) + box[0] * ((ijk[1] - box_min[1]) + box[1] * (ijk[2] - box_min[2]));
    P.box_index[std::size_t(e)] = k;
    P.element_at[std::size_t(k)] = static_cast<std::int32_t>(e);
  }
  for (int o = 0; o < 26; ++o) {
    const Eigen::Vector3i& d = P.stencil.offset[std::size_t(o)];
    P.shift[std::size_t(o)] = d[0] + box[0] * (d[1] + box[1] * d[2]);
  }

  // The solution for several sites is the minimum of the single-site solutions (the arrival time
  // is a distance to a set): all label sites in one run, each point site in its own factored run.
  EikonalReport rep;
  rep.elements = n;
  const double tolerance = options.point_tolerance_mm > 0 ? options.point_tolerance_mm : grid.spacing.norm();
  Eigen::VectorXd T = Eigen::VectorXd::Constant(n, kInf);
  Eigen::VectorXd labels_run = Eigen::VectorXd::Constant(n, kInf);
  bool any_label = false;
  std::vector<std::pair<std::int64_t, double>> point_sources;
  for (std::size_t s = 0; s < sites.size(); ++s) {
    const PacingSite& site = sites[s];
    const std::string name = site.name.empty() ? "pacing site " + std::to_string(s) : site.name;
    if (!std::isfinite(site.time_ms)) CARDIO_FAIL(name << ": time " << site.time_ms << " ms is not finite");
    if (site.kind == PacingSite::Kind::label) {
      std::int64_t count = 0;
      for (std::int64_t e = 0; e < n; ++e)
        if (label[std::size_t(e)] == site.label) {
          labels_run[e] = std::min(labels_run[e], site.time_ms);
          ++count;
        }
      if (count == 0) {
        std::vector<std::int32_t> present(label.begin(), label.end());
        std::sort(present.begin(), present.end());
        present.erase(std::unique(present.begin(), present.end()), present.end());
        std::ostringstream os;
        for (std::size_t i = 0; i < present.size(); ++i) os << (i ? ", " : "") << present[i];
        CARDIO_FAIL(name << ": no myocardium element has label " << site.label << " (labels present: " << os.str()
                         << ")");
      }
      any_label = true;
      rep.site_elements.push_back(-1);
      continue;
    }
    CARDIO_CHECK(site.point.allFinite(), name << ": the point is not finite");
    std::int64_t best = -1;
    double best_d2 = kInf;
    for (std::int64_t e = 0; e < n; ++e) {
      const double d2 = (P.centre(e) - site.point).squaredNorm();
      if (d2 < best_d2) {
        best_d2 = d2;
        best = e;
      }
    }
    const double dist = std::sqrt(best_d2);
    if (dist > tolerance)
      CARDIO_FAIL(name << ": pacing site outside the myocardium: the point (" << site.point.x() << ", "
                       << site.point.y() << ", " << site.point.z() << ") mm is " << dist
                       << " mm from the nearest myocardium element centre (voxel "
                       << voxel_text(grid, voxel[std::size_t(best)]) << "); expected within " << tolerance << " mm");
    rep.site_elements.push_back(best);
    point_sources.push_back({best, site.time_ms});
  }
  if (any_label) {
    march(P, labels_run, rep);
    T = labels_run;
  }
  for (const auto& [element, time] : point_sources) {
    P.factored = true;
    P.source = P.centre(element);
    P.source_metric = P.metric[std::size_t(element)];
    P.t0.resize(n);
    for (std::int64_t e = 0; e < n; ++e) P.t0[e] = P.factor(P.centre(e));
    Eigen::VectorXd run = Eigen::VectorXd::Constant(n, kInf);
    run[element] = time;
    march(P, run, rep);
    T = T.cwiseMin(run);
  }

  std::int64_t unreached = 0, first = -1;
  for (std::int64_t e = 0; e < n; ++e)
    if (!std::isfinite(T[e])) {
      if (first < 0) first = e;
      ++unreached;
    }
  if (unreached > 0)
    CARDIO_FAIL(
        "eikonal activation: " << unreached << " of " << n
                               << " myocardium elements are not reached from the pacing sites (not 26-connected "
                                  "to any site); the first is element "
                               << first << " at voxel " << voxel_text(grid, voxel[std::size_t(first)])
                               << ": add a pacing site in each disconnected part");
  rep.max_time_ms = T.maxCoeff();
  if (report) *report = rep;
  return T;
}

}  // namespace cardio::activation
