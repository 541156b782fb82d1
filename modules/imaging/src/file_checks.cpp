#include "file_checks.hpp"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <vector>

#include "cardio/core/error.hpp"

namespace cardio::imaging::file_checks {
namespace fs = std::filesystem;

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

[[noreturn]] void fail_truncated(const fs::path& file, const std::string& what, std::uint64_t need, std::uint64_t have,
                                 const fs::path& data_file) {
  std::string where;
  if (data_file != file) where = " in its data file '" + data_file.string() + "'";
  CARDIO_FAIL("cannot read " << what << " '" << file.string() << "': the file is truncated (the pixel data need "
                             << need << " bytes" << where << ", only " << have << " are present)");
}

bool is_gzip(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  unsigned char magic[2] = {0, 0};
  in.read(reinterpret_cast<char*>(magic), 2);
  return in.gcount() == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
}

/// First `n` bytes of the (possibly gzip-compressed) file; fewer if it is shorter.
std::vector<unsigned char> head_bytes(const fs::path& file, std::size_t n) {
  std::vector<unsigned char> out(n);
  gzFile gz = gzopen(file.c_str(), "rb");  // reads uncompressed files transparently
  if (!gz) return {};
  const int got = gzread(gz, out.data(), static_cast<unsigned>(n));
  gzclose(gz);
  out.resize(got > 0 ? static_cast<std::size_t>(got) : 0);
  return out;
}

/// Uncompressed bytes available in a gzip file, counted up to `needed` (stops there). The gzip
/// trailer (ISIZE = size mod 2^32) answers without decompressing when it equals `needed`.
std::uint64_t gzip_available(const fs::path& file, std::uint64_t needed) {
  {
    std::ifstream in(file, std::ios::binary | std::ios::ate);
    const auto size = static_cast<std::int64_t>(in.tellg());
    if (size >= 18) {
      unsigned char t[4];
      in.seekg(size - 4);
      in.read(reinterpret_cast<char*>(t), 4);
      const std::uint32_t isize =
          std::uint32_t(t[0]) | std::uint32_t(t[1]) << 8 | std::uint32_t(t[2]) << 16 | std::uint32_t(t[3]) << 24;
      if (in && isize == static_cast<std::uint32_t>(needed)) return needed;
    }
  }
  gzFile gz = gzopen(file.c_str(), "rb");
  if (!gz) return 0;
  gzbuffer(gz, 1u << 18);
  std::vector<char> chunk(1u << 16);  // small reads: a truncated stream loses at most one
  std::uint64_t total = 0;
  while (total < needed) {
    const int got = gzread(gz, chunk.data(), static_cast<unsigned>(chunk.size()));
    if (got <= 0) break;  // end of stream, or a truncated / corrupt stream
    total += static_cast<std::uint64_t>(got);
  }
  gzclose(gz);
  return total;
}

/// Bytes available in a file from `offset` on (decompressed if gzip), counted up to offset + needed.
std::uint64_t available_after(const fs::path& file, std::uint64_t offset, std::uint64_t needed) {
  if (is_gzip(file)) {
    const std::uint64_t total = gzip_available(file, offset + needed);
    return total > offset ? total - offset : 0;
  }
  std::error_code ec;
  const std::uint64_t size = fs::file_size(file, ec);
  if (ec) return 0;
  return size > offset ? size - offset : 0;
}

// ---------------------------------------------------------------- NIfTI / Analyze

template <class T>
T get(const std::vector<unsigned char>& h, std::size_t at, bool swap) {
  T v;
  std::memcpy(&v, h.data() + at, sizeof(T));
  if (swap) {
    unsigned char b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));
    std::reverse(b, b + sizeof(T));
    std::memcpy(&v, b, sizeof(T));
  }
  return v;
}

