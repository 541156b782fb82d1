// Stage caching (issue 6): the mesh stage's content key (what changes it and what does not), the
// exact round trip of a real mesh through the cache file, damaged cache files as misses, and the
// cached stage computing, loading and replacing its file (the `cardiac` CLI: mesh_cache_cli_test.cpp).
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "cardio/config/config.hpp"
#include "cardio/core/binary.hpp"
#include "cardio/core/error.hpp"
#include "cardio/imaging/image_io.hpp"
#include "cardio/phantoms/phantoms.hpp"
#include "config/heart_config.hpp"
#include "config/mesh_config.hpp"
#include "mesh/mesh_cache.hpp"
#include "mesh/mesh_stage.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
using namespace cardio;
using pipeline::MeshCacheKey;
using pipeline::MeshStageResult;

namespace {

using test_support::slurp;

void spit(const fs::path& p, const std::string& s) { std::ofstream(p, std::ios::binary) << s; }

/// Two mesh stage results are the same: their cache payloads (every mesh field with exact bits, as
/// modules/meshing's snapshot test shows, and the report) match, but for the cache note and the
/// meshing time (of two computations) in the reports.
void expect_same(MeshStageResult a, MeshStageResult b) {
  for (auto* r : {&a.report, &b.report}) {
    r->erase("mesh_cache");
    r->erase("mesh_time_s");
  }
  EXPECT_EQ(a.report.dump(), b.report.dump());
  const MeshCacheKey none;
  EXPECT_TRUE(pipeline::mesh_cache_payload(a, none) == pipeline::mesh_cache_payload(b, none)) << "the meshes differ";
}

class MeshCache : public ::testing::Test {
 protected:
  /// The default heart config (configs/lv_phantom.yaml) at 2 mm with extra overrides, parsed.
  struct Parsed {
    std::shared_ptr<config::Document> doc;
    pipeline::HeartConfig cfg;
  };
  static Parsed lv_config(const std::vector<std::string>& overrides = {}) {
    Parsed p;
    p.doc = config::Document::load_file(fs::path(CARDIO_SOURCE_DIR) / "configs" / "lv_phantom.yaml");
    p.doc->set_override("geometry.phantom.voxel_size=2 mm");
    for (const auto& o : overrides) p.doc->set_override(o);
    p.cfg = pipeline::parse_heart_config(*p.doc);
    return p;
  }
  static MeshCacheKey lv_key(const std::vector<std::string>& overrides = {}) {
    const Parsed p = lv_config(overrides);
    return pipeline::mesh_cache_key(p.cfg.mesh, *p.doc);
  }

  /// A mesh-only config given as YAML text, written into the test dir (relative paths work).
  Parsed yaml_config(const std::string& yaml) {
    const fs::path file = dir / "case.yaml";
    spit(file, yaml);
    Parsed p;
    p.doc = config::Document::load_file(file);
    p.cfg = pipeline::parse_heart_config(*p.doc);
    return p;
  }

