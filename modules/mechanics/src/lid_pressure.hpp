#pragma once
/// @file lid_pressure.hpp
/// Forces and stiffness of LidPressureLoad (system.hpp). The cap is the fan of flat triangles
/// (c, a, b), c the mean of the rim nodes; the follower pressure on a flat triangle puts
/// p A / 3 on each corner, A = (a - c) x (b - c) / 2 its area vector (linear shape functions,
/// int N_i dA = A / 3). c's share goes to every rim node by 1/n. On a closed surface these are the
/// forces p dV/dx of the enclosed volume (Promayon et al. 1996), which the beat's cavity pressure
/// applies. Serial, in edge order (deterministic).
#include <Eigen/Core>
#include <map>

#include "cardio/mechanics/system.hpp"

namespace cardio::mechanics::detail {

/// [v]x: the matrix of u -> v x u.
inline Eigen::Matrix3d cross_matrix(const Eigen::Vector3d& v) {
  Eigen::Matrix3d m;
  m << 0, -v.z(), v.y(), v.z(), 0, -v.x(), -v.y(), v.x(), 0;
  return m;
}

/// The cap centre c: the mean of the rim nodes at x.
inline Eigen::Vector3d lid_centre(const LidPressureLoad& lid, const Eigen::Matrix3Xd& x) {
  Eigen::Vector3d c = Eigen::Vector3d::Zero();
  for (std::int32_t r : lid.rim) c += x.col(r);
  return c / double(lid.rim.size());
}

inline void add_lid_forces(const LidPressureLoad& lid, const Eigen::Matrix3Xd& x, double p, Eigen::Matrix3Xd& f) {
  if (p == 0 || lid.rim.empty()) return;
  const Eigen::Vector3d c = lid_centre(lid, x);
  Eigen::Vector3d f_c = Eigen::Vector3d::Zero();
  for (const auto& [a, b] : lid.edges) {
    const Eigen::Vector3d corner = (p / 6) * (x.col(a) - c).cross(x.col(b) - c);  // p A / 3
    f.col(a) += corner;
    f.col(b) += corner;
    f_c += corner;
  }
  f_c /= double(lid.rim.size());
  for (std::int32_t r : lid.rim) f.col(r) += f_c;
}

/// add(i, j, K_ij), K = -df/dx. With u = a - c, w = b - c, each corner's force p/6 u x w has
/// d(u x w) = -[w]x da + [u]x db + ([w]x - [u]x) dc, so every corner row gets K_a = p/6 [w]x,
/// K_b = -p/6 [u]x, K_c = p/6 ([u]x - [w]x); rows and columns of c reach the rim by 1/n. A follower
/// load: not symmetric.
template <class Add>
void add_lid_stiffness(const LidPressureLoad& lid, const Eigen::Matrix3Xd& x, double p, Add&& add) {
  if (p == 0 || lid.rim.empty()) return;
  const Eigen::Vector3d c = lid_centre(lid, x);
  const double n = double(lid.rim.size());
  std::map<std::int32_t, Eigen::Matrix3d> row_to_c, c_to_col;  // K_ic and K_ci, summed (ordered: deterministic)
  Eigen::Matrix3d K_cc = Eigen::Matrix3d::Zero();
  const auto accumulate = [](std::map<std::int32_t, Eigen::Matrix3d>& m, std::int32_t i, const Eigen::Matrix3d& k) {
    auto [it, fresh] = m.try_emplace(i, k);
    if (!fresh) it->second += k;
  };
  for (const auto& [a, b] : lid.edges) {
    const Eigen::Matrix3d U = cross_matrix(x.col(a) - c), W = cross_matrix(x.col(b) - c);
    const Eigen::Matrix3d K_a = (p / 6) * W, K_b = -(p / 6) * U, K_c = (p / 6) * (U - W);
    for (std::int32_t row : {a, b}) {
      add(row, a, K_a);
      add(row, b, K_b);
      accumulate(row_to_c, row, K_c);
    }
    accumulate(c_to_col, a, K_a);
    accumulate(c_to_col, b, K_b);
    K_cc += K_c;
  }
  for (std::int32_t r : lid.rim) {
    for (const auto& [i, K_ic] : row_to_c) add(i, r, K_ic / n);
    for (const auto& [j, K_cj] : c_to_col) add(r, j, K_cj / n);
    for (std::int32_t s : lid.rim) add(r, s, K_cc / (n * n));
  }
}

}  // namespace cardio::mechanics::detail
