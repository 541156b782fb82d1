#include "cardio/fibres/frames.hpp"

#include <Eigen/Geometry>
#include <Eigen/LU>
#include <cmath>
#include <sstream>

#include "cardio/core/error.hpp"
#include "cardio/core/parallel.hpp"

namespace cardio::fibres {
namespace {

/// Unit part of v orthogonal to unit f, or false if v is NaN, zero or parallel to f.
bool orthogonal_unit(const Eigen::Vector3d& v, const Eigen::Vector3d& f, Eigen::Vector3d& out) {
  if (!v.allFinite()) return false;
  const double nv = v.norm();
  const Eigen::Vector3d p = v - v.dot(f) * f;
  const double np = p.norm();
  if (!(nv > 0) || !(np > 1e-6 * nv)) return false;
  out = p / np;
  return true;
}

void check_grid(const imaging::Grid& labels, const imaging::Grid& vectors, const std::string& what,
                const std::string& source_name) {
  std::string why;
  if (!imaging::same_grid(labels, vectors, &why))
    CARDIO_FAIL(source_name << ": the " << what << " volume is not on the label grid (" << why
                            << "); resample it to the label grid first");
}

}  // namespace

imaging::VoxelFrames frames_from_vectors(const imaging::RoleVolume& roles, const imaging::VectorVolume& fibre,
                                         const imaging::VectorVolume* sheet, const imaging::VoxelFrames* fill,
                                         const std::string& source_name, std::int64_t* n_filled, bool fill_invalid) {
  const imaging::Grid& grid = roles.role.grid;
  check_grid(grid, fibre.grid, "fibre", source_name);
  CARDIO_CHECK(std::int64_t(fibre.values.size()) == grid.n_voxels(),
               "fibre volume has " << fibre.values.size() << " values");
  if (sheet) {
    check_grid(grid, sheet->grid, "sheet", source_name);
    CARDIO_CHECK(std::int64_t(sheet->values.size()) == grid.n_voxels(),
                 "sheet volume has " << sheet->values.size() << " values");
  }
  imaging::VoxelFrames out;
  out.voxels = imaging::voxels_with_role(roles, imaging::RoleVolume::kMyocardium);
  const std::int64_t n = std::int64_t(out.voxels.size());
  if (fill) {
    if (fill->voxels != out.voxels)
      CARDIO_FAIL(source_name << ": the frames used to fill missing fibres cover " << fill->voxels.size()
                              << " voxels, not the " << n << " myocardium voxels of the labels");
    CARDIO_CHECK(fill->fibre.cols() == n && fill->sheet.cols() == n, "fill frames have the wrong number of columns");
  }
  out.fibre.resize(3, n);
  out.sheet.resize(3, n);
  std::vector<std::uint8_t> bad(std::size_t(n), 0);
  parallel_for(n, [&](std::int64_t m) {
    const std::size_t v = std::size_t(out.voxels[std::size_t(m)]);
    const Eigen::Vector3d raw = fibre.values[v].cast<double>();
    const double nf = raw.norm();
    if (!raw.allFinite() || !(nf > 0)) {
      bad[std::size_t(m)] = 1;
      return;
    }
    const Eigen::Vector3d f = raw / nf;
    Eigen::Vector3d s;
    if (sheet) {
      if (!orthogonal_unit(sheet->values[v].cast<double>(), f, s)) {
        bad[std::size_t(m)] = 1;
        return;
      }
    } else if (!(fill && (orthogonal_unit(fill->sheet.col(m), f, s) ||
                          orthogonal_unit(fill->fibre.col(m).cross(fill->sheet.col(m)), f, s)))) {
      Eigen::Index k;
      f.cwiseAbs().minCoeff(&k);  // lowest index on ties
      orthogonal_unit(Eigen::Vector3d::Unit(k), f, s);
    }
    out.fibre.col(m) = f;
    out.sheet.col(m) = s;
  });

  std::int64_t n_bad = 0, first = -1;
  for (std::int64_t m = 0; m < n; ++m) {
    if (!bad[std::size_t(m)]) continue;
    if (first < 0) first = m;
    ++n_bad;
    if (fill && fill_invalid) {
      out.fibre.col(m) = fill->fibre.col(m);
      out.sheet.col(m) = fill->sheet.col(m);
    }
  }
  if (n_bad > 0 && !(fill && fill_invalid)) {
    const imaging::Index3 ijk = grid.index(out.voxels[std::size_t(first)]);
    CARDIO_FAIL(source_name << ": " << n_bad << " myocardium voxel" << (n_bad == 1 ? " has" : "s have")
                            << " no usable fibre (NaN or zero vector"
                            << (sheet ? ", or a sheet NaN, zero or parallel to it" : "") << "); first at voxel ("
                            << ijk[0] << "," << ijk[1] << "," << ijk[2]
                            << "). Fix the data or fill them from the rule-based fibres");
  }
  if (n_filled) *n_filled = n_bad;  // zero unless filled: otherwise the error above was thrown
  return out;
}

bool check_frames(const imaging::VoxelFrames& frames, double tol, std::string* why) {
  std::ostringstream os;
  const std::int64_t n = std::int64_t(frames.voxels.size());
  if (frames.fibre.cols() != n || frames.sheet.cols() != n) {
    os << "fibre/sheet have " << frames.fibre.cols() << "/" << frames.sheet.cols() << " columns for " << n << " voxels";
  } else {
    for (std::int64_t m = 0; m < n; ++m) {
      const Eigen::Vector3d f = frames.fibre.col(m), s = frames.sheet.col(m);
      if (m > 0 && frames.voxels[std::size_t(m)] <= frames.voxels[std::size_t(m - 1)]) {
        os << "voxels not strictly ascending at column " << m;
      } else if (!f.allFinite() || !s.allFinite()) {
        os << "non-finite vector";
      } else if (std::abs(f.norm() - 1.0) > tol) {
        os << "|f| = " << f.norm();
      } else if (std::abs(s.norm() - 1.0) > tol) {
        os << "|s| = " << s.norm();
      } else if (std::abs(f.dot(s)) > tol) {
        os << "f.s = " << f.dot(s);
      } else {
        Eigen::Matrix3d q;
        q << f, s, f.cross(s);
        const double det = q.determinant();
        if (std::abs(det - 1.0) <= tol) continue;
        os << "det[f, s, f x s] = " << det;
      }
      os << " (column " << m << ", voxel " << frames.voxels[std::size_t(m)] << ")";
      break;
    }
  }
  const std::string msg = os.str();
  if (msg.empty()) return true;
  if (why) *why = msg;
  return false;
}

}  // namespace cardio::fibres