  test_support::TempDir tmp{"cardio_mesh_cache_"};
  fs::path dir = tmp.path();
};

// ------------------------------------------------------------------------------------------- key
TEST_F(MeshCache, FileHashIsFnv1aOfTheBytes) {
  spit(dir / "a.bin", "foobar");
  std::uint64_t size = 0;
  EXPECT_EQ(pipeline::hash_file(dir / "a.bin", &size), 0x85944171f73967e8ULL);  // FNV reference vector
  EXPECT_EQ(size, 6u);
  // A folder (DICOM series): its files' names and contents, in sorted order.
  fs::create_directories(dir / "series");
  spit(dir / "series" / "1.dcm", "one");
  spit(dir / "series" / "2.dcm", "two");
  const std::uint64_t h = pipeline::hash_file(dir / "series", &size);
  EXPECT_EQ(size, 6u);
  spit(dir / "series" / "2.dcm", "twO");
  EXPECT_NE(pipeline::hash_file(dir / "series"), h);
  EXPECT_THROW(pipeline::hash_file(dir / "missing.nii"), Error);
}

TEST_F(MeshCache, KeyIsDeterministicAndNamesWhatItHashes) {
  const MeshCacheKey a = lv_key(), b = lv_key();
  EXPECT_EQ(a.value, b.value);
  EXPECT_EQ(a.manifest, b.manifest);
  EXPECT_EQ(a.value, fnv1a64(a.manifest));
  EXPECT_HAS(a.manifest, "format " + std::to_string(pipeline::kMeshCacheFormat));
  EXPECT_HAS(a.manifest, "program cardiac ");
  EXPECT_HAS(a.manifest, "voxel_size: 2 mm");
  EXPECT_HAS(a.manifest, "density:");
  EXPECT_HAS(a.manifest, "helix_endo:");
  // Only the mesh keys: no solver section is part of the key.
  for (const char* solver : {"material", "simulation", "activation", "circulation", "boundary:", "lv_phantom"})
    EXPECT_EQ(a.manifest.find(solver), std::string::npos) << solver << " in\n" << a.manifest;
  // Another program (version or executable) is another key.
  const Parsed p = lv_config();
  EXPECT_NE(pipeline::mesh_cache_key(p.cfg.mesh, *p.doc, "cardiac 9.9.9").value, a.value);
}

TEST_F(MeshCache, MeshKeysChangeTheKey) {
  const std::uint64_t base = lv_key().value;
  for (const std::string o :
       {"geometry.phantom.voxel_size=2.5 mm", "geometry.phantom.fibres=streeter",
        "geometry.phantom.rotation_angle=10 deg", "fibres.rule.helix_endo=50 deg", "fibres.rule.sheet_epi=20 deg",
        "fibres.source=phantom", "tissue.density=1.1 mg/mm^3", "geometry.islands=keep",
        "geometry.base.tolerance=0.5 mm", "geometry.boundary_fit=staircase", "geometry.label_vote=nearest"})
    EXPECT_NE(lv_key({o}).value, base) << o;
}

TEST_F(MeshCache, SolverOnlyKeysKeepTheKey) {
  const std::uint64_t base = lv_key().value;
  for (const std::string o :
       {"simulation.beats=1", "simulation.period=700 ms", "simulation.dt_safety=0.5", "material.C=3 kPa",
        "material.bulk_modulus=500 kPa", "activation.velocity_fibre=0.5 m/s", "activation.twitch.peak_tension=50 kPa"})
    EXPECT_EQ(lv_key({o}).value, base) << o;
  // A value written differently but meaning the same (units are normalized) keeps it too.
  EXPECT_EQ(lv_key({"geometry.phantom.voxel_size=0.2 cm"}).value, base);
}

TEST_F(MeshCache, OutputOnlyKeysKeepTheKey) {
  const MeshCacheKey base = lv_key();
  // Every key of a heart config that only names or writes outputs (docs/config.md): one at a time, then all.
  const std::vector<std::string> output_only = {"name=another_name", "output.surfaces=false", "output.figures=false",
                                                "output.max_size_warning=1 TB"};
  for (const std::string& o : output_only) EXPECT_EQ(lv_key({o}).value, base.value) << o;
  EXPECT_EQ(lv_key(output_only).value, base.value);
  // The manifest's config holds the mesh sections alone, so no output key, present or future, is hashed.
  const std::string header = "config (resolved mesh keys):\n";
  const auto at = base.manifest.find(header);
  ASSERT_NE(at, std::string::npos) << base.manifest;
  std::istringstream config(base.manifest.substr(at + header.size()));
  std::vector<std::string> sections;
  for (std::string line; std::getline(config, line);)
    if (!line.empty() && line[0] != ' ') sections.push_back(line);
  EXPECT_EQ(sections, (std::vector<std::string>{"geometry:", "fibres:", "tissue:"})) << base.manifest;
}

TEST_F(MeshCache, InputFileBytesChangeTheKey) {
  phantoms::PhantomSpec spec;
  spec.voxel_size = 2.0;
  const phantoms::Phantom ph = phantoms::make_phantom(spec);
  imaging::write_label_image(ph.labels, dir / "labels.nii");
  imaging::write_vector_image(ph.fibre, dir / "fibre.nii");
  imaging::write_vector_image(ph.sheet, dir / "sheet.nii");
  const std::string yaml =
      "geometry:\n  source: image\n  labels: labels.nii\n"
      "  roles: {myocardium: [1], cavities: [{name: lv, labels: [2]}]}\n"
      "fibres: {source: vectors, fibre: fibre.nii, sheet: sheet.nii}\n";
  const auto key = [&] {
    const Parsed p = yaml_config(yaml);
    return pipeline::mesh_cache_key(p.cfg.mesh, *p.doc);
  };
  const MeshCacheKey k0 = key();
  EXPECT_HAS(k0.manifest, "input " + (dir / "labels.nii").string());
  EXPECT_HAS(k0.manifest, "input " + (dir / "sheet.nii").string());
  // Same bytes rewritten (new mtime): same key. Contents, not dates.
  const std::string labels = slurp(dir / "labels.nii");
  spit(dir / "labels.nii", labels);
  EXPECT_EQ(key().value, k0.value);
  // One byte of the label image changed.
  std::string changed = labels;
  changed.back() = char(changed.back() ^ 1);
  spit(dir / "labels.nii", changed);
  const MeshCacheKey k1 = key();
  EXPECT_NE(k1.value, k0.value);
  spit(dir / "labels.nii", labels);
  EXPECT_EQ(key().value, k0.value);
  // One byte of the sheet image changed.
  std::string sheet = slurp(dir / "sheet.nii");
  sheet[sheet.size() / 2] = char(sheet[sheet.size() / 2] ^ 0x10);
  spit(dir / "sheet.nii", sheet);
  EXPECT_NE(key().value, k0.value);
}

// ----------------------------------------------------------------------------------- round trip
TEST_F(MeshCache, RoundTripOfRealMeshesIsExact) {
  for (const char* kind : {"lv_ellipsoid", "biventricular"}) {
    SCOPED_TRACE(kind);
    const Parsed p = lv_config({std::string("geometry.phantom.kind=") + kind});
    const MeshStageResult r = pipeline::run_mesh_stages(p.cfg.mesh);
    ASSERT_GT(r.mesh.mesh.n_elements(), 100);
    ASSERT_FALSE(r.mesh.cavities.empty());
    const MeshCacheKey key = pipeline::mesh_cache_key(p.cfg.mesh, *p.doc);
    // In memory.
    const std::string payload = pipeline::mesh_cache_payload(r, key);
    std::string why;
    const auto back = pipeline::parse_mesh_cache_payload(payload, key, &why);
    ASSERT_TRUE(back) << why;
    expect_same(r, *back);
    EXPECT_EQ(r.report, back->report);  // no mesh_cache entry on either: the report itself is exact
    EXPECT_EQ(pipeline::mesh_cache_payload(*back, key), payload);
    // Through the file.
    pipeline::save_mesh_cache(dir, key, r);
    const auto loaded = pipeline::load_mesh_cache(dir, key, &why);
    ASSERT_TRUE(loaded) << why;
    expect_same(r, *loaded);
  }
}

TEST_F(MeshCache, DamagedFilesAreMissesNeverCrashes) {
  const Parsed p = lv_config();
  const MeshStageResult r = pipeline::run_mesh_stages(p.cfg.mesh);
  const MeshCacheKey key = pipeline::mesh_cache_key(p.cfg.mesh, *p.doc);
  pipeline::save_mesh_cache(dir, key, r);
  const fs::path file = pipeline::mesh_cache_file(dir, key);
  const std::string good = slurp(file);
  std::string why;
  ASSERT_TRUE(pipeline::load_mesh_cache(dir, key, &why)) << why;

  auto expect_miss = [&](const std::string& bytes, const std::string& reason, const std::string& what) {
    spit(file, bytes);
    std::string w;
    EXPECT_FALSE(pipeline::load_mesh_cache(dir, key, &w)) << what;
    EXPECT_HAS(w, reason);
  };
  // Truncations, down to nothing (the header is 28 bytes: magic, version, size, checksum).
  for (std::size_t n : {std::size_t(0), std::size_t(7), std::size_t(27), std::size_t(28), std::size_t(40),
                        good.size() / 2, good.size() - 1})
    expect_miss(good.substr(0, n), n < 28 ? "not a CARDMESH file" : "truncated", "truncated to " + std::to_string(n));
  expect_miss(good + "x", "truncated", "one byte appended");
  auto with = [&](std::size_t at, char c) {
    std::string s = good;
    s[at] = c;
    return s;
  };
  expect_miss(with(0, 'X'), "not a CARDMESH file", "magic");
  expect_miss(with(8, char(good[8] + 1)), "format version", "version");
  expect_miss(with(12, char(good[12] ^ 1)), "truncated", "size");
  expect_miss(with(20, char(good[20] ^ 1)), "checksum", "checksum field");
  // Any changed byte of the payload fails the checksum.
  std::mt19937_64 rng(42);
  for (int i = 0; i < 100; ++i) {
    const std::size_t at = 28 + rng() % (good.size() - 28);
    expect_miss(with(at, char(good[at] ^ (1 + rng() % 255))), "checksum", "byte " + std::to_string(at));
  }
  // After all that, the good file loads again.
  spit(file, good);
  ASSERT_TRUE(pipeline::load_mesh_cache(dir, key, &why)) << why;

  // A payload of another key, or of the same key value with another manifest (a collision).
  const std::string payload = good.substr(28);
  MeshCacheKey other = key;
  other.manifest += "x";
  other.value = fnv1a64(other.manifest);
  EXPECT_FALSE(pipeline::parse_mesh_cache_payload(payload, other, &why));
  EXPECT_HAS(why, "key " + key.hex() + ", expected " + other.hex());
  MeshCacheKey collision = key;
  collision.manifest += "y";
  EXPECT_FALSE(pipeline::parse_mesh_cache_payload(payload, collision, &why));
  EXPECT_HAS(why, "collision");
  // Garbage payloads that would pass a checksum (as a buggy writer would make): misses, no crash.
  const std::size_t mesh_at = 16 + key.manifest.size();
  int misses = 0;
  for (int i = 0; i < 400; ++i) {
    std::string s = payload;
    const int flips = 1 + int(rng() % 4);
    for (int f = 0; f < flips; ++f) {
      // Mostly the first kilobyte of the mesh (counts and dimensions), sometimes anywhere.
      const std::size_t span = rng() % 2 ? std::min<std::size_t>(1024, s.size() - mesh_at) : s.size() - mesh_at;
      s[mesh_at + rng() % span] = char(rng());
    }
    std::string reason;
    const auto loaded = pipeline::parse_mesh_cache_payload(s, key, &reason);
    if (!loaded) {
      EXPECT_FALSE(reason.empty());
      ++misses;
    }
  }
  // Most flips land in the (larger since format 2) frame arrays, which only the checksum catches.
  EXPECT_GT(misses, 50);
  // Cut anywhere: always a miss.
  for (int i = 0; i < 100; ++i)
    EXPECT_FALSE(pipeline::parse_mesh_cache_payload(payload.substr(0, rng() % payload.size()), key));
}

TEST_F(MeshCache, CachedStageComputesThenLoadsAndKeepsOnlyTheNewest) {
  const Parsed p = lv_config();
  std::ostringstream log1, log2, log3;
  const MeshStageResult a = pipeline::cached_mesh_stages(p.cfg.mesh, *p.doc, dir, &log1);
  EXPECT_HAS(log1.str(), "mesh stage: computed");
  const MeshCacheKey key = pipeline::mesh_cache_key(p.cfg.mesh, *p.doc);
  ASSERT_TRUE(fs::exists(dir / "cache" / ("mesh-" + key.hex() + ".bin")));
  EXPECT_EQ(a.report["mesh_cache"]["hit"], false);

  const MeshStageResult b = pipeline::cached_mesh_stages(p.cfg.mesh, *p.doc, dir, &log2);
  EXPECT_HAS(log2.str(), "mesh stage: cached (key " + key.hex());
  EXPECT_EQ(b.report["mesh_cache"]["hit"], true);
  expect_same(a, b);

  // A truncated file on disk: a miss saying why, then recomputed and rewritten.
  const fs::path file = pipeline::mesh_cache_file(dir, key);
  const std::string bytes = slurp(file);
  spit(file, bytes.substr(0, bytes.size() - 100));
  const MeshStageResult c = pipeline::cached_mesh_stages(p.cfg.mesh, *p.doc, dir, &log3);
  EXPECT_HAS(log3.str(), "cache miss");
  EXPECT_HAS(log3.str(), "truncated");
  EXPECT_HAS(log3.str(), "mesh stage: computed");
  expect_same(a, c);
  ASSERT_EQ(slurp(file).size(), bytes.size());
  ASSERT_TRUE(pipeline::load_mesh_cache(dir, key));

  // Another mesh (a mesh key changed) replaces the old cache file, and the miss names the change.
  const Parsed q = lv_config({"fibres.rule.helix_endo=50 deg"});
  std::ostringstream log4;
  (void)pipeline::cached_mesh_stages(q.cfg.mesh, *q.doc, dir, &log4);
  EXPECT_HAS(log4.str(), "is for other inputs");
  EXPECT_HAS(log4.str(), "changed: helix_endo: 0.87266");  // 50 deg, resolved in rad
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir / "cache")) files.push_back(e.path().filename().string());
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0], "mesh-" + pipeline::mesh_cache_key(q.cfg.mesh, *q.doc).hex() + ".bin");

  // Disabled: neither read nor written.
  std::ostringstream log5;
  (void)pipeline::cached_mesh_stages(p.cfg.mesh, *p.doc, dir, &log5, false);
  EXPECT_HAS(log5.str(), "cache disabled");
  EXPECT_FALSE(fs::exists(file));
}

}  // namespace
