// Mutations of the image corpus, each certainly unreadable or unusable as a label image: truncated
// (in the header or in the pixel data), header fields out of their range, dimensions larger than
// the data, 2-D, and (NIfTI) labels no role has. Not here, because a reader may accept them: the
// NIfTI magic and sizeof_hdr (ITK falls back to Analyze 7.5 or guesses the byte order) and random
// byte flips (most header bytes are free text). Not here either, being another change's: NaN
// labels and a zero or NaN pixdim (the imaging module's checks, issue 14's should-fix items).
#include <cstring>
#include <regex>

#include "fuzz.hpp"

namespace cardio::fuzz {

namespace {

void put16(std::string& b, std::size_t at, std::int16_t v) { std::memcpy(b.data() + at, &v, 2); }
void put_float(std::string& b, std::size_t at, float v) { std::memcpy(b.data() + at, &v, 4); }

/// `bytes` with the header line starting with `field` replaced by `line` (text headers).
std::string with_line(const std::string& bytes, const std::string& field, const std::string& line) {
  const auto at = bytes.find("\n" + field);
  if (at == std::string::npos) return {};
  const auto end = bytes.find('\n', at + 1);
  return bytes.substr(0, at + 1) + line + bytes.substr(end);
}

/// The header's line for `field`, e.g. "sizes: 10 10 11".
std::string line_of(const std::string& bytes, const std::string& field) {
  const auto at = bytes.find("\n" + field);
  if (at == std::string::npos) return {};
  return bytes.substr(at + 1, bytes.find('\n', at + 1) - at - 1);
}

/// The line with its first number multiplied by 10 ("DimSize = 10 10 11" -> "DimSize = 100 10 11").
std::string first_size_times_ten(const std::string& line) {
  std::smatch m;
  if (!std::regex_search(line, m, std::regex(R"([0-9]+)"))) return line;
  return m.prefix().str() + m.str() + "0" + m.suffix().str();
}

std::vector<Mutant> nifti(const std::string& b, Rng& rng) {
  constexpr std::size_t kData = 352;  // vox_offset of a single-file NIfTI-1 without extensions
  std::vector<Mutant> out;
  auto add = [&](const std::string& category, const std::string& what, std::string bytes) {
    out.push_back({category, what, std::move(bytes), {}});
  };
  const std::size_t cut = kData + 1 + rng.below(b.size() - kData - 1);
  add("image truncated", "cut in the pixel data at byte " + std::to_string(cut), b.substr(0, cut));
  const std::size_t head = 48 + rng.below(290);
  add("image truncated", "cut in the header at byte " + std::to_string(head), b.substr(0, head));
  std::string m = b;
  put16(m, 40, std::vector<std::int16_t>{0, 8, -3}[rng.below(3)]);
  add("image header corrupt", "dim[0] (the number of axes) out of [1, 7]", m);
  m = b;
  put16(m, 70, 9999);
  add("image header corrupt", "datatype 9999", m);
  m = b;
  put16(m, 72, 64);
  add("image header corrupt", "bitpix 64 for 8-bit data", m);
  m = b;
  put_float(m, 108, 1e9f);
  add("image header corrupt", "vox_offset beyond the end of the file", m);
  m = b;
  put16(m, 42, std::int16_t(1000 + rng.below(30000)));
  add("image dimensions wrong", "dim[1] larger than the data", m);
  m = b;
  put16(m, 40, 2);
  add("image dimensions wrong", "a 2-D image (dim[0] = 2)", m);
  m = b;
  std::memset(m.data() + kData, 7, m.size() - kData);
  add("image content", "every voxel has label 7, which no role has", m);
  return out;
}

/// NRRD and MetaImage: text headers.
std::vector<Mutant> text_header(const std::string& b, bool nrrd, Rng& rng) {
  std::vector<Mutant> out;
  auto add = [&](const std::string& category, const std::string& what, const std::string& bytes) {
    if (!bytes.empty() && bytes != b) out.push_back({category, what, bytes, {}});
  };
  const std::size_t data = nrrd ? b.find("\n\n") + 2 : b.find("ElementDataFile = LOCAL\n") + 24;
  // Not in the last 8 bytes: the gzip (or zlib) trailer, a checksum after complete pixel data,
  // which the readers do not check.
  const std::size_t cut = data + rng.below(b.size() - 8 - data);
  add("image truncated", "cut in the pixel data at byte " + std::to_string(cut), b.substr(0, cut));
  const std::string sizes = nrrd ? "sizes:" : "DimSize";
  add("image dimensions wrong", "sizes 10 times the data",
      with_line(b, sizes, first_size_times_ten(line_of(b, sizes))));
  if (nrrd) {
    add("image header corrupt", "type: bogus", with_line(b, "type:", "type: bogus"));
    add("image header corrupt", "encoding: bogus", with_line(b, "encoding:", "encoding: bogus"));
    add("image dimensions wrong", "dimension: 2 with three sizes", with_line(b, "dimension:", "dimension: 2"));
    add("image dimensions wrong", "a size of 0", with_line(b, "sizes:", "sizes: 0 10 11"));
  } else {
    add("image header corrupt", "ElementType = MET_BOGUS", with_line(b, "ElementType", "ElementType = MET_BOGUS"));
    add("image dimensions wrong", "NDims = 2 (a 2-D image)", with_line(b, "NDims", "NDims = 2"));
    add("image header corrupt", "CompressedDataSize beyond the file",
        with_line(b, "CompressedDataSize", "CompressedDataSize = " + std::to_string(b.size() * 10)));
  }
  return out;
}

}  // namespace

std::vector<Mutant> mutate_image(const std::string& bytes, const std::string& ext, Rng& rng) {
  if (ext == ".nii") return nifti(bytes, rng);
  return text_header(bytes, ext == ".nrrd", rng);
}

}  // namespace cardio::fuzz
