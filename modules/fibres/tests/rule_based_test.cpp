#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <Eigen/LU>
#include <chrono>
#include <cmath>
#include <functional>
#include <iostream>

#include "cardio/core/error.hpp"
#include "cardio/core/parallel.hpp"
#include "cardio/fibres/frames.hpp"
#include "cardio/fibres/rule_based.hpp"
#include "cardio/fibres/sampling.hpp"
#include "cardio/meshing/boundary.hpp"
#include "cardio/phantoms/phantoms.hpp"

namespace cardio::fibres {
namespace {

using imaging::RoleVolume;
constexpr double kDeg = M_PI / 180.0;

double wrap90(double d) {
  while (d > 90.0) d -= 180.0;
  while (d <= -90.0) d += 180.0;
  return d;
}

/// Phantom labels -> roles: 1, 3 myocardium; 2 cavity "lv"; 4 cavity "rv".
RoleVolume roles_of(const phantoms::Phantom& p, bool biv) {
  RoleVolume r;
  r.labels = p.labels;
  r.role.grid = p.labels.grid;
  r.role.values.resize(p.labels.values.size());
  for (std::size_t v = 0; v < p.labels.values.size(); ++v) {
    const std::int32_t l = p.labels.values[v];
    r.role.values[v] = (l == 1 || l == 3) ? RoleVolume::kMyocardium
                       : l == 2           ? RoleVolume::cavity_role(0)
                       : l == 4           ? RoleVolume::cavity_role(1)
                                          : RoleVolume::kOutside;
  }
  r.cavity_names = biv ? std::vector<std::string>{"lv", "rv"} : std::vector<std::string>{"lv"};
  return r;
}

RuleAngles angles_deg(double a_endo, double a_epi, double b_endo, double b_epi) {
  RuleAngles a;
  a.helix_endo = a_endo * kDeg;
  a.helix_epi = a_epi * kDeg;
  a.sheet_endo = b_endo * kDeg;
  a.sheet_epi = b_epi * kDeg;
  return a;
}

struct Sample {
  double helix = 0, sheet = 0;  ///< measured against the analytic shell directions [deg]
  double phi_epi = 0, phi_lv = 0, phi_rv = 0;
};

/// Helix and sheet angles of the rule frames at the myocardium voxels with label `label` whose
/// centre (phantom frame = physical, unrotated) satisfies `select`, against the analytic e_u, e_v
/// and outward normal of `shell`.
template <class Select>
std::vector<Sample> sample(const phantoms::Phantom& p, const imaging::VoxelFrames& fr, const RuleReport& rep,
                           const phantoms::EllipsoidShell& shell, std::int32_t label, Select select) {
  std::vector<Sample> out;
  const imaging::Grid& g = p.labels.grid;
  for (std::size_t m = 0; m < fr.voxels.size(); ++m) {
    if (p.labels.values[std::size_t(fr.voxels[m])] != label) continue;
    const auto ijk = g.index(fr.voxels[m]);
    const Eigen::Vector3d x = g.point(ijk[0], ijk[1], ijk[2]);
    if (!select(x)) continue;
    const phantoms::ShellCoordinates c = phantoms::shell_coordinates(shell, x);
    const Eigen::Vector3d f = fr.fibre.col(Eigen::Index(m)), s = fr.sheet.col(Eigen::Index(m));
    Sample smp;
    smp.helix = wrap90(std::atan2(f.dot(c.e_u), f.dot(c.e_v)) / kDeg);
    smp.sheet = wrap90(std::atan2(s.dot(c.normal.cross(f)), s.dot(c.normal)) / kDeg);
    smp.phi_epi = rep.phi_epi[m];
    smp.phi_lv = rep.phi_lv[m];
    smp.phi_rv = rep.phi_rv[m];
    out.push_back(smp);
  }
  return out;
}

struct Stat {
  int n = 0;
  double mean_measured = 0, mean_requested = 0, mean_abs_error = 0, max_abs_error = 0;
};

template <class Pick, class Requested, class Measured>
Stat stat(const std::vector<Sample>& s, Pick pick, Requested requested, Measured measured) {
  Stat st;
  for (const Sample& x : s) {
    if (!pick(x)) continue;
    const double r = requested(x), m = measured(x), e = std::abs(wrap90(m - r));
    ++st.n;
    st.mean_measured += m;
    st.mean_requested += r;
    st.mean_abs_error += e;
    st.max_abs_error = std::max(st.max_abs_error, e);
  }
  if (st.n) {
    st.mean_measured /= st.n;
    st.mean_requested /= st.n;
    st.mean_abs_error /= st.n;
  }
  return st;
}

/// Equator band of the LV: z in [-6, 0] mm (away from the base z = 5 and the apex z = -20).
bool equator(const Eigen::Vector3d& x) { return x.z() >= -6.0 && x.z() <= 0.0; }

void check_lv_helix(double voxel, const RuleAngles& a, double tol_helix, double tol_sheet) {
  phantoms::PhantomSpec spec;
  spec.voxel_size = voxel;
  const phantoms::Phantom p = phantoms::make_phantom(spec);
  const RoleVolume roles = roles_of(p, false);
  const auto t0 = std::chrono::steady_clock::now();
  const meshing::BoundaryClassification b = meshing::classify_boundary(roles, meshing::BaseSpec{});
  RuleReport rep;
  const imaging::VoxelFrames fr = rule_based_frames(roles, b, a, &rep);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::string why;
  ASSERT_TRUE(check_frames(fr, 1e-9, &why)) << why;
  EXPECT_FALSE(rep.biventricular);
  EXPECT_EQ(rep.degenerate_voxels, 0);
  std::cout << "LV phantom " << voxel << " mm: " << fr.voxels.size() << " myocardium voxels, " << secs
            << " s (boundary + rule); Laplace:";
  for (const auto& s : rep.problems)
    std::cout << " " << s.name << " " << s.iterations << " it (res " << s.relative_residual << ", " << s.seconds
              << " s)";
  std::cout << "\n";

  const auto smp = sample(p, fr, rep, spec.lv.shell(), 1, equator);
  const double ae = a.helix_endo / kDeg, aw = a.helix_epi / kDeg, be = a.sheet_endo / kDeg, bw = a.sheet_epi / kDeg;
  auto helix_req = [&](const Sample& x) { return ae + x.phi_epi * (aw - ae); };
  auto sheet_req = [&](const Sample& x) { return be + x.phi_epi * (bw - be); };
  auto helix = [](const Sample& x) { return x.helix; };
  auto sheet = [](const Sample& x) { return x.sheet; };
  struct Band {
    const char* name;
    std::function<bool(const Sample&)> pick;
  };
  const Band bands[] = {
      {"endo (phi_epi = 0)", [](const Sample& x) { return x.phi_epi <= 1e-12; }},
      {"mid (|phi_epi - 0.5| <= 0.1)", [](const Sample& x) { return std::abs(x.phi_epi - 0.5) <= 0.1; }},
      {"epi (phi_epi = 1)", [](const Sample& x) { return x.phi_epi >= 1 - 1e-12; }}};
  for (const Band& band : bands) {
    const Stat h = stat(smp, band.pick, helix_req, helix);
    const Stat s = stat(smp, band.pick, sheet_req, sheet);
    std::cout << "  " << band.name << ": n = " << h.n << ", helix requested " << h.mean_requested << " measured "
              << h.mean_measured << " (mean |err| " << h.mean_abs_error << ", max " << h.max_abs_error
              << "); sheet requested " << s.mean_requested << " measured " << s.mean_measured << " (mean |err| "
              << s.mean_abs_error << ")\n";
    EXPECT_GT(h.n, 20) << band.name;
    EXPECT_LT(std::abs(h.mean_measured - h.mean_requested), tol_helix) << band.name;
    EXPECT_LT(h.mean_abs_error, tol_helix) << band.name;
    EXPECT_LT(s.mean_abs_error, band.pick(Sample{0, 0, 0.5, 0, 0}) ? 5.0 : tol_sheet) << band.name;
  }
}

TEST(RuleBased, LvHelixStreeterAngles) { check_lv_helix(0.5, angles_deg(60, -60, 0, 0), 5.0, 10.0); }
TEST(RuleBased, LvHelixBayerDefaults) { check_lv_helix(0.5, RuleAngles{}, 5.0, 10.0); }
TEST(RuleBased, LvHelixOneMillimetre) { check_lv_helix(1.0, angles_deg(60, -60, -20, 20), 5.0, 10.0); }

TEST(RuleBased, DefaultsAreBayers) {
  const RuleAngles a;
  EXPECT_NEAR(a.helix_endo / kDeg, 40, 1e-12);
  EXPECT_NEAR(a.helix_epi / kDeg, -50, 1e-12);
  EXPECT_NEAR(a.sheet_endo / kDeg, -65, 1e-12);
  EXPECT_NEAR(a.sheet_epi / kDeg, 25, 1e-12);
}

TEST(RuleBased, OrientAndBislerp) {
  Eigen::Matrix3d q;
  ASSERT_TRUE(ldrb_axis(Eigen::Vector3d(0, 0, 2), Eigen::Vector3d(1, 0, 0.5), q));
  EXPECT_NEAR((q.col(0) - Eigen::Vector3d(0, 1, 0)).norm(), 0, 1e-15);  // e1 x e2 = z x x = y
  EXPECT_FALSE(ldrb_axis(Eigen::Vector3d(0, 0, 2), Eigen::Vector3d(0, 0, -1), q));
  EXPECT_FALSE(ldrb_axis(Eigen::Vector3d::Zero(), Eigen::Vector3d(1, 0, 0), q));
  // orient: fibre at helix alpha from e0 towards e1; sheet = e2 turned by beta about the fibre.
  const double al = 0.3, be = 0.5;
  const Eigen::Matrix3d o = ldrb_orient(q, al, be);
  const Eigen::Vector3d f = std::cos(al) * q.col(0) + std::sin(al) * q.col(1);
  EXPECT_NEAR((o.col(0) - f).norm(), 0, 1e-15);
  EXPECT_NEAR((o.col(2) - (std::cos(be) * q.col(2) + std::sin(be) * q.col(2).cross(f))).norm(), 0, 1e-15);
  // bislerp of a frame and a flipped copy of itself: identical axes at any t.
  const Eigen::Matrix3d flipped = q * Eigen::Vector3d(-1, 1, -1).asDiagonal();
  int k = -1;
  const Eigen::Matrix3d mid = ldrb_bislerp(q, flipped, 0.5, &k);
  EXPECT_EQ(k, 2);
  EXPECT_NEAR((mid - flipped).norm(), 0, 1e-12);
  // Rotation about e2 by 60 deg: halfway is 30 deg.
  const Eigen::Matrix3d r = ldrb_orient(q, M_PI / 3, 0);
  const Eigen::Matrix3d h = ldrb_bislerp(q, r, 0.5, &k);
  EXPECT_EQ(k, 0);
  EXPECT_NEAR((h - ldrb_orient(q, M_PI / 6, 0)).norm(), 0, 1e-12);
}

TEST(RuleBased, BitIdenticalAcrossThreadCounts) {
  phantoms::PhantomSpec spec;
  spec.voxel_size = 1.0;
  spec.biventricular = true;
  const phantoms::Phantom p = phantoms::make_phantom(spec);
  const RoleVolume roles = roles_of(p, true);
  const meshing::BoundaryClassification b = meshing::classify_boundary(roles, meshing::BaseSpec{});
  const int saved = cardio::thread_count();
  cardio::set_thread_count(1);
  const imaging::VoxelFrames a = rule_based_frames(roles, b, RuleAngles{});
  cardio::set_thread_count(2);
  const imaging::VoxelFrames c = rule_based_frames(roles, b, RuleAngles{});
  cardio::set_thread_count(saved);
  EXPECT_EQ(a.voxels, c.voxels);
  EXPECT_TRUE((a.fibre.array() == c.fibre.array()).all());
  EXPECT_TRUE((a.sheet.array() == c.sheet.array()).all());
}

TEST(RuleBased, RotatedPhantomGivesRotatedFrames) {
  phantoms::PhantomSpec spec;
  spec.voxel_size = 1.0;
  const phantoms::Phantom p = phantoms::make_phantom(spec);
  const Eigen::Matrix3d R = Eigen::AngleAxisd(1.1, Eigen::Vector3d(2, -1, 1).normalized()).toRotationMatrix();
  spec.rotation = R;
  const phantoms::Phantom pr = phantoms::make_phantom(spec);
  const RoleVolume r0 = roles_of(p, false), r1 = roles_of(pr, false);
  // Half a voxel of base tolerance: the default (one voxel) puts faces exactly one voxel below the
  // base plane on the tolerance, where rounding in the rotated grid decides.
  meshing::BaseSpec base;
  base.tolerance = 0.5 * spec.voxel_size;
  const auto b0 = meshing::classify_boundary(r0, base);
  const auto b1 = meshing::classify_boundary(r1, base);
  ASSERT_EQ(b0.faces.size(), b1.faces.size());
  for (std::size_t i = 0; i < b0.faces.size(); ++i) ASSERT_EQ(b0.faces[i].tag, b1.faces[i].tag) << "face " << i;
  ASSERT_EQ(b0.axis.apex_voxel, b1.axis.apex_voxel);
  const imaging::VoxelFrames f0 = rule_based_frames(r0, b0, RuleAngles{});
  const imaging::VoxelFrames f1 = rule_based_frames(r1, b1, RuleAngles{});
  ASSERT_EQ(f0.voxels, f1.voxels);
  double worst = 0;
  for (Eigen::Index m = 0; m < f0.fibre.cols(); ++m) {
    worst = std::max(worst, (f1.fibre.col(m) - R * f0.fibre.col(m)).norm());
    worst = std::max(worst, (f1.sheet.col(m) - R * f0.sheet.col(m)).norm());
  }
  EXPECT_LT(worst, 1e-6);
}

TEST(RuleBased, Biventricular) {
  phantoms::PhantomSpec spec;
  spec.voxel_size = 0.5;
  spec.biventricular = true;
  const phantoms::Phantom p = phantoms::make_phantom(spec);
  const RoleVolume roles = roles_of(p, true);
  const meshing::BoundaryClassification b = meshing::classify_boundary(roles, meshing::BaseSpec{});
  const RuleAngles a = angles_deg(60, -60, -20, 20);
  RuleReport rep;
  const auto t0 = std::chrono::steady_clock::now();
  const imaging::VoxelFrames fr = rule_based_frames(roles, b, a, &rep);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::string why;
  ASSERT_TRUE(check_frames(fr, 1e-9, &why)) << why;
  EXPECT_TRUE(rep.biventricular);
  ASSERT_EQ(rep.problems.size(), 3u);
  std::cout << "BiV phantom 0.5 mm: " << fr.voxels.size() << " voxels, " << secs << " s, degenerate "
            << rep.degenerate_voxels << "; Laplace:";
  for (const auto& s : rep.problems) std::cout << " " << s.name << " " << s.iterations << " it";
  std::cout << "\n";
  EXPECT_LT(rep.degenerate_voxels, std::int64_t(fr.voxels.size() / 100));

  const double ae = 60, aw = -60;
  auto helix = [](const Sample& x) { return x.helix; };
  auto all = [](const Sample&) { return true; };
  // Inside the wall (off the Dirichlet layers, whose one-sided gradients follow the voxel staircase)
  // every helix angle lies in the requested range +- 5 deg.
  auto in_range = [&](const std::vector<Sample>& s, double lo, double hi, const char* what) {
    int outside = 0, n = 0;
    double worst = 0;
    for (const Sample& x : s) {
      const bool surface =
          x.phi_epi <= 1e-12 || x.phi_epi >= 1 - 1e-12 || x.phi_lv >= 1 - 1e-12 || x.phi_rv >= 1 - 1e-12;
      if (surface) continue;
      ++n;
      worst = std::max({worst, lo - x.helix, x.helix - hi});
      outside += (x.helix < lo - 5 || x.helix > hi + 5);
    }
    std::cout << "  " << what << ": " << n << " voxels inside the wall, largest excess over [" << lo << ", " << hi
              << "]: " << worst << " deg\n";
    EXPECT_GT(n, 10) << what;
    EXPECT_EQ(outside, 0) << what << ": " << outside << " of " << n << " helix angles outside [" << lo << ", " << hi
                          << "] +- 5 deg";
  };
  auto report = [&](const char* what, const Stat& st) {
    std::cout << "  " << what << ": n = " << st.n << ", helix requested " << st.mean_requested << " measured "
              << st.mean_measured << " (mean |err| " << st.mean_abs_error << ")\n";
  };

  // Septum: LV wall facing the RV cavity (x > 6.5, |y| < 2), against the LV analytic frame whose
  // outward normal points into the RV: Bayer's septal rule goes from +a_endo (LV side) to -a_endo
  // (RV side) in that LV -> RV frame.
  const auto septum = sample(p, fr, rep, spec.lv.shell(), 1, [](const Eigen::Vector3d& x) {
    return equator(x) && x.x() > 6.5 && std::abs(x.y()) < 2.0;
  });
  ASSERT_GT(septum.size(), 50u);
  in_range(septum, -ae, ae, "septum");
  const Stat s_lv = stat(
      septum, [](const Sample& x) { return x.phi_lv >= 1 - 1e-12; }, [&](const Sample&) { return ae; }, helix);
  const Stat s_rv = stat(
      septum, [](const Sample& x) { return x.phi_rv >= 1 - 1e-12; }, [&](const Sample&) { return -ae; }, helix);
  report("septum, LV surface", s_lv);
  report("septum, RV surface", s_rv);
  EXPECT_GT(s_lv.n, 5);
  EXPECT_GT(s_rv.n, 5);
  EXPECT_LT(s_lv.mean_abs_error, 5.0);
  EXPECT_LT(s_rv.mean_abs_error, 5.0);

  // LV free wall (x < -6.5, |y| < 2): linear in phi_epi like the LV-only case.
  const auto lv_wall = sample(p, fr, rep, spec.lv.shell(), 1, [](const Eigen::Vector3d& x) {
    return equator(x) && x.x() < -6.5 && std::abs(x.y()) < 2.0;
  });
  in_range(lv_wall, aw, ae, "LV free wall");
  auto req = [&](const Sample& x) { return ae + x.phi_epi * (aw - ae); };
  const Stat lvw = stat(lv_wall, all, req, helix);
  report("LV free wall", lvw);
  EXPECT_LT(lvw.mean_abs_error, 5.0);

  // RV free wall (label 3, x > 15.5, |y| < 2) against the RV shell's own analytic frame.
  const auto rv_wall = sample(p, fr, rep, spec.rv.shell(), 3, [](const Eigen::Vector3d& x) {
    return equator(x) && x.x() > 15.5 && std::abs(x.y()) < 2.0;
  });
  ASSERT_GT(rv_wall.size(), 20u);
  in_range(rv_wall, aw, ae, "RV free wall");
  const Stat rvw = stat(rv_wall, all, req, helix);
  report("RV free wall", rvw);
  EXPECT_LT(rvw.mean_abs_error, 5.0);
}

TEST(RuleBased, InputErrors) {
  phantoms::PhantomSpec spec;
  spec.voxel_size = 2.0;
  const phantoms::Phantom p = phantoms::make_phantom(spec);
  RoleVolume roles = roles_of(p, false);
  meshing::BaseSpec none;
  none.mode = meshing::BaseSpec::Mode::none;
  EXPECT_THROW(rule_based_frames(roles, meshing::classify_boundary(roles, none)), cardio::Error);
  const auto b = meshing::classify_boundary(roles, meshing::BaseSpec{});
  roles.cavity_names = {"left"};  // a single cavity is the LV whatever its name
  EXPECT_NO_THROW(rule_based_frames(roles, b));
  roles.cavity_names = {"a", "b"};
  EXPECT_THROW(rule_based_frames(roles, b), cardio::Error);
}

}  // namespace
}  // namespace cardio::fibres

