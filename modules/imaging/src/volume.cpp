#include "cardio/imaging/volume.hpp"

#include <sstream>

namespace cardio::imaging {

bool same_grid(const Grid& a, const Grid& b, std::string* why, double tol) {
  std::ostringstream os;
  const double scale = std::max(a.spacing.maxCoeff(), b.spacing.maxCoeff());
  if (a.size != b.size) {
    os << "size " << a.size[0] << "x" << a.size[1] << "x" << a.size[2] << " vs " << b.size[0] << "x" << b.size[1] << "x"
       << b.size[2];
  } else if ((a.spacing - b.spacing).cwiseAbs().maxCoeff() > tol * scale) {
    os << "spacing (" << a.spacing.transpose() << ") mm vs (" << b.spacing.transpose() << ") mm";
  } else if ((a.origin - b.origin).cwiseAbs().maxCoeff() > tol * scale) {
    os << "origin (" << a.origin.transpose() << ") mm vs (" << b.origin.transpose() << ") mm";
  } else if ((a.direction - b.direction).cwiseAbs().maxCoeff() > tol) {
    Eigen::IOFormat flat(Eigen::StreamPrecision, Eigen::DontAlignCols, " ", "; ", "", "", "[", "]");
    os << "direction " << a.direction.format(flat) << " vs " << b.direction.format(flat);
  } else {
    return true;
  }
  if (why) *why = os.str();
  return false;
}

std::vector<std::int64_t> voxels_with_role(const RoleVolume& roles, std::uint8_t role) {
  std::vector<std::int64_t> out;
  const auto& v = roles.role.values;
  for (std::size_t i = 0; i < v.size(); ++i)
    if (v[i] == role) out.push_back(static_cast<std::int64_t>(i));
  return out;
}

}  // namespace cardio::imaging
