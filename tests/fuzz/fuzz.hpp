#pragma once
/// @file fuzz.hpp
/// The fuzz test of issue 14 ("Make it last"): seeded, deterministic mutations of every shipped
/// config and of the image corpus, each certainly invalid by construction, run through `cardiac`.
/// The promises checked and the categories are listed in docs/validation.md ("Fuzz test").
#include <cstdint>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace cardio::fuzz {

/// The one random source: std::mt19937_64 is specified bit for bit, so a seed gives the same
/// mutations on every platform (std::uniform_int_distribution is not: it is not used).
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : m_engine(seed) {}
  /// An integer in [0, n), n > 0.
  std::size_t below(std::size_t n) { return static_cast<std::size_t>(m_engine() % n); }
  template <class T>
  const T& pick(const std::vector<T>& v) {
    return v[below(v.size())];
  }

 private:
  std::mt19937_64 m_engine;
};

/// A mutated input and what `cardiac` must say about it.
struct Mutant {
  std::string category;  ///< e.g. "key renamed" (docs/validation.md lists them)
  std::string what;      ///< what was changed, for the failure message
  std::string text;      ///< the mutated file
  /// The error message must contain one of these: the key changed, or the file (its name).
  std::vector<std::string> needles;
};

/// What docs/config.md says of a key: required (no default) and its range column.
struct DocumentedKey {
  bool required = false;
  std::string range;
};

/// The key tables of docs/config.md by dotted path (list indices dropped); rows documented as
/// `…suffix` are stored under "…suffix". Several rows of one path keep the first (see lookup).
class KeyDocs {
 public:
  explicit KeyDocs(const std::filesystem::path& config_md);
  /// The rows for `path` ("a.b[0].c" is looked up as "a.b.c", then as its documented suffixes).
  std::vector<DocumentedKey> lookup(const std::string& path) const;

 private:
  std::multimap<std::string, DocumentedKey> m_rows;
};

/// Mutations of one config (YAML text whose input paths are absolute), `per_category` of each
/// category that applies. `file_name` is the name the mutant is written under (YAML errors name it).
std::vector<Mutant> mutate_config(const std::string& yaml, const std::string& file_name, const KeyDocs& docs, Rng& rng,
                                  int per_category);

/// A shipped config with every relative input path (a scalar naming an existing file or folder
/// next to it) made absolute, re-emitted as YAML.
std::string with_absolute_paths(const std::filesystem::path& config);

/// Mutations of an image of the corpus (the bytes of a .nii, .nrrd or .mha label image), each
/// certainly unreadable or not a usable label image.
std::vector<Mutant> mutate_image(const std::string& bytes, const std::string& ext, Rng& rng);

/// A command's outcome.
struct Outcome {
  int code = -1;  ///< exit status; 128 + signal if killed
  std::string out, err;
  double seconds = 0;
};

/// Run `args` (args[0] is the program) in `dir`, stdout and stderr to files there; -1 if it could
/// not be started.
Outcome run_in(const std::filesystem::path& dir, const std::vector<std::string>& args);

}  // namespace cardio::fuzz
