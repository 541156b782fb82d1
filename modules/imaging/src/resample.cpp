#include "cardio/imaging/resample.hpp"

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "cardio/core/error.hpp"
#include "cardio/imaging/memory.hpp"

namespace cardio::imaging {

namespace {

constexpr double kBoxTol = 1e-6;  // [index units] slack when testing "inside the voxel box"

void check_grid(const Grid& g, const char* what) {
  CARDIO_CHECK(g.size[0] >= 0 && g.size[1] >= 0 && g.size[2] >= 0, what << ": negative size");
  CARDIO_CHECK(g.spacing.allFinite() && g.spacing.minCoeff() > 0, what << ": spacing must be positive");
  CARDIO_CHECK(g.origin.allFinite() && g.direction.allFinite(), what << ": non-finite geometry");
}

template <class T>
void check_volume(const Volume<T>& v, const char* what) {
  check_grid(v.grid, what);
  CARDIO_CHECK(static_cast<std::size_t>(v.grid.n_voxels()) == v.values.size(),
               what << ": " << v.values.size() << " values for " << v.grid.n_voxels() << " voxels");
}

/// Affine map from the integer index of grid `from` to the continuous index of grid `to`:
/// c = A * ijk + b (exact composition of from.point() and to.continuous_index()).
struct IndexMap {
  Eigen::Matrix3d A;
  Eigen::Vector3d b;
  IndexMap(const Grid& from, const Grid& to) {
    const Eigen::Matrix3d to_inv = to.spacing.cwiseInverse().asDiagonal() * to.direction.transpose();
    A = to_inv * from.direction * from.spacing.asDiagonal();
    b = to_inv * (from.origin - to.origin);
  }
};

/// Linear index of the voxel of `g` containing continuous index c, or -1 if outside.
std::int64_t containing_voxel(const Grid& g, const Eigen::Vector3d& c) {
  std::int64_t idx[3];
  for (int a = 0; a < 3; ++a) {
    const double r = std::floor(c[a] + 0.5);
    if (!(r >= 0 && r < double(g.size[a]))) return -1;
    idx[a] = static_cast<std::int64_t>(r);
  }
  return g.linear(idx[0], idx[1], idx[2]);
}

/// Linear index of the voxel of `g` nearest to continuous index c, or -1 if c is outside the box
/// covered by the voxels (with kBoxTol slack, then clamped).
std::int64_t nearest_voxel(const Grid& g, const Eigen::Vector3d& c) {
  std::int64_t idx[3];
  for (int a = 0; a < 3; ++a) {
    if (!(c[a] >= -0.5 - kBoxTol && c[a] <= double(g.size[a]) - 0.5 + kBoxTol)) return -1;
    const double r = std::clamp(std::floor(c[a] + 0.5), 0.0, double(g.size[a] - 1));
    idx[a] = static_cast<std::int64_t>(r);
  }
  return g.linear(idx[0], idx[1], idx[2]);
}

/// Source voxels grouped by the target voxel containing their centre (CSR layout, ascending
/// source order within each bin). Only source voxels with include(s) true are binned.
struct Bins {
  std::vector<std::uint32_t> offsets;  ///< target t owns members[offsets[t] .. offsets[t+1])
  std::vector<std::uint32_t> members;  ///< source linear indices
};

template <class Include>
Bins bin_sources(const Grid& source, const Grid& target, Include&& include) {
  CARDIO_CHECK(source.n_voxels() <= std::int64_t(std::numeric_limits<std::uint32_t>::max()),
               "source grid too large for resampling (" << source.n_voxels() << " voxels)");
  const IndexMap map(source, target);
  const auto nt = static_cast<std::size_t>(target.n_voxels());
  // Target voxel of every source voxel, visited in linear order; f(source, target).
  auto for_each = [&](auto&& f) {
    for (std::int64_t k = 0; k < source.size[2]; ++k)
      for (std::int64_t j = 0; j < source.size[1]; ++j) {
        const Eigen::Vector3d row = map.A.col(1) * double(j) + map.A.col(2) * double(k) + map.b;
        const std::int64_t s0 = source.linear(0, j, k);
        for (std::int64_t i = 0; i < source.size[0]; ++i) {
          const std::int64_t s = s0 + i;
          if (!include(s)) continue;
          const std::int64_t t = containing_voxel(target, row + map.A.col(0) * double(i));
          if (t >= 0) f(s, t);
        }
      }
  };
  check_fits_in_memory(4 * (std::uint64_t(nt) + 1 + std::uint64_t(source.n_voxels())),
                       "resampling " + std::to_string(source.n_voxels()) + " voxels onto " + std::to_string(nt));
  Bins bins;
  bins.offsets.assign(nt + 1, 0);
  for_each([&](std::int64_t, std::int64_t t) { ++bins.offsets[static_cast<std::size_t>(t)]; });
  std::uint32_t sum = 0;  // exclusive scan: offsets[t] = start of bin t
  for (std::size_t t = 0; t < nt; ++t) sum += std::exchange(bins.offsets[t], sum);
  bins.offsets[nt] = sum;
  bins.members.resize(sum);
  for_each([&](std::int64_t s, std::int64_t t) {
    bins.members[bins.offsets[static_cast<std::size_t>(t)]++] = static_cast<std::uint32_t>(s);
  });
  // offsets[t] is now the end of bin t = start of bin t + 1: shift back by one.
  for (std::size_t t = nt; t > 0; --t) bins.offsets[t] = bins.offsets[t - 1];
  bins.offsets[0] = 0;
  return bins;
}

/// Nearest source voxel (or -1) of every target voxel centre, computed on demand.
struct NearestSource {
  const Grid& source;
  const Grid& target;
  IndexMap map;
  NearestSource(const Grid& s, const Grid& t) : source(s), target(t), map(t, s) {}
  std::int64_t operator()(std::int64_t t) const {
    const Index3 ijk = target.index(t);
    const Eigen::Vector3d c = map.A * Eigen::Vector3d(double(ijk[0]), double(ijk[1]), double(ijk[2])) + map.b;
    return nearest_voxel(source, c);
  }
};

}  // namespace

Grid resampled_grid(const Grid& source, double element_size_mm) {
  check_grid(source, "source grid");
  if (!(std::isfinite(element_size_mm) && element_size_mm > 0))
    CARDIO_FAIL("element size must be a positive length in mm, got " << element_size_mm);
  Grid g;
  g.direction = source.direction;
  g.spacing = Eigen::Vector3d::Constant(element_size_mm);
  // Centre of the source voxel box, in source continuous index: (size - 1) / 2.
  Eigen::Vector3d centre_index, half_extent;
  for (int a = 0; a < 3; ++a) {
    const double length = double(source.size[a]) * source.spacing[a];
    g.size[a] = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(length / element_size_mm - 1e-6)));
    centre_index[a] = 0.5 * double(source.size[a] - 1);
    half_extent[a] = 0.5 * double(g.size[a] - 1) * element_size_mm;
  }
  const Eigen::Vector3d centre = source.point(centre_index);
  g.origin = centre - g.direction * half_extent;
  return g;
}