/// What the checks need of a NIfTI-1/-2 (or Analyze) header.
struct NiftiLayout {
  std::uint64_t vox_offset = 0;
  std::uint64_t data_bytes = 0;
  bool single_file = true;
  int datatype = 0;  ///< NIfTI DT_* code (16: float32, 64: float64)
  bool swap = false;
  int axes = 0;  ///< spatial axes: dim[0], at most 3
  std::array<double, 3> pixdim{};
  int qform_code = 0, sform_code = 0;  ///< 0 in Analyze headers, which have neither
};

std::optional<NiftiLayout> nifti_layout(const std::vector<unsigned char>& h) {
  if (h.size() < 348) return std::nullopt;
  const std::int32_t raw = get<std::int32_t>(h, 0, false);
  const std::int32_t swapped = get<std::int32_t>(h, 0, true);
  NiftiLayout L;
  std::array<std::int64_t, 8> dim{};
  int bitpix = 0;
  if (raw == 348 || swapped == 348) {
    const bool swap = L.swap = raw != 348;
    for (std::size_t d = 0; d < 8; ++d) dim[d] = get<std::int16_t>(h, 40 + 2 * d, swap);
    L.datatype = get<std::int16_t>(h, 70, swap);
    bitpix = get<std::int16_t>(h, 72, swap);
    for (std::size_t a = 0; a < 3; ++a) L.pixdim[a] = get<float>(h, 80 + 4 * a, swap);
    const float off = get<float>(h, 108, swap);
    L.vox_offset = off > 0 ? static_cast<std::uint64_t>(off) : 0;
    L.single_file = std::memcmp(h.data() + 344, "n+1", 4) == 0;
    if (L.single_file || std::memcmp(h.data() + 344, "ni1", 4) == 0) {
      L.qform_code = get<std::int16_t>(h, 252, swap);
      L.sform_code = get<std::int16_t>(h, 254, swap);
    }
  } else if ((raw == 540 || swapped == 540) && h.size() >= 540) {
    const bool swap = L.swap = raw != 540;
    L.datatype = get<std::int16_t>(h, 12, swap);
    bitpix = get<std::int16_t>(h, 14, swap);
    for (std::size_t d = 0; d < 8; ++d) dim[d] = get<std::int64_t>(h, 16 + 8 * d, swap);
    for (std::size_t a = 0; a < 3; ++a) L.pixdim[a] = get<double>(h, 112 + 8 * a, swap);
    const std::int64_t off = get<std::int64_t>(h, 168, swap);
    L.vox_offset = off > 0 ? static_cast<std::uint64_t>(off) : 0;
    L.single_file = std::memcmp(h.data() + 4, "n+2", 4) == 0;
    L.qform_code = get<std::int32_t>(h, 344, swap);
    L.sform_code = get<std::int32_t>(h, 348, swap);
  } else {
    return std::nullopt;
  }
  if (dim[0] < 1 || dim[0] > 7 || bitpix <= 0 || bitpix % 8 != 0) return std::nullopt;
  L.axes = static_cast<int>(std::min<std::int64_t>(dim[0], 3));
  std::uint64_t n = static_cast<std::uint64_t>(bitpix / 8);
  for (std::int64_t d = 1; d <= dim[0]; ++d) n *= static_cast<std::uint64_t>(std::max<std::int64_t>(1, dim[d]));
  L.data_bytes = n;
  return L;
}

bool is_nifti_name(const std::string& name) {
  return ends_with(name, ".nii") || ends_with(name, ".nii.gz") || ends_with(name, ".hdr") || ends_with(name, ".hdr.gz");
}

/// The file holding the pixel data: `file` itself, or the .img (.img.gz) beside a .hdr; empty if
/// that is missing (ITK reports it).
fs::path nifti_data_file(const fs::path& file, const std::string& name, const NiftiLayout& layout) {
  if (layout.single_file) return file;
  const std::string stem = file.string().substr(0, file.string().size() - (ends_with(name, ".gz") ? 7 : 4));
  const fs::path data = fs::exists(stem + ".img") ? fs::path(stem + ".img") : fs::path(stem + ".img.gz");
  return fs::exists(data) ? data : fs::path();
}

