#pragma once
/// @file binary.hpp
/// Exact binary snapshots (checkpoints, caches): a byte buffer of fixed-width values in the host's
/// byte order (little-endian on every platform we build for), and a framed file format
///   magic (8 bytes) | format version (u32) | payload size (u64) | FNV-1a 64 of the payload | payload
/// written atomically. A reader that meets a wrong magic, version, size or checksum, or runs past
/// the end, throws cardio::Error naming the file: a damaged snapshot is never half-loaded.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace cardio {

/// FNV-1a 64-bit hash (Fowler-Noll-Vo): identifies contents, not a cryptographic hash.
std::uint64_t fnv1a64(std::string_view bytes, std::uint64_t seed = 0xcbf29ce484222325ULL);
/// The hash as 16 lower-case hex digits.
std::string hex16(std::uint64_t h);

class BinaryWriter {
 public:
  void u64(std::uint64_t v) { raw(&v, sizeof v); }
  void i64(std::int64_t v) { raw(&v, sizeof v); }
  void f64(double v) { raw(&v, sizeof v); }
  void str(std::string_view s) {
    u64(s.size());
    raw(s.data(), s.size());
  }
  /// A run of n doubles (e.g. an Eigen matrix's data()), preceded by n.
  void f64s(const double* p, std::size_t n) {
    u64(n);
    raw(p, n * sizeof(double));
  }
  template <class Int>
  void ints(const std::vector<Int>& v) {
    u64(v.size());
    raw(v.data(), v.size() * sizeof(Int));
  }
  void raw(const void* p, std::size_t n) { m_bytes.append(static_cast<const char*>(p), n); }
  const std::string& bytes() const { return m_bytes; }

 private:
  std::string m_bytes;
};

class BinaryReader {
 public:
  /// `what` names the source in errors (e.g. the file).
  BinaryReader(std::string bytes, std::string what) : m_bytes(std::move(bytes)), m_what(std::move(what)) {}
  std::uint64_t u64() { return pod<std::uint64_t>(); }
  std::int64_t i64() { return pod<std::int64_t>(); }
  double f64() { return pod<double>(); }
  std::string str();
  /// Reads a run written by f64s into p, which must hold exactly n values.
  void f64s(double* p, std::size_t n);
  /// The length of the next f64s run (without consuming it).
  std::size_t peek_count();
  template <class Int>
  std::vector<Int> ints() {
    const std::uint64_t n = u64();
    need(n, sizeof(Int));
    std::vector<Int> v(n);
    raw(v.data(), n * sizeof(Int));
    return v;
  }
  void raw(void* p, std::size_t n);
  bool at_end() const { return m_pos == m_bytes.size(); }
  /// Throws unless every byte was read.
  void expect_end() const;

 private:
  template <class T>
  T pod() {
    T v;
    raw(&v, sizeof v);
    return v;
  }
  void need(std::uint64_t count, std::size_t size) const;
  std::string m_bytes;
  std::string m_what;
  std::size_t m_pos = 0;
};

/// Write magic | version | size | checksum | payload atomically (temp file + rename).
void write_framed_file(const std::filesystem::path& path, std::string_view magic8, std::uint32_t version,
                       const std::string& payload);
/// Read and verify a framed file; returns its payload. Throws cardio::Error naming the file and the
/// problem (missing, not this kind of file, other version, truncated, checksum mismatch).
std::string read_framed_file(const std::filesystem::path& path, std::string_view magic8, std::uint32_t version);

}  // namespace cardio