LabelVolume resample_labels(const LabelVolume& labels, const Grid& target, LabelVote vote) {
  check_volume(labels, "resample_labels: labels");
  check_grid(target, "resample_labels: target grid");
  LabelVolume out;
  out.grid = target;
  const auto nt = static_cast<std::size_t>(target.n_voxels());
  out.values.assign(nt, 0);
  const NearestSource nearest(labels.grid, target);
  auto nearest_label = [&](std::size_t t) {
    const std::int64_t s = nearest(static_cast<std::int64_t>(t));
    return s < 0 ? std::int32_t{0} : labels.values[static_cast<std::size_t>(s)];
  };
  if (vote == LabelVote::nearest) {
    for (std::size_t t = 0; t < nt; ++t) out.values[t] = nearest_label(t);
    return out;
  }
  const Bins bins = bin_sources(labels.grid, target, [](std::int64_t) { return true; });
  std::vector<std::int32_t> ballot;
  for (std::size_t t = 0; t < nt; ++t) {
    const auto b = static_cast<std::size_t>(bins.offsets[t]), e = static_cast<std::size_t>(bins.offsets[t + 1]);
    if (b == e) {
      out.values[t] = nearest_label(t);
      continue;
    }
    ballot.clear();
    bool uniform = true;
    const std::int32_t first = labels.values[bins.members[b]];
    for (std::size_t m = b; m < e; ++m) {
      const std::int32_t l = labels.values[bins.members[m]];
      uniform = uniform && l == first;
      ballot.push_back(l);
    }
    if (uniform) {
      out.values[t] = first;
      continue;
    }
    std::sort(ballot.begin(), ballot.end());
    // Runs in ascending label order; a strictly larger count is needed to win, so ties keep
    // the smaller label.
    std::int32_t best = ballot[0];
    std::size_t best_count = 0;
    for (std::size_t r = 0; r < ballot.size();) {
      std::size_t q = r;
      while (q < ballot.size() && ballot[q] == ballot[r]) ++q;
      if (q - r > best_count) {
        best_count = q - r;
        best = ballot[r];
      }
      r = q;
    }
    out.values[t] = best;
  }
  return out;
}

