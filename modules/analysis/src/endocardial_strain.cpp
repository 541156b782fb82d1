#include "cardio/analysis/endocardial_strain.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>

#include "cardio/analysis/axis.hpp"
#include "cardio/core/error.hpp"

namespace cardio::analysis {
namespace {

/// For every node, the elements that use it (ascending: each list is sorted by construction).
std::vector<std::vector<std::int64_t>> node_elements(const mechanics::HexMesh& mesh) {
  std::vector<std::vector<std::int64_t>> out(std::size_t(mesh.n_nodes()));
  for (std::size_t e = 0; e < mesh.hexes.size(); ++e)
    for (const std::int32_t n : mesh.hexes[e]) {
      auto& list = out[std::size_t(n)];
      if (list.empty() || list.back() != std::int64_t(e)) list.push_back(std::int64_t(e));
    }
  return out;
}

/// Engineering strain along unit t from the Green-Lagrange E (row-major 9-vector); NaN without a real stretch.
double engineering_along(const Eigen::Vector3d& t, const Eigen::Matrix<double, 9, 1>& e9) {
  const Eigen::Matrix3d E = Eigen::Map<const Eigen::Matrix<double, 3, 3, Eigen::RowMajor>>(e9.data());
  const double stretch_squared = 1.0 + 2.0 * t.dot(E * t);
  return stretch_squared >= 0 ? std::sqrt(stretch_squared) - 1.0 : std::numeric_limits<double>::quiet_NaN();
}

}  // namespace

std::vector<std::int64_t> face_owners(const mechanics::HexMesh& mesh, const std::vector<mechanics::Quad>& faces) {
  const auto by_node = node_elements(mesh);
  std::vector<std::int64_t> owner(faces.size(), -1);
  for (std::size_t f = 0; f < faces.size(); ++f) {
    for (const std::int32_t n : faces[f])
      CARDIO_CHECK(n >= 0 && n < mesh.n_nodes(), "face " << f << ": node " << n << " is not a node of the mesh");
    // Elements of the first node that also hold the other three.
    std::vector<std::int64_t> common = by_node[std::size_t(faces[f][0])];
    for (int k = 1; k < 4; ++k) {
      const auto& other = by_node[std::size_t(faces[f][std::size_t(k)])];
      std::vector<std::int64_t> kept;
      std::set_intersection(common.begin(), common.end(), other.begin(), other.end(), std::back_inserter(kept));
      common = std::move(kept);
    }
    CARDIO_CHECK(common.size() == 1, "face " << f << " (nodes " << faces[f][0] << ", " << faces[f][1] << ", "
                                             << faces[f][2] << ", " << faces[f][3] << ") belongs to " << common.size()
                                             << " elements; a boundary face belongs to exactly one");
    owner[f] = common.front();
  }
  return owner;
}

EndocardialFrame endocardial_frame(const std::vector<mechanics::Quad>& faces, const std::vector<std::int64_t>& owner,
                                   const Eigen::Matrix3Xd& x_ref, const Eigen::Vector3d& axis_direction) {
  CARDIO_CHECK(owner.size() == faces.size(),
               "endocardial frame: " << owner.size() << " owners for " << faces.size() << " faces");
  const Eigen::Vector3d l = unit_axis_direction(CardiacAxis{Eigen::Vector3d::Zero(), axis_direction});
  const Eigen::Index n_faces = Eigen::Index(faces.size());
  EndocardialFrame fr{owner, Eigen::Matrix3Xd::Zero(3, n_faces), Eigen::Matrix3Xd::Zero(3, n_faces),
                      Eigen::VectorXd::Zero(n_faces)};
  for (Eigen::Index f = 0; f < n_faces; ++f) {
    const mechanics::Quad& q = faces[std::size_t(f)];
    for (const std::int32_t n : q)
      CARDIO_CHECK(n >= 0 && n < x_ref.cols(),
                   "endocardial frame: face " << f << " has node " << n << " of " << x_ref.cols() << " positions");
    const Eigen::Vector3d area = 0.5 * (x_ref.col(q[2]) - x_ref.col(q[0])).cross(x_ref.col(q[3]) - x_ref.col(q[1]));
    if (!(area.norm() > 0)) continue;  // a collapsed face has no normal and no length
    const Eigen::Vector3d n = area.normalized();
    const Eigen::Vector3d t_l = l - l.dot(n) * n;
    if (!(t_l.norm() > 1e-9)) continue;  // the wall is normal to the axis: no meridian
    fr.meridional.col(f) = t_l.normalized();
    fr.circumferential.col(f) = n.cross(fr.meridional.col(f));
    fr.weight[f] = area.norm() * t_l.norm();
  }
  CARDIO_CHECK(fr.weight.sum() > 0, "endocardial frame: none of the " << n_faces
                                                                      << " faces has a meridian (every face normal "
                                                                         "is parallel to the axis, or no faces)");
  return fr;
}

EndocardialStrain endocardial_strain(const EndocardialFrame& frame, const ElementStrains& strains) {
  const Eigen::Index n_faces = frame.weight.size();
  CARDIO_CHECK(Eigen::Index(frame.owner.size()) == n_faces, "endocardial strain: frame of inconsistent sizes");
  double sw = 0, sl = 0, sc = 0;
  for (Eigen::Index f = 0; f < n_faces; ++f) {
    const double w = frame.weight[f];
    if (w == 0) continue;
    const std::int64_t e = frame.owner[std::size_t(f)];
    CARDIO_CHECK(e >= 0 && e < strains.E.cols(),
                 "endocardial strain: face " << f << " owned by element " << e << " of " << strains.E.cols());
    const Eigen::Matrix<double, 9, 1> e9 = strains.E.col(e);
    sw += w;
    sl += w * engineering_along(frame.meridional.col(f), e9);
    sc += w * engineering_along(frame.circumferential.col(f), e9);
  }
  return {sl / sw, sc / sw};
}

}  // namespace cardio::analysis
