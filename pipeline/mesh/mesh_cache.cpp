#include "mesh/mesh_cache.hpp"

#include <algorithm>
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
#include "cardio/imaging/image_stack.hpp"
#include "cardio/meshing/voxel_mesh.hpp"
#include "mesh/mesh_warnings.hpp"

#ifndef CARDIO_VERSION
#error "CARDIO_VERSION must be defined (pipeline/CMakeLists.txt)"
#endif

namespace cardio::pipeline {
namespace fs = std::filesystem;

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

void say(std::ostream* log, const std::string& line) {
  if (log) *log << line << std::endl;
}

}  // namespace

std::uint64_t hash_file(const fs::path& path, std::uint64_t* size) {
  std::uint64_t h = fnv1a64({});
  std::uint64_t total = 0;
  std::error_code ec;
  const bool folder = fs::is_directory(path, ec);
  if (folder || imaging::is_slice_stack(path)) {  // a DICOM folder, or a folder or glob of slices
    std::vector<fs::path> files;
    if (folder) {
      for (const auto& e : fs::recursive_directory_iterator(path))
        if (e.is_regular_file()) files.push_back(e.path());
    } else {
      files = imaging::stack_slice_files(path);
    }
    std::sort(files.begin(), files.end());
    const fs::path root = folder ? path : path.parent_path().empty() ? fs::path(".") : path.parent_path();
    for (const auto& f : files) {
      const std::string rel = fs::relative(f, root).generic_string();
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
  // Re-read the resolved config with parse_mesh_sections alone: its resolved YAML then holds exactly
  // the keys that determine the mesh (geometry, fibres, tissue), and no output-only key (name,
  // output.*) can change the key.
  auto mesh_doc = config::Document::load_string(doc.resolved_yaml(), doc.file_name());
  (void)parse_mesh_sections(*mesh_doc);
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
  meshing::save_voxel_mesh(w, result.mesh);
  w.ints(nlohmann::json::to_cbor(result.report));
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
    MeshStageResult r;
    r.mesh = meshing::load_voxel_mesh(rd);  // checks what it reads: a damaged mesh is an Error
    const std::vector<std::uint8_t> cbor = rd.ints<std::uint8_t>();
    rd.expect_end();
    r.report = nlohmann::json::from_cbor(cbor);
    return r;
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

namespace {

/// The stage computed, then saved under `key` (a failed save only costs the next run time).
MeshStageResult compute_and_save(const MeshConfig& cfg, const fs::path& outdir, const MeshCacheKey& key,
                                 std::ostream* log) {
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
  say(log, line.str());
  r.report["mesh_cache"] = {{"key", key.hex()}, {"hit", false}};
  return r;
}

}  // namespace

MeshStageResult cached_mesh_stages(const MeshConfig& cfg, const config::Document& doc, const fs::path& outdir,
                                   std::ostream* log, bool use_cache) {
  const char* env = std::getenv("CARDIO_NO_CACHE");
  if (env && *env && std::string(env) != "0") use_cache = false;
  if (!use_cache) {
    say(log, "mesh stage: computed (cache disabled)");
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
    say(log, std::string("mesh stage: computed (no cache key: ") + e.what() + ")");
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
  if (!cached) {
    say(log, "mesh stage: cache miss (" + why + ")");
    return compute_and_save(cfg, outdir, key, log);
  }
  std::ostringstream line;
  line << "mesh stage: cached (key " << key.hex() << ", " << mesh_cache_file(outdir, key).string() << ", "
       << cached->mesh.mesh.n_elements() << " elements; key " << std::fixed << std::setprecision(3) << t_key
       << " s, load " << seconds_since(t0) - t_key << " s)";
  say(log, line.str());
  for (const std::string& warning : warning_lines(cached->report)) say(log, warning);
  cached->report["mesh_cache"] = {{"key", key.hex()}, {"hit", true}};
  return std::move(*cached);
}

}  // namespace cardio::pipeline
