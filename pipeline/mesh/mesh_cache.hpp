#pragma once
/// @file mesh_cache.hpp
/// Stage caching (issue 6): the mesh stage (import -> fibres -> voxelize) is keyed by a content
/// hash of everything it depends on, and its result is kept in OUTDIR/cache/mesh-<key>.bin. A run
/// whose key matches loads the mesh instead of recomputing it, so changing only solver or output
/// settings (material, activation, circulation, simulation, name, output, ...) reuses the mesh.
///
/// The key is FNV-1a 64 (cardio/core/binary.hpp: Fowler-Noll-Vo, offset basis 0xcbf29ce484222325,
/// prime 0x100000001b3) of a manifest, a short text stored in the cache file and compared in full
/// on load (so even a 64-bit collision is a miss):
///   - the cache format version (kMeshCacheFormat),
///   - the program identity: version, plus the FNV-1a 64 of the running executable's bytes
///     (/proc/self/exe), so a rebuilt program with changed meshing code never reuses old meshes,
///   - the resolved YAML of exactly the keys parse_mesh_sections reads (geometry.*, fibres.*,
///     tissue.density; defaults filled in, --set overrides applied, units normalized): never an
///     output-only key (name, output.*), so changing one reuses the mesh,
///   - per input file the mesh stage reads (label image or DICOM folder, surface file, fibre/sheet
///     or angle images: input_files()), its path, size and the FNV-1a 64 of its bytes.
///
/// File: the framed format of cardio/core/binary.hpp (little-endian host assumed), written
/// atomically (temp + rename):
///   magic "CARDMESH" | u32 format version | u64 payload size | u64 FNV-1a 64 of the payload | payload
/// payload: u64 key | manifest (u64 length + text) | the mesh as meshing::save_voxel_mesh writes it
/// (exact bits, cardio/meshing/voxel_mesh.hpp) | the report as CBOR (u64 n + bytes).
/// Any mismatch (magic, version, size, checksum, truncation, key, manifest, an inconsistent
/// mesh) is a cache miss with a reason, never a crash.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include "cardio/config/config.hpp"
#include "cardio/core/binary.hpp"
#include "config/mesh_config.hpp"
#include "mesh/mesh_stage.hpp"

namespace cardio::pipeline {

/// FNV-1a 64 of a file's bytes (streamed); a directory (DICOM series) hashes every regular file
/// below it in sorted path order, each as relative path + size + FNV-1a 64 of its bytes. Throws
/// cardio::Error if unreadable.
std::uint64_t hash_file(const std::filesystem::path& path, std::uint64_t* size = nullptr);

/// Bump when the payload layout (including save_voxel_mesh's) or the meaning of a mesh field changes.
constexpr std::uint32_t kMeshCacheFormat = 3;  // 2: sample frames; 3: report warnings

/// "cardiac <version> exe <fnv of /proc/self/exe>" (computed once per process).
const std::string& program_identity();

struct MeshCacheKey {
  std::uint64_t value = 0;
  std::string manifest;  ///< the hashed text (see the file comment)
  std::string hex() const { return hex16(value); }
};

/// The key of the mesh stage of `cfg`. `doc` is the document `cfg` was parsed from, after
/// parse_mesh_config or parse_heart_config (its resolved YAML holds the mesh keys). Reads and
/// hashes every input file (throws cardio::Error if one is unreadable).
MeshCacheKey mesh_cache_key(const MeshConfig& cfg, const config::Document& doc,
                            const std::string& program = program_identity());

/// The cache payload of `result` under `key` (framed into a file by save_mesh_cache).
std::string mesh_cache_payload(const MeshStageResult& result, const MeshCacheKey& key);

/// Parse a payload; std::nullopt (and `why`) if it is for another key or does not parse.
std::optional<MeshStageResult> parse_mesh_cache_payload(const std::string& payload, const MeshCacheKey& key,
                                                        std::string* why = nullptr);

/// OUTDIR/cache
std::filesystem::path mesh_cache_dir(const std::filesystem::path& outdir);
/// OUTDIR/cache/mesh-<key hex>.bin
std::filesystem::path mesh_cache_file(const std::filesystem::path& outdir, const MeshCacheKey& key);

/// Load OUTDIR/cache/mesh-<key>.bin; std::nullopt and `why` if absent or invalid.
std::optional<MeshStageResult> load_mesh_cache(const std::filesystem::path& outdir, const MeshCacheKey& key,
                                               std::string* why = nullptr);

/// Write the cache file atomically (temp + rename), then delete every other mesh-*.bin of OUTDIR
/// (only the newest is kept).
void save_mesh_cache(const std::filesystem::path& outdir, const MeshCacheKey& key, const MeshStageResult& result);

/// run_mesh_stages with the cache of OUTDIR: logs "mesh stage: cached (key K, ...)" or
/// "mesh stage: computed (key K, ...)" (with the reason of a miss). A failure to read or write
/// the cache only costs time, never the run. With `use_cache` false (or the environment variable
/// CARDIO_NO_CACHE set to anything but "" or "0") the cache is neither read nor written.
/// The result's report gains "mesh_cache": {"key", "hit"} (not stored in the cache).
MeshStageResult cached_mesh_stages(const MeshConfig& cfg, const config::Document& doc,
                                   const std::filesystem::path& outdir, std::ostream* log = nullptr,
                                   bool use_cache = true);

}  // namespace cardio::pipeline