void check_nifti(const fs::path& file, const std::string& name, const std::string& what) {
  const auto layout = nifti_layout(head_bytes(file, 540));
  if (!layout) return;  // ITK accepted the header; leave odd variants to it
  const fs::path data = nifti_data_file(file, name, *layout);
  if (data.empty()) return;
  const std::uint64_t have = available_after(data, layout->vox_offset, layout->data_bytes);
  if (have < layout->data_bytes) fail_truncated(file, what, layout->data_bytes, have, data);
}

// ---------------------------------------------------------------- MetaImage

/// Bytes the zlib stream of `size` bytes at `offset` in `file` inflates to, counted up to `needed`.
/// ITK fills a compressed MetaImage whose DimSize exceeds its data with whatever it had.
std::uint64_t inflated_size(const fs::path& file, std::uint64_t offset, std::uint64_t size, std::uint64_t needed) {
  std::ifstream in(file, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(offset));
  z_stream z{};
  if (!in || inflateInit(&z) != Z_OK) return needed;  // cannot tell: leave it to ITK
  std::vector<unsigned char> src(1u << 16), dst(1u << 16);
  std::uint64_t total = 0, left = size;
  int rc = Z_OK;
  while (rc == Z_OK && total < needed && left > 0) {
    const auto chunk = static_cast<std::streamsize>(std::min<std::uint64_t>(left, src.size()));
    in.read(reinterpret_cast<char*>(src.data()), chunk);
    if (in.gcount() <= 0) break;
    left -= static_cast<std::uint64_t>(in.gcount());
    z.next_in = src.data();
    z.avail_in = static_cast<uInt>(in.gcount());
    do {
      z.next_out = dst.data();
      z.avail_out = static_cast<uInt>(dst.size());
      rc = inflate(&z, Z_NO_FLUSH);
      total += dst.size() - z.avail_out;
    } while (rc == Z_OK && z.avail_out == 0 && total < needed);
  }
  inflateEnd(&z);
  return total;
}

void check_meta(const fs::path& file, std::uint64_t pixel_bytes, const std::string& what) {
  std::ifstream in(file, std::ios::binary);
  std::string line;
  bool compressed = false;
  std::optional<std::uint64_t> compressed_size;
  std::int64_t header_size = 0;
  std::string data_file;
  std::uint64_t offset = 0;
  while (offset < (1u << 20) && std::getline(in, line)) {
    offset += line.size() + 1;
    const auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    auto trim = [](std::string s) {
      const auto b = s.find_first_not_of(" \t\r");
      const auto e = s.find_last_not_of(" \t\r");
      return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
    };
    const std::string key = lower(trim(line.substr(0, eq)));
    const std::string value = trim(line.substr(eq + 1));
    try {
      if (key == "compresseddata") compressed = lower(value) == "true";
      if (key == "compresseddatasize") compressed_size = std::stoull(value);
      if (key == "headersize") header_size = std::stoll(value);
    } catch (...) {
      return;  // unparsable numbers: leave it to ITK
    }
    if (key == "elementdatafile") {
      data_file = value;
      break;
    }
  }
  if (data_file.empty()) return;
  if (compressed && !compressed_size) return;  // size unknown without inflating; rare
  const std::uint64_t need = compressed ? *compressed_size : pixel_bytes;
  std::error_code ec;
  if (lower(data_file) == "local") {
    const std::uint64_t size = fs::file_size(file, ec);
    if (ec) return;
    const std::uint64_t have = size > offset ? size - offset : 0;
    if (have < need) fail_truncated(file, what, need, have, file);
    if (compressed) {  // the data are all there: do they inflate to what DimSize and ElementType say?
      const std::uint64_t inflated = inflated_size(file, offset, need, pixel_bytes);
      if (inflated < pixel_bytes)
        CARDIO_FAIL("cannot read " << what << " '" << file.string() << "': its compressed pixel data inflate to "
                                   << inflated << " bytes; the header (DimSize, ElementType) needs " << pixel_bytes);
    }
    return;
  }
  // A separate data file (not a LIST or a numbered pattern).
  if (lower(data_file).rfind("list", 0) == 0 || data_file.find('%') != std::string::npos || header_size < 0) return;
  const fs::path data = file.parent_path() / data_file;
  const std::uint64_t size = fs::file_size(data, ec);
  if (ec) return;  // ITK reports a missing data file
  const std::uint64_t skip = static_cast<std::uint64_t>(header_size);
  const std::uint64_t have = size > skip ? size - skip : 0;
  if (have < need) fail_truncated(file, what, need, have, data);
}

