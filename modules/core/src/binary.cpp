#include "cardio/core/binary.hpp"

#include <cstring>
#include <fstream>
#include <iomanip>
#include <sstream>

#include "cardio/core/atomic_file.hpp"
#include "cardio/core/error.hpp"

namespace cardio {

std::uint64_t fnv1a64(std::string_view bytes, std::uint64_t seed) {
  std::uint64_t h = seed;
  for (unsigned char c : bytes) h = (h ^ c) * 1099511628211ULL;
  return h;
}

std::string hex16(std::uint64_t h) {
  std::ostringstream os;
  os << std::hex << std::setw(16) << std::setfill('0') << h;
  return os.str();
}

void BinaryReader::need(std::uint64_t count, std::size_t size) const {
  if (count > (m_bytes.size() - m_pos) / (size ? size : 1))
    CARDIO_FAIL(m_what << ": truncated or damaged (a record of " << count << " x " << size << " bytes at byte " << m_pos
                       << " runs past the end, " << m_bytes.size() << " bytes)");
}

void BinaryReader::raw(void* p, std::size_t n) {
  need(n, 1);
  std::memcpy(p, m_bytes.data() + m_pos, n);
  m_pos += n;
}

std::string BinaryReader::str() {
  const std::uint64_t n = u64();
  need(n, 1);
  std::string s(m_bytes.data() + m_pos, n);
  m_pos += n;
  return s;
}

std::size_t BinaryReader::peek_count() {
  const std::size_t at = m_pos;
  const std::uint64_t n = u64();
  m_pos = at;
  return n;
}

void BinaryReader::f64s(double* p, std::size_t n) {
  const std::uint64_t stored = u64();
  if (stored != n) CARDIO_FAIL(m_what << ": expected " << n << " values at byte " << m_pos << ", found " << stored);
  raw(p, n * sizeof(double));
}

void BinaryReader::expect_end() const {
  if (m_pos != m_bytes.size())
    CARDIO_FAIL(m_what << ": " << (m_bytes.size() - m_pos) << " unexpected bytes after the last record");
}

void write_framed_file(const std::filesystem::path& path, std::string_view magic8, std::uint32_t version,
                       const std::string& payload) {
  CARDIO_CHECK(magic8.size() == 8, "framed file magic must be 8 bytes");
  BinaryWriter w;
  w.raw(magic8.data(), 8);
  w.raw(&version, sizeof version);
  w.u64(payload.size());
  w.u64(fnv1a64(payload));
  w.raw(payload.data(), payload.size());
  write_file_atomic(path, w.bytes());
}

std::string read_framed_file(const std::filesystem::path& path, std::string_view magic8, std::uint32_t version) {
  std::ifstream in(path, std::ios::binary);
  if (!in) CARDIO_FAIL(path.string() << ": cannot open");
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  constexpr std::size_t header = 8 + sizeof(std::uint32_t) + 2 * sizeof(std::uint64_t);
  if (bytes.size() < header || bytes.compare(0, 8, magic8) != 0)
    CARDIO_FAIL(path.string() << ": not a " << magic8 << " file");
  std::uint32_t v = 0;
  std::uint64_t size = 0, sum = 0;
  std::memcpy(&v, bytes.data() + 8, sizeof v);
  std::memcpy(&size, bytes.data() + 12, sizeof size);
  std::memcpy(&sum, bytes.data() + 20, sizeof sum);
  if (v != version)
    CARDIO_FAIL(path.string() << ": format version " << v << ", this program reads version " << version);
  if (bytes.size() - header != size)
    CARDIO_FAIL(path.string() << ": truncated (" << bytes.size() - header << " of " << size << " payload bytes)");
  std::string payload = bytes.substr(header);
  if (fnv1a64(payload) != sum) CARDIO_FAIL(path.string() << ": checksum mismatch (the file is damaged)");
  return payload;
}

}  // namespace cardio
