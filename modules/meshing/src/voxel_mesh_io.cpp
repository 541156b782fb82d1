// save_voxel_mesh / load_voxel_mesh (voxel_mesh.hpp): every field of VoxelMesh with exact bits,
// for the mesh stage cache. The loader checks what it reads, so a damaged snapshot never reaches
// the solver as an out-of-range index.
#include <bit>
#include <type_traits>

#include "cardio/core/binary.hpp"
#include "cardio/core/error.hpp"
#include "cardio/meshing/voxel_mesh.hpp"

namespace cardio::meshing {

static_assert(std::endian::native == std::endian::little,
              "the mesh snapshot (cardio/core/binary.hpp) assumes a little-endian host");

// Every field of VoxelMesh must be written below. These sizes (x86-64, libstdc++) make a new field
// a compile error here, as a reminder to extend the format (and bump the cache's kMeshCacheFormat).
#if defined(__x86_64__) && defined(__GLIBCXX__)
static_assert(sizeof(mechanics::HexMesh) == 5 * 16 + 2 * 24, "HexMesh changed: update the mesh snapshot");
static_assert(sizeof(imaging::Grid) == 24 + 2 * 24 + 72, "Grid changed: update the mesh snapshot");
static_assert(sizeof(LongAxis) == 3 * 24 + 8, "LongAxis changed: update the mesh snapshot");
static_assert(sizeof(CavitySurface) == 32 + 3 * 24 + 2 * 8, "CavitySurface changed: update the mesh snapshot");
static_assert(sizeof(VoxelMesh) ==
                  sizeof(mechanics::HexMesh) + 3 * 24 + sizeof(imaging::Grid) + 2 * 16 + 3 * 24 + 24 + sizeof(LongAxis),
              "VoxelMesh changed: update the mesh snapshot");
#endif

namespace {

template <class Derived>
void put_matrix(BinaryWriter& w, const Eigen::PlainObjectBase<Derived>& m) {  // column-major storage
  w.u64(std::uint64_t(m.rows()));
  w.u64(std::uint64_t(m.cols()));
  w.f64s(m.data(), std::size_t(m.size()));
}

template <class M>
void get_matrix(BinaryReader& r, M& m, const char* what) {
  const std::uint64_t rows = r.u64(), cols = r.u64();
  const std::vector<double> v = r.ints<double>();  // bounds-checked before allocating
  const bool fits = rows == 0 ? v.empty() : (v.size() % rows == 0 && v.size() / rows == cols);
  if (!fits || (M::RowsAtCompileTime != Eigen::Dynamic && rows != std::uint64_t(M::RowsAtCompileTime)) ||
      (M::ColsAtCompileTime != Eigen::Dynamic && cols != std::uint64_t(M::ColsAtCompileTime)))
    CARDIO_FAIL("mesh snapshot: " << what << ": bad dimensions");
  m = Eigen::Map<const Eigen::Matrix<double, M::RowsAtCompileTime, M::ColsAtCompileTime>>(v.data(), Eigen::Index(rows),
                                                                                          Eigen::Index(cols));
}

void put_grid(BinaryWriter& w, const imaging::Grid& g) {
  static_assert(std::is_trivially_copyable_v<imaging::Index3>);
  w.raw(&g.size, sizeof g.size);
  put_matrix(w, g.spacing);
  put_matrix(w, g.origin);
  put_matrix(w, g.direction);
}

imaging::Grid get_grid(BinaryReader& r) {
  imaging::Grid g;
  r.raw(&g.size, sizeof g.size);
  get_matrix(r, g.spacing, "grid.spacing");
  get_matrix(r, g.origin, "grid.origin");
  get_matrix(r, g.direction, "grid.direction");
  return g;
}

void put_cavity(BinaryWriter& w, const CavitySurface& c) {
  w.str(c.name);
  w.ints(c.nodes);
  w.ints(c.rim);
  w.ints(c.triangles);
  w.i64(c.n_endocardial_triangles);
  w.i64(c.n_nonmanifold_edges);
}

CavitySurface get_cavity(BinaryReader& r) {
  CavitySurface c;
  c.name = r.str();
  c.nodes = r.ints<std::int32_t>();
  c.rim = r.ints<std::int32_t>();
  c.triangles = r.ints<std::array<std::int32_t, 3>>();
  c.n_endocardial_triangles = r.i64();
  c.n_nonmanifold_edges = r.i64();
  return c;
}

/// Per-element and per-node arrays of matching lengths ("" if they match).
std::string check_lengths(const VoxelMesh& m) {
  const auto ne = std::size_t(m.mesh.n_elements());
  if (std::size_t(m.mesh.fibre.cols()) != ne || std::size_t(m.mesh.sheet.cols()) != ne ||
      m.mesh.material.size() != ne || m.label.size() != ne || m.voxel.size() != ne ||
      std::size_t(m.volume.size()) != ne)
    return "per-element arrays of different lengths";
  const auto ns = std::size_t(m.mesh.sample_fibre.cols());
  if ((ns != 0 && ns != 8 * ne) || std::size_t(m.mesh.sample_sheet.cols()) != ns)
    return "sample frames do not match the element count";
  if (m.mass.size() != m.mesh.n_nodes()) return "nodal masses do not match the node count";
  if (m.surface_tag.size() != m.surface_quads.size()) return "surface tags do not match the surface quads";
  return {};
}

/// Every index in range ("" if so): nodes, tags, materials, cavity points.
std::string check_indices(const VoxelMesh& m) {
  const auto nn = m.mesh.n_nodes();
  auto node_ok = [&](std::int32_t i) { return i >= 0 && i < nn; };
  for (const auto& h : m.mesh.hexes)
    for (auto i : h)
      if (!node_ok(i)) return "element node index out of range";
  for (const auto& q : m.surface_quads)
    for (auto i : q)
      if (!node_ok(i)) return "surface node index out of range";
  for (auto t : m.surface_tag)
    if (t >= m.tag_names.size()) return "surface tag out of range";
  for (auto mat : m.mesh.material)
    if (mat >= m.labels_used.size()) return "material index out of range";
  for (const auto& c : m.cavities) {
    for (auto i : c.nodes)
      if (!node_ok(i)) return "cavity node index out of range";
    const auto np = std::int64_t(c.nodes.size()) + (c.rim.empty() ? 0 : 1);
    for (auto i : c.rim)
      if (i < 0 || std::size_t(i) >= c.nodes.size()) return "cavity rim index out of range";
    for (const auto& t : c.triangles)
      for (auto i : t)
        if (i < 0 || i >= np) return "cavity triangle index out of range";
  }
  return {};
}

}  // namespace

void save_voxel_mesh(BinaryWriter& w, const VoxelMesh& m) {
  put_matrix(w, m.mesh.rest);
  w.ints(m.mesh.hexes);
  put_matrix(w, m.mesh.fibre);
  put_matrix(w, m.mesh.sheet);
  put_matrix(w, m.mesh.sample_fibre);
  put_matrix(w, m.mesh.sample_sheet);
  w.ints(m.mesh.material);
  w.ints(m.label);
  w.ints(m.labels_used);
  w.ints(m.voxel);
  put_grid(w, m.grid);
  put_matrix(w, m.volume);
  put_matrix(w, m.mass);
  w.ints(m.surface_quads);
  w.ints(m.surface_tag);
  w.u64(m.tag_names.size());
  for (const auto& s : m.tag_names) w.str(s);
  w.u64(m.cavities.size());
  for (const auto& c : m.cavities) put_cavity(w, c);
  put_matrix(w, m.axis.base_point);
  put_matrix(w, m.axis.base_normal);
  put_matrix(w, m.axis.apex);
  w.i64(m.axis.apex_voxel);
}

VoxelMesh load_voxel_mesh(BinaryReader& r) {
  VoxelMesh m;
  get_matrix(r, m.mesh.rest, "rest");
  m.mesh.hexes = r.ints<mechanics::Hex>();
  get_matrix(r, m.mesh.fibre, "fibre");
  get_matrix(r, m.mesh.sheet, "sheet");
  get_matrix(r, m.mesh.sample_fibre, "sample_fibre");
  get_matrix(r, m.mesh.sample_sheet, "sample_sheet");
  m.mesh.material = r.ints<std::uint16_t>();
  m.label = r.ints<std::int32_t>();
  m.labels_used = r.ints<std::int32_t>();
  m.voxel = r.ints<std::int64_t>();
  m.grid = get_grid(r);
  get_matrix(r, m.volume, "volume");
  get_matrix(r, m.mass, "mass");
  m.surface_quads = r.ints<mechanics::Quad>();
  m.surface_tag = r.ints<std::uint8_t>();
  // Counts are not trusted for allocation: each item is read (and bounds-checked) in turn.
  for (std::uint64_t n = r.u64(), i = 0; i < n; ++i) m.tag_names.push_back(r.str());
  for (std::uint64_t n = r.u64(), i = 0; i < n; ++i) m.cavities.push_back(get_cavity(r));
  get_matrix(r, m.axis.base_point, "axis.base_point");
  get_matrix(r, m.axis.base_normal, "axis.base_normal");
  get_matrix(r, m.axis.apex, "axis.apex");
  m.axis.apex_voxel = r.i64();
  std::string problem = check_lengths(m);
  if (problem.empty()) problem = check_indices(m);  // indices only once the lengths agree
  if (!problem.empty()) CARDIO_FAIL("mesh snapshot: inconsistent: " << problem);
  return m;
}

}  // namespace cardio::meshing