// ---------------------------------------------------------------- legacy VTK

/// ITK reads ASCII values with operator>>, which stops at the first token that is not a number of
/// the declared type ("nan", "inf", "1.5" for int) and leaves that value and every later one 0.
void check_vtk_ascii(std::istream& in, const fs::path& file, const std::string& what, std::uint64_t n_values,
                     bool integral, const std::array<std::uint64_t, 3>& dims) {
  std::uint64_t count = 0;
  std::string token;
  while (count < n_values && in >> token) {
    char* end = nullptr;
    const double v = integral ? double(std::strtoll(token.c_str(), &end, 10)) : std::strtod(token.c_str(), &end);
    if (end == token.c_str() || *end != '\0' || !std::isfinite(v)) {
      const std::uint64_t voxels = dims[0] * dims[1] * dims[2];
      std::ostringstream at;
      if (voxels > 0 && n_values % voxels == 0) {
        const std::uint64_t i = count / (n_values / voxels);
        at << ", at voxel (" << i % dims[0] << ", " << i / dims[0] % dims[1] << ", " << i / (dims[0] * dims[1]) << ")";
      }
      CARDIO_FAIL("cannot read " << what << " '" << file.string() << "': value " << count << " ('" << token << "'"
                                 << at.str() << ") is not a finite " << (integral ? "integer" : "number")
                                 << " (NaN, infinite or text); expected " << n_values << " of them (ITK would read it, "
                                 << "and every value after it, as 0)");
    }
    ++count;
  }
  if (count < n_values)
    CARDIO_FAIL("cannot read " << what << " '" << file.string() << "': the file is truncated (it needs " << n_values
                               << " values, only " << count << " are present)");
}

void check_vtk(const fs::path& file, std::uint64_t n_values, std::uint64_t pixel_bytes, const std::string& what) {
  std::ifstream in(file, std::ios::binary);
  std::string line;
  bool binary = false;
  std::uint64_t offset = 0;
  int line_no = 0;
  bool found = false;
  std::array<std::uint64_t, 3> dims{};
  std::string pending;  // "SCALARS" seen: the data start after an optional LOOKUP_TABLE line
  while (offset < (1u << 20) && std::getline(in, line)) {
    offset += line.size() + 1;
    ++line_no;
    std::string upper = line;
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (line_no == 3) binary = upper.rfind("BINARY", 0) == 0;
    if (line_no <= 3) continue;
    if (upper.rfind("DIMENSIONS", 0) == 0) std::istringstream(line.substr(10)) >> dims[0] >> dims[1] >> dims[2];
    if (!pending.empty()) {
      if (upper.rfind("LOOKUP_TABLE", 0) != 0) offset -= line.size() + 1;  // no lookup table: already data
      found = true;
      break;
    }
    if (upper.rfind("SCALARS", 0) == 0) {
      pending = upper;
      continue;
    }
    if (upper.rfind("VECTORS", 0) == 0 || upper.rfind("NORMALS", 0) == 0 || upper.rfind("TENSORS", 0) == 0 ||
        upper.rfind("COLOR_SCALARS", 0) == 0) {
      pending = upper;
      found = true;
      break;
    }
  }
  if (!found) return;
  std::error_code ec;
  const std::uint64_t size = fs::file_size(file, ec);
  if (ec) return;
  if (binary) {
    const std::uint64_t have = size > offset ? size - offset : 0;
    if (have < pixel_bytes) fail_truncated(file, what, pixel_bytes, have, file);
    return;
  }
  in.clear();
  in.seekg(static_cast<std::streamoff>(offset));
  std::string keyword, name, type;  // "SCALARS name type [n]", "VECTORS name type"
  std::istringstream(pending) >> keyword >> name >> type;
  check_vtk_ascii(in, file, what, n_values, type != "FLOAT" && type != "DOUBLE", dims);
}

}  // namespace

