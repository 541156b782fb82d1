#include "cardio/mechanics/mesh.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "cardio/core/error.hpp"
#include "cardio/core/parallel.hpp"
#include "cardio/mechanics/trilinear.hpp"

namespace cardio::mechanics {

Eigen::Matrix3d HexMesh::sample_frame(std::int64_t e, int g) const {
  const bool sampled = sample_fibre.cols() == 8 * n_elements();
  const Eigen::Index c = sampled ? 8 * e + g : e;
  const Eigen::Vector3d f = sampled ? sample_fibre.col(c) : fibre.col(c);
  const Eigen::Vector3d s = sampled ? sample_sheet.col(c) : sheet.col(c);
  Eigen::Matrix3d R;
  R << f, s, f.cross(s);
  return R;
}

double min_corner_jacobian(const NodeMatrix& x, int* corner) {
  double m = INFINITY;
  for (int i = 0; i < 8; ++i) {
    const Eigen::Vector3d xi(kHexCorner[i][0], kHexCorner[i][1], kHexCorner[i][2]);
    const double J = (x * hex_shape_derivatives(xi)).determinant();
    if (J < m) {
      m = J;
      if (corner) *corner = i;
    }
  }
  return m;
}

WorstElement worst_element(const HexMesh& mesh, const Eigen::Matrix3Xd& x) {
  std::array<Eigen::Matrix<double, 8, 3>, 8> dN;
  for (int g = 0; g < 8; ++g) dN[std::size_t(g)] = hex_shape_derivatives(hex_gauss_xi(g));
  std::vector<double> minJ(mesh.hexes.size());
  parallel_for(mesh.n_elements(), [&](std::int64_t e) {
    const NodeMatrix X = gather(mesh.rest, mesh.hexes[std::size_t(e)]), xe = gather(x, mesh.hexes[std::size_t(e)]);
    double m = INFINITY;
    for (const auto& d : dN) {
      const double r = (xe * d).determinant() / (X * d).determinant();
      m = std::isnan(r) ? -INFINITY : std::min(m, r);  // a NaN position counts as inverted
      if (m == -INFINITY) break;
    }
    minJ[std::size_t(e)] = m;
  });
  WorstElement w;
  for (std::size_t e = 0; e < minJ.size(); ++e)
    if (w.element < 0 || minJ[e] < w.J) w = {std::int64_t(e), minJ[e]};
  return w;
}

std::vector<Quad> boundary_faces(const HexMesh& mesh) {
  // Count each face by its sorted node ids; keep those seen once, in element order.
  std::map<std::array<std::int32_t, 4>, int> count;
  for (const Hex& h : mesh.hexes)
    for (const auto& lf : kHexFaces) {
      std::array<std::int32_t, 4> key{h[lf[0]], h[lf[1]], h[lf[2]], h[lf[3]]};
      std::sort(key.begin(), key.end());
      ++count[key];
    }
  std::vector<Quad> out;
  for (const Hex& h : mesh.hexes)
    for (const auto& lf : kHexFaces) {
      Quad q{h[lf[0]], h[lf[1]], h[lf[2]], h[lf[3]]};
      std::array<std::int32_t, 4> key = q;
      std::sort(key.begin(), key.end());
      if (count[key] == 1) out.push_back(q);
    }
  return out;
}

namespace {
// Signed volume of the tetrahedron (0, a, b, c) times 6.
double triple(const Eigen::Vector3d& a, const Eigen::Vector3d& b, const Eigen::Vector3d& c) {
  return a.dot(b.cross(c));
}
}  // namespace

double enclosed_volume(const std::vector<Quad>& surface, const Eigen::Matrix3Xd& x) {
  // Each quad is split along both diagonals and averaged, which is exact for planar quads and
  // independent of the node ordering start for warped ones.
  double six_v = 0.0;
  for (const Quad& q : surface) {
    const Eigen::Vector3d a = x.col(q[0]), b = x.col(q[1]), c = x.col(q[2]), d = x.col(q[3]);
    six_v += 0.5 * (triple(a, b, c) + triple(a, c, d) + triple(a, b, d) + triple(b, c, d));
  }
  return six_v / 6.0;
}

double hex_volume(const NodeMatrix& x) {
  double six_v = 0.0;
  for (const auto& lf : kHexFaces) {
    const Eigen::Vector3d a = x.col(lf[0]), b = x.col(lf[1]), c = x.col(lf[2]), d = x.col(lf[3]);
    six_v += 0.5 * (triple(a, b, c) + triple(a, c, d) + triple(a, b, d) + triple(b, c, d));
  }
  return six_v / 6.0;
}

Eigen::VectorXd element_volumes(const HexMesh& mesh, const Eigen::Matrix3Xd& x) {
  Eigen::VectorXd vol(mesh.n_elements());
  parallel_for(mesh.n_elements(),
               [&](std::int64_t e) { vol[e] = hex_volume(gather(x, mesh.hexes[static_cast<std::size_t>(e)])); });
  return vol;
}

ElementSchedule schedule_elements(const HexMesh& mesh) {
  const std::int32_t ne = static_cast<std::int32_t>(mesh.n_elements());
  // About 64 chunks per mesh, 64 to 2048 elements each: enough parallelism, cache-sized work; a
  // multiple of 16 elements (one SIMD block of single-precision constants, sampled_axes_batch.hpp).
  const std::int32_t size = (std::clamp<std::int32_t>(ne / 64, 64, 2048) + 15) / 16 * 16;
  ElementSchedule s;
  for (std::int32_t b = 0; b < ne; b += size) s.chunk_begin.push_back(b);
  s.chunk_begin.push_back(ne);
  const std::size_t n_chunks = s.chunk_begin.size() - 1;
  // Greedy colouring of the chunks in order; node_colours[n]: bit c set if colour c touches n.
  std::vector<std::uint64_t> node_colours(static_cast<std::size_t>(mesh.n_nodes()), 0);
  for (std::size_t c = 0; c < n_chunks; ++c) {
    std::uint64_t used = 0;
    for (std::int32_t e = s.chunk_begin[c]; e < s.chunk_begin[c + 1]; ++e)
      for (std::int32_t n : mesh.hexes[static_cast<std::size_t>(e)]) used |= node_colours[n];
    int colour = 0;
    while (colour < 64 && (used >> colour & 1u)) ++colour;
    CARDIO_CHECK(colour < 64, "element chunk " << c << " needs more than 64 colours");
    if (colour >= static_cast<int>(s.colours.size())) s.colours.resize(colour + 1);
    s.colours[colour].push_back(static_cast<std::int32_t>(c));
    for (std::int32_t e = s.chunk_begin[c]; e < s.chunk_begin[c + 1]; ++e)
      for (std::int32_t n : mesh.hexes[static_cast<std::size_t>(e)]) node_colours[n] |= std::uint64_t{1} << colour;
  }
  return s;
}

Eigen::VectorXd lumped_masses(const HexMesh& mesh, const std::vector<double>& density) {
  const Eigen::VectorXd vol = element_volumes(mesh, mesh.rest);
  Eigen::VectorXd m = Eigen::VectorXd::Zero(mesh.n_nodes());
  // Serial: element order fixes the summation order.
  for (std::int64_t e = 0; e < mesh.n_elements(); ++e) {
    const std::size_t mat = mesh.material[static_cast<std::size_t>(e)];
    CARDIO_CHECK(mat < density.size(), "element " << e << " has material " << mat << " without a density");
    const double share = density[mat] * vol[e] / 8.0;
    for (std::int32_t n : mesh.hexes[static_cast<std::size_t>(e)]) m[n] += share;
  }
  return m;
}

}  // namespace cardio::mechanics
