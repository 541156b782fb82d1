#include "mesh/mesh_cache.hpp"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <set>
#include <sstream>
#include <type_traits>
#include <vector>

#include "cardio/core/atomic_file.hpp"
#include "cardio/core/error.hpp"

#ifndef CARDIO_VERSION
#error "CARDIO_VERSION must be defined (pipeline/CMakeLists.txt)"
#endif

namespace cardio::pipeline {
namespace fs = std::filesystem;

static_assert(std::endian::native == std::endian::little, "the mesh cache (cardio/core/binary.hpp) assumes a little-endian host");

// Every field of MeshStageResult must be serialized below. These sizes (x86-64, libstdc++) make a
// new field a compile error here, as a reminder to extend the format (and bump kMeshCacheFormat).
#if defined(__x86_64__) && defined(__GLIBCXX__)
static_assert(sizeof(mechanics::HexMesh) == 5 * 16 + 2 * 24, "HexMesh changed: update the mesh cache format");
static_assert(sizeof(imaging::Grid) == 24 + 2 * 24 + 72, "Grid changed: update the mesh cache format");
static_assert(sizeof(meshing::LongAxis) == 3 * 24 + 8, "LongAxis changed: update the mesh cache format");
static_assert(sizeof(meshing::CavitySurface) == 32 + 3 * 24 + 2 * 8, "CavitySurface changed: update the mesh cache format");
static_assert(sizeof(meshing::VoxelMesh) == sizeof(mechanics::HexMesh) + 3 * 24 + sizeof(imaging::Grid) + 2 * 16 +
                                                 3 * 24 + 24 + sizeof(meshing::LongAxis),
              "VoxelMesh changed: update the mesh cache format");
#endif

namespace {

constexpr std::string_view kMagic = "CARDMESH";
// The framed header of cardio/core/binary.hpp: magic, u32 version, u64 size, u64 checksum.
constexpr std::size_t kFrameHeader = 8 + 4 + 8 + 8;

void hash_stream(const fs::path& file, std::uint64_t& h, std::uint64_t& size) {
  std::ifstream in(file, std::ios::binary);
  if (!in) CARDIO_FAIL(file.string() << ": cannot read (for the stage cache key)");
  std::vector<char> buf(1 << 20);
  while (in) {
    in.read(buf.data(), std::streamsize(buf.size()));
    const auto n = std::size_t(in.gcount());
    h = fnv1a64(std::string_view(buf.data(), n), h);
    size += n;
  }
  if (in.bad()) CARDIO_FAIL(file.string() << ": read error (for the stage cache key)");
}

template <class T>
std::string_view bytes_of(const T& v) {
  static_assert(std::is_trivially_copyable_v<T>);
  return {reinterpret_cast<const char*>(&v), sizeof v};
}

// ------------------------------------------------------------------ payload
struct Damaged {
  std::string why;
};

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
    throw Damaged{std::string(what) + ": bad dimensions"};
  m = Eigen::Map<const Eigen::Matrix<double, M::RowsAtCompileTime, M::ColsAtCompileTime>>(v.data(), Eigen::Index(rows),
                                                                                        Eigen::Index(cols));
}

template <class T>
void put_pod(BinaryWriter& w, const T& v) {
  const auto b = bytes_of(v);
  w.raw(b.data(), b.size());
}
template <class T>
T get_pod(BinaryReader& r) {
  static_assert(std::is_trivially_copyable_v<T>);
  T v;
  r.raw(&v, sizeof v);
  return v;
}

void write_mesh(BinaryWriter& w, const MeshStageResult& r) {
  const meshing::VoxelMesh& m = r.mesh;
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
  put_pod(w, m.grid.size);
  put_matrix(w, m.grid.spacing);
  put_matrix(w, m.grid.origin);
  put_matrix(w, m.grid.direction);
  put_matrix(w, m.volume);
  put_matrix(w, m.mass);
  w.ints(m.surface_quads);
  w.ints(m.surface_tag);
  w.u64(m.tag_names.size());
  for (const auto& s : m.tag_names) w.str(s);
  w.u64(m.cavities.size());
  for (const auto& c : m.cavities) {
    w.str(c.name);
    w.ints(c.nodes);
    w.ints(c.rim);
    w.ints(c.triangles);
    w.i64(c.n_endocardial_triangles);
    w.i64(c.n_nonmanifold_edges);
  }
  put_matrix(w, m.axis.base_point);
  put_matrix(w, m.axis.base_normal);
  put_matrix(w, m.axis.apex);
  w.i64(m.axis.apex_voxel);
  w.ints(nlohmann::json::to_cbor(r.report));
}

MeshStageResult read_mesh(BinaryReader& rd) {
  MeshStageResult r;
  meshing::VoxelMesh& m = r.mesh;
  get_matrix(rd, m.mesh.rest, "rest");
  m.mesh.hexes = rd.ints<mechanics::Hex>();
  get_matrix(rd, m.mesh.fibre, "fibre");
  get_matrix(rd, m.mesh.sheet, "sheet");
  get_matrix(rd, m.mesh.sample_fibre, "sample_fibre");
  get_matrix(rd, m.mesh.sample_sheet, "sample_sheet");
  m.mesh.material = rd.ints<std::uint16_t>();
  m.label = rd.ints<std::int32_t>();
  m.labels_used = rd.ints<std::int32_t>();
  m.voxel = rd.ints<std::int64_t>();
  m.grid.size = get_pod<imaging::Index3>(rd);
  get_matrix(rd, m.grid.spacing, "grid.spacing");
  get_matrix(rd, m.grid.origin, "grid.origin");
  get_matrix(rd, m.grid.direction, "grid.direction");
  get_matrix(rd, m.volume, "volume");
  get_matrix(rd, m.mass, "mass");
  m.surface_quads = rd.ints<mechanics::Quad>();
  m.surface_tag = rd.ints<std::uint8_t>();
  // Counts are not trusted for allocation: each item is read (and bounds-checked) in turn.
  for (std::uint64_t n = rd.u64(), i = 0; i < n; ++i) m.tag_names.push_back(rd.str());
  for (std::uint64_t n = rd.u64(), i = 0; i < n; ++i) {
    meshing::CavitySurface c;
    c.name = rd.str();
    c.nodes = rd.ints<std::int32_t>();
    c.rim = rd.ints<std::int32_t>();
    c.triangles = rd.ints<std::array<std::int32_t, 3>>();
    c.n_endocardial_triangles = rd.i64();
    c.n_nonmanifold_edges = rd.i64();
    m.cavities.push_back(std::move(c));
  }
  get_matrix(rd, m.axis.base_point, "axis.base_point");
  get_matrix(rd, m.axis.base_normal, "axis.base_normal");
  get_matrix(rd, m.axis.apex, "axis.apex");
  m.axis.apex_voxel = rd.i64();
  const std::vector<std::uint8_t> cbor = rd.ints<std::uint8_t>();
  rd.expect_end();
  r.report = nlohmann::json::from_cbor(cbor);  // throws nlohmann::json::exception if damaged
  return r;
}

/// Consistency of a loaded mesh (a payload that passed the checksum but is inconsistent would be a
/// writer bug; a miss beats an out-of-range index later).
std::string check_consistent(const meshing::VoxelMesh& m) {
  const auto ne = std::size_t(m.mesh.n_elements());
  const auto nn = m.mesh.n_nodes();
  if (std::size_t(m.mesh.fibre.cols()) != ne || std::size_t(m.mesh.sheet.cols()) != ne || m.mesh.material.size() != ne ||
      m.label.size() != ne || m.voxel.size() != ne || std::size_t(m.volume.size()) != ne)
    return "per-element arrays of different lengths";
  const auto ns = std::size_t(m.mesh.sample_fibre.cols());
  if ((ns != 0 && ns != 8 * ne) || std::size_t(m.mesh.sample_sheet.cols()) != ns)
    return "sample frames do not match the element count";
  if (m.mass.size() != nn) return "nodal masses do not match the node count";
  if (m.surface_tag.size() != m.surface_quads.size()) return "surface tags do not match the surface quads";
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

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

/// Why another cache file does not match: the manifest lines that are new (read from the start of
/// its payload, unverified: this is only a message).
std::string describe_other(const fs::path& file, const MeshCacheKey& key) {
  const std::string name = file.filename().string();
  std::ifstream in(file, std::ios::binary);
  std::string head(kFrameHeader + 16, '\0');
  if (!in.read(head.data(), std::streamsize(head.size())) || head.compare(0, 8, kMagic) != 0)
    return name + " is not a mesh cache file";
  std::uint64_t msize = 0;
  std::memcpy(&msize, head.data() + kFrameHeader + 8, 8);
  if (msize > (1u << 24)) return name + " is damaged";
  std::string manifest(msize, '\0');
  if (!in.read(manifest.data(), std::streamsize(msize))) return name + " is truncated";
  const auto old_lines = lines_of(manifest);
  const std::set<std::string> old_set(old_lines.begin(), old_lines.end());
  std::string changed;
  int shown = 0;
  for (const auto& l : lines_of(key.manifest))
    if (!old_set.count(l) && shown < 3) {
      std::string t = l;
      t.erase(0, t.find_first_not_of(' '));
      changed += (shown++ ? "; " : "") + t;
    }
  return name + " is for other inputs" + (changed.empty() ? std::string() : " (changed: " + changed + ")");
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

std::uint64_t hash_file(const fs::path& path, std::uint64_t* size) {
  std::uint64_t h = fnv1a64({});
  std::uint64_t total = 0;
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    std::vector<fs::path> files;
    for (const auto& e : fs::recursive_directory_iterator(path))
      if (e.is_regular_file()) files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      const std::string rel = fs::relative(f, path).generic_string();
      h = fnv1a64(std::string_view(rel.c_str(), rel.size() + 1), h);  // with its terminating NUL
      std::uint64_t n = 0, fh = fnv1a64({});
      hash_stream(f, fh, n);
      h = fnv1a64(bytes_of(n), h);
      h = fnv1a64(bytes_of(fh), h);
      total += n;
    }
  } else {
    hash_stream(path, h, total);
  }
  if (size) *size = total;
  return h;
}

const std::string& program_identity() {
  static const std::string id = [] {
    std::string s = std::string("cardiac ") + CARDIO_VERSION;
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (!ec) {
      try {
        s += " exe " + hex16(hash_file(exe));
      } catch (const Error&) {
        s += " exe unreadable";
      }
    }
    return s;
  }();
  return id;
}

MeshCacheKey mesh_cache_key(const MeshConfig& cfg, const config::Document& doc, const std::string& program) {
  // Re-read the resolved config with parse_mesh_config alone: its resolved YAML then holds exactly
  // the keys the mesh stage reads. name, output.surfaces and output.max_size_warning do not change
  // the mesh: fixed.
  auto mesh_doc = config::Document::load_string(doc.resolved_yaml(), doc.file_name());
  mesh_doc->set_override("name=mesh");
  mesh_doc->set_override("output.surfaces=true");
  mesh_doc->set_override("output.max_size_warning=4 GB");
  (void)parse_mesh_config(*mesh_doc, false);
  std::ostringstream m;
  m << "cardiac mesh stage cache, format " << kMeshCacheFormat << "\n";
  m << "program " << program << "\n";
  for (const fs::path& f : input_files(cfg)) {
    std::uint64_t size = 0;
    const std::uint64_t h = hash_file(f, &size);
    m << "input " << f.string() << " size " << size << " fnv1a64 " << hex16(h) << "\n";
  }
  m << "config (resolved mesh keys):\n" << mesh_doc->resolved_yaml();
  MeshCacheKey key;
  key.manifest = m.str();
  key.value = fnv1a64(key.manifest);
  return key;
}

std::string mesh_cache_payload(const MeshStageResult& result, const MeshCacheKey& key) {
  BinaryWriter w;
  w.u64(key.value);
  w.str(key.manifest);
  write_mesh(w, result);
  return w.bytes();
}

std::optional<MeshStageResult> parse_mesh_cache_payload(const std::string& payload, const MeshCacheKey& key,
                                                        std::string* why) {
  auto miss = [&](const std::string& reason) -> std::optional<MeshStageResult> {
    if (why) *why = reason;
    return std::nullopt;
  };
  try {
    BinaryReader rd(payload, "mesh cache payload");
    const std::uint64_t k = rd.u64();
    if (k != key.value) return miss("key " + hex16(k) + ", expected " + key.hex());
    if (rd.str() != key.manifest) return miss("same key, other inputs (a hash collision)");
    MeshStageResult r = read_mesh(rd);
    const std::string problem = check_consistent(r.mesh);
    if (!problem.empty()) return miss("inconsistent payload: " + problem);
    return r;
  } catch (const Damaged& d) {
    return miss("payload does not parse: " + d.why);
  } catch (const std::exception& e) {  // cardio::Error from the reader, json parse errors, bad_alloc
    return miss(std::string("payload does not parse: ") + e.what());
  }
}

fs::path mesh_cache_dir(const fs::path& outdir) { return outdir / "cache"; }

fs::path mesh_cache_file(const fs::path& outdir, const MeshCacheKey& key) {
  return mesh_cache_dir(outdir) / ("mesh-" + key.hex() + ".bin");
}

std::optional<MeshStageResult> load_mesh_cache(const fs::path& outdir, const MeshCacheKey& key, std::string* why) {
  const fs::path file = mesh_cache_file(outdir, key);
  std::error_code ec;
  if (!fs::exists(file, ec)) {
    if (why) {
      *why = "no " + file.string();
      if (fs::is_directory(mesh_cache_dir(outdir), ec))
        for (const auto& e : fs::directory_iterator(mesh_cache_dir(outdir), ec)) {
          const std::string name = e.path().filename().string();
          if (name.rfind("mesh-", 0) == 0 && e.path().extension() == ".bin") {
            *why += "; " + describe_other(e.path(), key);
            break;
          }
        }
    }
    return std::nullopt;
  }
  std::string payload;
  try {
    payload = read_framed_file(file, kMagic, kMeshCacheFormat);  // magic, version, size, checksum
  } catch (const std::exception& e) {
    if (why) *why = e.what();
    return std::nullopt;
  }
  std::string reason;
  auto r = parse_mesh_cache_payload(payload, key, &reason);
  if (!r && why) *why = file.string() + ": " + reason;
  return r;
}

void save_mesh_cache(const fs::path& outdir, const MeshCacheKey& key, const MeshStageResult& result) {
  const fs::path dir = mesh_cache_dir(outdir);
  fs::create_directories(dir);
  const fs::path file = mesh_cache_file(outdir, key);
  write_framed_file(file, kMagic, kMeshCacheFormat, mesh_cache_payload(result, key));
  // Keep only the newest: other keys' files (and temp files of killed writers) go.
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (e.path() != file && (name.rfind("mesh-", 0) == 0 || name.rfind(".mesh-", 0) == 0)) fs::remove(e.path(), ec);
  }
}