std::vector<std::uint64_t> non_finite_values(const fs::path& file) {
  const std::string name = lower(file.filename().string());
  if (!is_nifti_name(name)) return {};
  const auto layout = nifti_layout(head_bytes(file, 540));
  if (!layout || (layout->datatype != 16 && layout->datatype != 64)) return {};
  const fs::path data = nifti_data_file(file, name, *layout);
  gzFile gz = data.empty() ? nullptr : gzopen(data.c_str(), "rb");  // reads uncompressed files too
  if (!gz) return {};
  gzbuffer(gz, 1u << 18);
  std::vector<std::uint64_t> out;
  const std::size_t size = layout->datatype == 16 ? 4 : 8;
  const std::uint64_t n = layout->data_bytes / size;
  std::vector<unsigned char> chunk(size << 16);
  std::uint64_t i = 0;
  if (gzseek(gz, static_cast<z_off_t>(layout->vox_offset), SEEK_SET) < 0) i = n;
  while (i < n) {
    const std::uint64_t want = std::min<std::uint64_t>(n - i, 1u << 16);
    const int got = gzread(gz, chunk.data(), static_cast<unsigned>(want * size));
    if (got <= 0 || static_cast<std::uint64_t>(got) % size) break;
    const std::uint64_t values = static_cast<std::uint64_t>(got) / size;
    for (std::uint64_t k = 0; k < values; ++k) {
      const double v =
          size == 4 ? double(get<float>(chunk, k * 4, layout->swap)) : get<double>(chunk, k * 8, layout->swap);
      if (!std::isfinite(v)) out.push_back(i + k);
    }
    i += values;
  }
  gzclose(gz);
  return out;
}

void check_spacing(const fs::path& file, const std::string& what) {
  const std::string name = lower(file.filename().string());
  if (!is_nifti_name(name)) return;
  const auto s = nifti_layout(head_bytes(file, 540));
  if (!s) return;  // ITK accepted the header; leave odd variants to it
  bool ok = true;
  std::ostringstream given;
  for (int a = 0; a < s->axes; ++a) {
    ok = ok && std::isfinite(s->pixdim[std::size_t(a)]) && s->pixdim[std::size_t(a)] > 0;
    given << (a ? ", " : "") << s->pixdim[std::size_t(a)];
  }
  // Whatever the qform or sform say: the NIfTI library then scales both by a pixdim of 1.
  if (!ok)
    CARDIO_FAIL("cannot read " << what << " '" << file.string() << "': its NIfTI header has pixdim[1.." << s->axes
                               << "] = (" << given.str() << ") (qform_code " << s->qform_code << ", sform_code "
                               << s->sform_code << "): the voxel size is unknown (the NIfTI library would read it as "
                               << "1 mm); expected a positive, finite pixdim, the voxel size in mm, for every spatial "
                               << "axis");
}

void check_complete(const fs::path& file, std::uint64_t n_values, std::uint64_t bytes_per_value,
                    const std::string& what) {
  const std::uint64_t itk_pixel_bytes = n_values * bytes_per_value;
  const std::string name = lower(file.filename().string());
  if (is_nifti_name(name))
    check_nifti(file, name, what);
  else if (ends_with(name, ".mha") || ends_with(name, ".mhd"))
    check_meta(file, itk_pixel_bytes, what);
  else if (ends_with(name, ".vtk"))
    check_vtk(file, n_values, itk_pixel_bytes, what);
}

}  // namespace cardio::imaging::file_checks
