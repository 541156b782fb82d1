#include "blocks/block_geometry.hpp"

namespace cardio::pipeline::block_geometry {

namespace mech = cardio::mechanics;

Eigen::Vector3i lattice(const mech::BlockSpec& b, std::int32_t n) {
  const int i = n % (b.nx + 1), j = (n / (b.nx + 1)) % (b.ny + 1), k = n / ((b.nx + 1) * (b.ny + 1));
  return {i, j, k};
}

int count(const mech::BlockSpec& b, int axis) { return axis == 0 ? b.nx : axis == 1 ? b.ny : b.nz; }

std::vector<std::int32_t> face_nodes(const mech::BlockSpec& b, int axis, bool high) {
  std::vector<std::int32_t> out;
  const int target = high ? count(b, axis) : 0;
  const std::int32_t n_nodes = (b.nx + 1) * (b.ny + 1) * (b.nz + 1);
  for (std::int32_t n = 0; n < n_nodes; ++n)
    if (lattice(b, n)[axis] == target) out.push_back(n);
  return out;
}

double mean_displacement(const mech::NodeState& s, const mech::HexMesh& mesh, const std::vector<std::int32_t>& nodes,
                         int comp) {
  double sum = 0;
  for (std::int32_t n : nodes) sum += s.x(comp, n) - mesh.rest(comp, n);
  return sum / static_cast<double>(nodes.size());
}

double length(const mech::BlockSpec& b, int axis) { return b.h * count(b, axis); }

int voigt_index(int a, int b) {
  if (a == b) return a;
  const int s = a + b;  // (1,2) -> 3, (0,2) -> 4, (0,1) -> 5
  return s == 3 ? 3 : s == 2 ? 4 : 5;
}

}  // namespace cardio::pipeline::block_geometry