namespace cardio::fibres {
namespace {

// The rule evaluated at the sampled-axes element's Gauss points (sampling.hpp, rule_frames_at)
// against the analytic wall depth of the phantom: at 1 mm the helix angle turns by about 25
// degrees per voxel, so a sample a quarter voxel off the centre must not carry its voxel's angle.
// Reference: Streeter-type angles linear in the analytic depth t of the shell (the rule is linear
// in phi_epi, which follows t across the free wall); compared with the structure-tensor
// interpolation of the voxel frames, which the samples used before.
TEST(RuleBased, RuleAtSamplesFollowsTheWallDepthWithinAVoxel) {
  phantoms::PhantomSpec spec;
  spec.voxel_size = 1.0;
  const phantoms::Phantom p = phantoms::make_phantom(spec);
  const RoleVolume roles = roles_of(p, false);
  const meshing::BoundaryClassification b = meshing::classify_boundary(roles, meshing::BaseSpec{});
  const RuleAngles a = angles_deg(60, -60, 0, 0);
  LdrbFields fields;
  const imaging::VoxelFrames fr = rule_based_frames(roles, b, a, nullptr, {}, &fields);
  ASSERT_EQ(fields.points.size(), fr.voxels.size());
  const imaging::Grid& g = p.labels.grid;
  std::vector<Eigen::Vector3d> pts;
  std::vector<std::int64_t> own;
  const double d = 0.5 / std::sqrt(3.0);  // Gauss points of the unit voxel, in voxels from the centre
  for (std::size_t m = 0; m < fr.voxels.size(); ++m) {
    const auto ijk = g.index(fr.voxels[m]);
    const Eigen::Vector3d c = g.point(ijk[0], ijk[1], ijk[2]);
    if (!equator(c)) continue;
    for (int k = 0; k < 8; ++k)
      pts.push_back(c + g.spacing.cwiseProduct(Eigen::Vector3d(k & 1 ? d : -d, k & 2 ? d : -d, k & 4 ? d : -d)));
    own.insert(own.end(), 8, std::int64_t(m));
  }
  Eigen::Matrix3Xd points(3, Eigen::Index(pts.size()));
  for (std::size_t i = 0; i < pts.size(); ++i) points.col(Eigen::Index(i)) = pts[i];
  const PointFrames at_rule = rule_frames_at(g, fields, a, points, own);
  const PointFrames by_tensor = interpolate_frames(g, fr, points, own);
  double err_rule = 0, err_tensor = 0;
  int n = 0;
  for (Eigen::Index i = 0; i < points.cols(); ++i) {
    const phantoms::ShellCoordinates c = phantoms::shell_coordinates(spec.lv.shell(), points.col(i));
    if (c.t < 0.1 || c.t > 0.9) continue;  // the staircase layers, where phi_epi is pinned
    auto helix = [&](const Eigen::Vector3d& f) { return wrap90(std::atan2(f.dot(c.e_u), f.dot(c.e_v)) / kDeg); };
    const double expected = 60 - 120 * c.t;
    err_rule += std::abs(wrap90(helix(at_rule.fibre.col(i)) - expected));
    err_tensor += std::abs(wrap90(helix(by_tensor.fibre.col(i)) - expected));
    EXPECT_NEAR(at_rule.fibre.col(i).norm(), 1, 1e-12);
    EXPECT_NEAR(at_rule.fibre.col(i).dot(at_rule.sheet.col(i)), 0, 1e-12);
    ++n;
  }
  ASSERT_GT(n, 500);
  std::cout << n << " samples: mean |helix error| rule at samples " << err_rule / n << " deg, structure tensor "
            << err_tensor / n << " deg\n";
  // Measured 10.1 against 11.9 degrees: the rest is the Laplace potential's departure from the
  // analytic depth in this thick, curved wall, common to both.
  EXPECT_LT(err_rule, err_tensor);
  EXPECT_LT(err_rule / n, 11.0);
}

}  // namespace
}  // namespace cardio::fibres