VectorVolume resample_axes(const VectorVolume& fibres, const Grid& target, const AxisMask& mask) {
  check_volume(fibres, "resample_axes: fibres");
  check_grid(target, "resample_axes: target grid");
  if (mask.labels) {
    std::string why;
    if (!same_grid(mask.labels->grid, fibres.grid, &why))
      CARDIO_FAIL("the fibre mask is not on the fibre grid: " << why);
    check_volume(*mask.labels, "resample_axes: mask");
  }
  std::vector<std::int32_t> keep = mask.keep;
  std::sort(keep.begin(), keep.end());
  auto valid = [&](std::int64_t s) {
    const Eigen::Vector3f& v = fibres.values[static_cast<std::size_t>(s)];
    if (!v.allFinite() || v.squaredNorm() <= 0.0f) return false;
    if (!mask.labels) return true;
    const std::int32_t l = mask.labels->values[static_cast<std::size_t>(s)];
    return keep.empty() ? l != 0 : std::binary_search(keep.begin(), keep.end(), l);
  };
  VectorVolume out;
  out.grid = target;
  const auto nt = static_cast<std::size_t>(target.n_voxels());
  out.values.assign(nt, Eigen::Vector3f::Zero());
  const Bins bins = bin_sources(fibres.grid, target, valid);
  const NearestSource nearest(fibres.grid, target);
  Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> solver;
  for (std::size_t t = 0; t < nt; ++t) {
    const auto b = static_cast<std::size_t>(bins.offsets[t]), e = static_cast<std::size_t>(bins.offsets[t + 1]);
    if (b == e) {
      const std::int64_t s = nearest(static_cast<std::int64_t>(t));
      if (s >= 0 && valid(s)) out.values[t] = fibres.values[static_cast<std::size_t>(s)].normalized();
      continue;
    }
    const Eigen::Vector3d u0 = fibres.values[bins.members[b]].cast<double>().normalized();
    if (e - b == 1) {
      out.values[t] = u0.cast<float>();
      continue;
    }
    Eigen::Matrix3d T = Eigen::Matrix3d::Zero();
    for (std::size_t m = b; m < e; ++m) {
      const Eigen::Vector3d u = fibres.values[bins.members[m]].cast<double>().normalized();
      T.noalias() += u * u.transpose();
    }
    solver.computeDirect(T);
    Eigen::Vector3d p = solver.eigenvectors().col(2);  // eigenvalues ascending
    if (p.dot(u0) < 0) p = -p;
    out.values[t] = p.normalized().cast<float>();
  }
  return out;
}

}  // namespace cardio::imaging