MeshStageResult cached_mesh_stages(const MeshConfig& cfg, const config::Document& doc, const fs::path& outdir,
                                   std::ostream* log, bool use_cache) {
  const char* env = std::getenv("CARDIO_NO_CACHE");
  if (env && *env && std::string(env) != "0") use_cache = false;
  auto say = [&](const std::string& s) {
    if (log) *log << s << std::endl;
  };
  if (!use_cache) {
    say("mesh stage: computed (cache disabled)");
    MeshStageResult r = run_mesh_stages(cfg, log);
    r.report["mesh_cache"] = {{"hit", false}, {"disabled", true}};
    return r;
  }
  const auto t0 = std::chrono::steady_clock::now();
  MeshCacheKey key;
  try {
    key = mesh_cache_key(cfg, doc);
  } catch (const std::exception& e) {
    // An unreadable input: the stage itself reports it in its own words.
    say(std::string("mesh stage: computed (no cache key: ") + e.what() + ")");
    return run_mesh_stages(cfg, log);
  }
  const double t_key = seconds_since(t0);
  std::string why;
  std::optional<MeshStageResult> cached;
  try {
    cached = load_mesh_cache(outdir, key, &why);
  } catch (const std::exception& e) {  // e.g. out of memory on a huge file: recompute
    why = e.what();
  }
  if (cached) {
    std::ostringstream line;
    line << "mesh stage: cached (key " << key.hex() << ", " << mesh_cache_file(outdir, key).string() << ", "
         << cached->mesh.mesh.n_elements() << " elements; key " << std::fixed << std::setprecision(3) << t_key
         << " s, load " << seconds_since(t0) - t_key << " s)";
    say(line.str());
    cached->report["mesh_cache"] = {{"key", key.hex()}, {"hit", true}};
    return std::move(*cached);
  }
  say("mesh stage: cache miss (" + why + ")");
  const auto t1 = std::chrono::steady_clock::now();
  MeshStageResult r = run_mesh_stages(cfg, log);
  const double t_mesh = seconds_since(t1);
  const auto t2 = std::chrono::steady_clock::now();
  std::string saved;
  try {
    save_mesh_cache(outdir, key, r);
    saved = "saved " + mesh_cache_file(outdir, key).string();
  } catch (const std::exception& e) {
    saved = std::string("not cached: ") + e.what();
  }
  std::ostringstream line;
  line << "mesh stage: computed (key " << key.hex() << ", " << std::fixed << std::setprecision(3) << t_mesh << " s; "
       << saved << " in " << seconds_since(t2) << " s)";
  say(line.str());
  r.report["mesh_cache"] = {{"key", key.hex()}, {"hit", false}};
  return r;
}

}  // namespace cardio::pipeline
