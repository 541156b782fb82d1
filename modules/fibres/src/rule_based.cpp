#include "cardio/fibres/rule_based.hpp"

#include <Eigen/Geometry>
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <limits>
#include <sstream>

#include "cardio/core/error.hpp"
#include "cardio/core/parallel.hpp"

namespace cardio::fibres {
namespace {

using meshing::SurfaceTag;

/// Blend weight below which a missing frame is not counted as degenerate.
constexpr double kWeight = 1e-3;

/// Rotations by pi about the local axes: variant k of a frame Q is Q * kFlip[k] (same axes).
const Eigen::Matrix3d& flip(int k) {
  static const Eigen::Matrix3d m[4] = {Eigen::Vector3d(1, 1, 1).asDiagonal(), Eigen::Vector3d(1, -1, -1).asDiagonal(),
                                       Eigen::Vector3d(-1, 1, -1).asDiagonal(),
                                       Eigen::Vector3d(-1, -1, 1).asDiagonal()};
  return m[k];
}

/// (alpha, beta) of a frame expressed in its variant k, so that orient(Q R_k, a', b') spans the
/// same axes as orient(Q, a, b): R_x: (-a, b), R_y: (-a, -b), R_z: (a, -b).
Eigen::Vector2d convert_angles(const Eigen::Vector2d& ab, int k) {
  switch (k) {
    case 1:
      return {-ab[0], ab[1]};
    case 2:
      return {-ab[0], -ab[1]};
    case 3:
      return {ab[0], -ab[1]};
    default:
      return ab;
  }
}

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

/// An unrotated axis frame with the angles to apply to it; `ok` false if unavailable.
struct Oriented {
  Eigen::Matrix3d q = Eigen::Matrix3d::Identity();
  Eigen::Vector2d angles = Eigen::Vector2d::Zero();
  bool ok = false;
};

/// Blend of two axis frames with their angles (see rule_based.hpp): frames by bislerp, angles
/// linearly in the sign convention of the bislerp result.
Oriented blend(const Oriented& a, const Oriented& b, double t) {
  if (!a.ok && !b.ok) return a;
  Oriented out;
  out.ok = true;
  if (!b.ok || !a.ok) {
    out.q = a.ok ? a.q : b.q;
    out.angles = (1.0 - t) * a.angles + t * b.angles;
    return out;
  }
  int k = 0;
  out.q = ldrb_bislerp(a.q, b.q, t, &k);
  out.angles = (1.0 - t) * convert_angles(a.angles, k) + t * b.angles;
  return out;
}

/// Index of a myocardium voxel in the ascending list (it must be there).
std::int64_t domain_index(const std::vector<std::int64_t>& voxels, std::int64_t linear) {
  const auto it = std::lower_bound(voxels.begin(), voxels.end(), linear);
  CARDIO_CHECK(it != voxels.end() && *it == linear,
               "boundary face of voxel " << linear << " is not on a myocardium voxel");
  return it - voxels.begin();
}

}  // namespace

bool ldrb_axis(const Eigen::Vector3d& u, const Eigen::Vector3d& v, Eigen::Matrix3d& q) {
  const double nu = u.norm();
  if (!(nu > 0) || !std::isfinite(nu)) return false;
  const Eigen::Vector3d e1 = u / nu;
  const Eigen::Vector3d v_perp = v - e1.dot(v) * e1;
  const double nv = v_perp.norm();
  if (!(nv > 1e-6 * v.norm()) || !std::isfinite(nv)) return false;
  const Eigen::Vector3d e2 = v_perp / nv;
  q.col(0) = e1.cross(e2).normalized();
  q.col(1) = e1;
  q.col(2) = e2;
  return true;
}

Eigen::Matrix3d ldrb_orient(const Eigen::Matrix3d& q, double alpha, double beta) {
  const double ca = std::cos(alpha), sa = std::sin(alpha), cb = std::cos(beta), sb = std::sin(beta);
  Eigen::Matrix3d rz, rx;
  rz << ca, -sa, 0, sa, ca, 0, 0, 0, 1;
  rx << 1, 0, 0, 0, cb, sb, 0, -sb, cb;
  return q * rz * rx;
}

Eigen::Matrix3d ldrb_bislerp(const Eigen::Matrix3d& qa, const Eigen::Matrix3d& qb, double t, int* variant) {
  const Eigen::Quaterniond b(qb);
  int best = 0;
  double best_dot = -1.0;
  Eigen::Quaterniond a_best;
  for (int k = 0; k < 4; ++k) {
    const Eigen::Quaterniond a(Eigen::Matrix3d(qa * flip(k)));
    const double d = std::abs(a.dot(b));
    if (d > best_dot) {
      best_dot = d;
      best = k;
      a_best = a;
    }
  }
  if (variant) *variant = best;
  return a_best.slerp(std::clamp(t, 0.0, 1.0), b).normalized().toRotationMatrix();
}

Eigen::Matrix3d ldrb_frame(const LdrbPoint& p, const LdrbFields& fields, const RuleAngles& angles, bool& bad) {
  const Eigen::Vector2d endo(angles.helix_endo, angles.sheet_endo), epi(angles.helix_epi, angles.sheet_epi);
  const double tiny = fields.tiny;
  const meshing::LongAxis& ax = fields.axis;
  Eigen::Vector3d e1 = p.g_ab;
  bad = false;
  if (!(e1.norm() > tiny)) {
    e1 = ax.base_normal;  // the long axis where the apico-basal gradient vanishes
    bad = true;
  }
  const double e = std::clamp(p.phi_epi, 0.0, 1.0);
  Oriented q_epi;
  q_epi.ok = p.g_epi.norm() > tiny && ldrb_axis(e1, p.g_epi, q_epi.q);
  q_epi.angles = epi;
  Oriented q_endo;
  if (!fields.biventricular) {
    q_endo.q = q_epi.q;
    q_endo.ok = q_epi.ok;
    q_endo.angles = endo;
  } else {
    const double lvv = std::max(p.phi_lv, 0.0), rvv = std::max(p.phi_rv, 0.0);
    const double d = lvv + rvv > 1e-12 ? rvv / (lvv + rvv) : 0.5;
    const Eigen::Vector2d septal = endo * (1.0 - 2.0 * d);  // Bayer's alpha_s(d), beta_s(d)
    Oriented q_lv, q_rv;
    q_lv.ok = p.g_lv.norm() > tiny && ldrb_axis(e1, -p.g_lv, q_lv.q);
    q_rv.ok = p.g_rv.norm() > tiny && ldrb_axis(e1, p.g_rv, q_rv.q);
    q_lv.angles = q_rv.angles = septal;
    // A missing frame only matters where it carries weight.
    if ((!q_lv.ok && (1 - d) * (1 - e) > kWeight) || (!q_rv.ok && d * (1 - e) > kWeight)) bad = true;
    q_endo = blend(q_lv, q_rv, d);
  }
  if ((!q_epi.ok && e > kWeight) || (!q_endo.ok && 1 - e > kWeight)) bad = true;
  Oriented q = blend(q_endo, q_epi, e);
  if (!q.ok) {
    // No transmural direction (e.g. at the apex, where grad phi_epi is parallel to grad psi): the
    // direction away from the long axis, or on the axis the grid axis least aligned with e1.
    const Eigen::Vector3d r = p.position - ax.base_point;
    if (!ldrb_axis(e1, r - r.dot(ax.base_normal) * ax.base_normal, q.q)) {
      Eigen::Index k;
      (fields.grid_direction.transpose() * e1).cwiseAbs().minCoeff(&k);
      ldrb_axis(e1, fields.grid_direction.col(k), q.q);
    }
    q.angles = (1.0 - e) * endo + e * epi;
    bad = true;
  }
  return ldrb_orient(q.q, q.angles[0], q.angles[1]);
}

imaging::VoxelFrames rule_based_frames(const imaging::RoleVolume& roles,
                                       const meshing::BoundaryClassification& boundary, const RuleAngles& angles,
                                       RuleReport* report, const LaplaceSolverOptions& solver, LdrbFields* fields) {
  const auto t0 = std::chrono::steady_clock::now();
  const imaging::Grid& grid = roles.role.grid;

  // Which cavities are the ventricles.
  const std::size_t n_cav = roles.cavity_names.size();
  std::int64_t lv = -1, rv = -1;
  for (std::size_t c = 0; c < n_cav; ++c) {
    if (lower(roles.cavity_names[c]) == lower(angles.lv_cavity)) lv = std::int64_t(c);
    if (lower(roles.cavity_names[c]) == lower(angles.rv_cavity)) rv = std::int64_t(c);
  }
  if (lv < 0 && n_cav == 1 && rv < 0) lv = 0;
  if (lv < 0) {
    std::ostringstream names;
    for (std::size_t c = 0; c < n_cav; ++c) names << (c ? ", " : "") << "'" << roles.cavity_names[c] << "'";
    CARDIO_FAIL("rule-based fibres need an LV cavity named '"
                << angles.lv_cavity << "' (cavities: " << (n_cav ? names.str() : std::string("none")) << ")");
  }
  const bool biv = rv >= 0 && rv != lv;

  imaging::VoxelFrames out;
  out.voxels = imaging::voxels_with_role(roles, imaging::RoleVolume::kMyocardium);
  if (out.voxels.empty()) CARDIO_FAIL("rule-based fibres: no myocardium voxel");
  const VoxelDomain domain = VoxelDomain::build(grid, out.voxels);
  const std::int64_t n = domain.size();

  // Dirichlet values from the tagged faces: mean over a voxel's faces that the problem fixes.
  // Face value per problem: [0] phi_lv (or phi_epi without RV), [1] phi_rv; NaN = zero-flux.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> sum0(std::size_t(n), 0), sum1(std::size_t(n), 0), sum_ab(std::size_t(n), 0);
  std::vector<std::int32_t> cnt(std::size_t(n), 0), cnt_ab(std::size_t(n), 0);
  std::int64_t n_base = 0;
  for (const meshing::VoxelFace& f : boundary.faces) {
    const std::size_t m = std::size_t(domain_index(out.voxels, f.voxel));
    if (f.tag == SurfaceTag::kBase) {
      sum_ab[m] += 1.0;
      ++cnt_ab[m];
      ++n_base;
      continue;
    }
    const bool is_lv = f.tag == SurfaceTag::endocardium(std::size_t(lv));
    const bool is_rv = biv && f.tag == SurfaceTag::endocardium(std::size_t(rv));
    // Epicardium and any other cavity: phi_epi = 1, phi_lv = phi_rv = 0.
    if (biv) {
      sum0[m] += is_lv ? 1.0 : 0.0;
      sum1[m] += is_rv ? 1.0 : 0.0;
    } else {
      sum0[m] += is_lv ? 0.0 : 1.0;  // phi_epi
    }
    ++cnt[m];
  }
  if (n_base == 0)
    CARDIO_FAIL(
        "rule-based fibres need base faces for the apico-basal problem (none were found; set the base "
        "plane or use the automatic base)");
  const std::int64_t apex = boundary.axis.apex_voxel;
  CARDIO_CHECK(apex >= 0, "boundary classification has no apex voxel");
  const std::size_t apex_m = std::size_t(domain_index(out.voxels, apex));

  std::vector<double> fix0(std::size_t(n), nan), fix1(std::size_t(n), nan), fix_ab(std::size_t(n), nan);
  for (std::size_t m = 0; m < std::size_t(n); ++m) {
    if (cnt[m] > 0) {
      fix0[m] = sum0[m] / cnt[m];
      fix1[m] = sum1[m] / cnt[m];
    }
    if (cnt_ab[m] > 0) fix_ab[m] = sum_ab[m] / cnt_ab[m];
  }
  fix_ab[apex_m] = 0.0;

  // Apico-basal guess: height above the apex along the long axis, scaled to the base.
  const meshing::LongAxis& ax = boundary.axis;
  const double span = (ax.base_point - ax.apex).dot(ax.base_normal);
  std::vector<double> guess(std::size_t(n), 0.5);
  if (span > 0) {
    parallel_for(n, [&](std::int64_t m) {
      const imaging::Index3 ijk = grid.index(out.voxels[std::size_t(m)]);
      const double h = (grid.point(ijk[0], ijk[1], ijk[2]) - ax.apex).dot(ax.base_normal) / span;
      guess[std::size_t(m)] = std::clamp(h, 0.0, 1.0);
    });
  }

  RuleReport local;
  RuleReport& rep = report ? *report : local;
  rep = RuleReport{};
  rep.biventricular = biv;
  auto solve = [&](const char* name, const std::vector<double>& fixed, const std::vector<double>* init) {
    LaplaceStats st;
    st.name = name;
    std::vector<double> u = solve_voxel_laplace(domain, fixed, solver, &st, init);
    rep.problems.push_back(st);
    return u;
  };

  std::vector<double> phi_epi, phi_lv, phi_rv;
  if (biv) {
    phi_lv = solve("phi_lv", fix0, nullptr);
    phi_rv = solve("phi_rv", fix1, nullptr);
    phi_epi.resize(std::size_t(n));
    for (std::size_t m = 0; m < std::size_t(n); ++m) phi_epi[m] = 1.0 - phi_lv[m] - phi_rv[m];
  } else {
    phi_epi = solve("phi_epi", fix0, nullptr);
  }
  const std::vector<double> psi = solve("psi_ab", fix_ab, &guess);

  // A vanishing gradient (e.g. a surface voxel whose neighbours all share its Dirichlet value) takes
  // the sum of its neighbours' gradients (one pass).
  const double tiny = 1e-9 / grid.spacing.minCoeff();
  auto repaired = [&](Eigen::Matrix3Xd g) {
    const Eigen::Matrix3Xd raw = g;
    parallel_for(n, [&](std::int64_t m) {
      if (raw.col(m).norm() > tiny) return;
      Eigen::Vector3d sum = Eigen::Vector3d::Zero();
      for (std::int32_t q : domain.neighbours[std::size_t(m)])
        if (q >= 0 && raw.col(q).norm() > tiny) sum += raw.col(q);
      g.col(m) = sum;
    });
    return g;
  };
  // On the Dirichlet layers the one-sided differences follow the voxel staircase; there the gradient
  // is the mean of the free 6-neighbours' gradients (central differences inside the wall).
  auto surface_from_inside = [&](Eigen::Matrix3Xd g, const std::vector<double>& fixed) {
    const Eigen::Matrix3Xd raw = g;
    parallel_for(n, [&](std::int64_t m) {
      if (std::isnan(fixed[std::size_t(m)])) return;
      Eigen::Vector3d sum = Eigen::Vector3d::Zero();
      int c = 0;
      for (std::int32_t q : domain.neighbours[std::size_t(m)])
        if (q >= 0 && std::isnan(fixed[std::size_t(q)])) {
          sum += raw.col(q);
          ++c;
        }
      if (c > 0) g.col(m) = sum / c;
    });
    return g;
  };
  const Eigen::Matrix3Xd g_ab = repaired(surface_from_inside(voxel_gradient(domain, psi), fix_ab));
  const Eigen::Matrix3Xd g_epi = repaired(surface_from_inside(voxel_gradient(domain, phi_epi), fix0));
  Eigen::Matrix3Xd g_lv, g_rv;
  if (biv) {
    g_lv = surface_from_inside(voxel_gradient(domain, phi_lv), fix0);
    g_rv = surface_from_inside(voxel_gradient(domain, phi_rv), fix1);
  }

  LdrbFields local_fields;
  LdrbFields& fld = fields ? *fields : local_fields;
  fld = LdrbFields{out.voxels, std::vector<LdrbPoint>(std::size_t(n)), biv, ax, grid.direction, tiny};
  out.fibre.resize(3, n);
  out.sheet.resize(3, n);
  std::vector<std::uint8_t> degenerate(std::size_t(n), 0);
  parallel_for(n, [&](std::int64_t m) {
    const std::size_t mi = std::size_t(m);
    LdrbPoint& p = fld.points[mi];
    p.phi_epi = phi_epi[mi];
    p.g_ab = g_ab.col(m);
    p.g_epi = g_epi.col(m);
    if (biv) {
      p.phi_lv = phi_lv[mi], p.phi_rv = phi_rv[mi];
      p.g_lv = g_lv.col(m), p.g_rv = g_rv.col(m);
    }
    const imaging::Index3 ijk = grid.index(out.voxels[mi]);
    p.position = grid.point(ijk[0], ijk[1], ijk[2]);
    bool bad = false;
    const Eigen::Matrix3d f = ldrb_frame(p, fld, angles, bad);
    out.fibre.col(m) = f.col(0);
    out.sheet.col(m) = f.col(2);
    degenerate[mi] = bad;
  });
  for (std::uint8_t b : degenerate) rep.degenerate_voxels += b;
  if (report) {
    rep.phi_epi = std::move(phi_epi);
    rep.phi_lv = biv ? std::move(phi_lv) : std::vector<double>();
    if (!biv) {
      rep.phi_lv.resize(rep.phi_epi.size());
      for (std::size_t m = 0; m < rep.phi_epi.size(); ++m) rep.phi_lv[m] = 1.0 - rep.phi_epi[m];
    }
    rep.phi_rv = biv ? std::move(phi_rv) : std::vector<double>(rep.phi_epi.size(), 0.0);
    rep.psi_ab = psi;
  }
  rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace cardio::fibres
