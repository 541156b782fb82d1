// Which files make a stack of 2-D slices, and in which order (image_stack.hpp); labels written as
// slices. File names only: the slices themselves are read and written by the ITK side
// (stack_bridge.cpp).
#include "cardio/imaging/image_stack.hpp"

#include <fnmatch.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <optional>

#include "cardio/core/error.hpp"
#include "cardio/imaging/image_io.hpp"
#include "itk_bridge.hpp"

namespace cardio::imaging {
namespace fs = std::filesystem;

namespace {

enum class SliceFormat { tiff, png };

std::string in_quotes(const fs::path& p) {
  std::string s(1, '\'');  // built by appending: GCC 12 warns (-Wrestrict, PR 105329) on "'" + str
  s.append(p.string()).push_back('\'');
  return s;
}

std::optional<SliceFormat> format_of(const fs::path& file) {
  std::string ext = file.extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (ext == ".tif" || ext == ".tiff") return SliceFormat::tiff;
  if (ext == ".png") return SliceFormat::png;
  return std::nullopt;
}

const char* format_name(std::optional<SliceFormat> f) {
  if (!f) return "neither TIFF nor PNG";
  return *f == SliceFormat::tiff ? "TIFF" : "PNG";
}

bool has_wildcard(const std::string& s) { return s.find_first_of("*?[") != std::string::npos; }

bool is_hidden(const fs::path& p) { return p.filename().string().starts_with('.'); }

/// Regular, non-hidden files of a folder (its sub-folders are not looked into).
std::vector<fs::path> visible_files(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (!is_hidden(entry.path()) && entry.is_regular_file(ec)) out.push_back(entry.path());
  if (ec) CARDIO_FAIL("cannot list the folder " << in_quotes(dir) << ": " << ec.message());
  return out;
}

std::vector<fs::path> glob_matches(const fs::path& pattern) {
  const fs::path dir = pattern.parent_path().empty() ? fs::path(".") : pattern.parent_path();
  if (has_wildcard(pattern.parent_path().string()))
    CARDIO_FAIL("stack of slices " << in_quotes(pattern)
                                   << ": wildcards are allowed in the file name only, not in folder names");
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    CARDIO_FAIL("stack of slices " << in_quotes(pattern) << ": the folder " << in_quotes(dir) << " does not exist");
  const std::string name_pattern = pattern.filename().string();
  std::vector<fs::path> out;
  for (const fs::path& f : visible_files(dir))
    if (::fnmatch(name_pattern.c_str(), f.filename().c_str(), FNM_PERIOD) == 0) out.push_back(f);
  return out;
}

/// Every file the same slice format, else an error naming a slice and the first file that differs.
void check_one_format(const std::vector<fs::path>& files, const fs::path& stack) {
  const auto ref = std::find_if(files.begin(), files.end(), [](const fs::path& f) { return format_of(f).has_value(); });
  if (ref == files.end())
    CARDIO_FAIL("stack of slices " << in_quotes(stack) << ": none of its " << files.size() << " file(s), e.g. "
                                   << in_quotes(files.front().filename())
                                   << ", is a 2-D slice; expected .tif, .tiff or .png files");
  const std::optional<SliceFormat> format = format_of(*ref);
  for (const fs::path& f : files) {
    const std::optional<SliceFormat> other = format_of(f);
    if (other == format) continue;
    CARDIO_FAIL("stack of slices " << in_quotes(stack) << ": mixed formats: " << in_quotes(ref->filename()) << " is "
                                   << format_name(format) << " but " << in_quotes(f.filename()) << " is "
                                   << format_name(other)
                                   << "; a stack holds only TIFF (.tif, .tiff) or only PNG (.png) slices");
  }
}

/// `folder` may be replaced by a new stack: absent, or holding only slices written before
/// (slice_*.tif, slice_*.png); anything else in it is the user's and stops the write.
void check_replaceable(const fs::path& folder, const std::string& what) {
  std::error_code ec;
  if (!fs::exists(folder, ec)) return;
  if (!fs::is_directory(folder, ec))
    CARDIO_FAIL("cannot write " << what << " " << in_quotes(folder) << ": a file of that name exists");
  for (const auto& entry : fs::directory_iterator(folder, ec))
    if (!entry.path().filename().string().starts_with("slice_") || !format_of(entry.path()))
      CARDIO_FAIL("cannot write " << what << " " << in_quotes(folder) << ": the folder holds "
                                  << in_quotes(entry.path().filename())
                                  << ", which is not a slice written before; choose another output folder");
}

}  // namespace

bool natural_less(const std::string& a, const std::string& b) {
  auto digit = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; };
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (digit(a[i]) && digit(b[j])) {
      // Compare the digit runs by value: skip leading zeros, then longer is larger, then by digits.
      std::size_t ie = i, je = j;
      while (ie < a.size() && digit(a[ie])) ++ie;
      while (je < b.size() && digit(b[je])) ++je;
      std::size_t is = i, js = j;
      while (is + 1 < ie && a[is] == '0') ++is;
      while (js + 1 < je && b[js] == '0') ++js;
      if (ie - is != je - js) return ie - is < je - js;
      const int c = a.compare(is, ie - is, b, js, je - js);
      if (c != 0) return c < 0;
      i = ie;
      j = je;
    } else {
      if (a[i] != b[j]) return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[j]);
      ++i;
      ++j;
    }
  }
  if ((i < a.size()) != (j < b.size())) return j < b.size();  // a prefix comes first
  return a < b;
}

bool is_slice_stack(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return has_wildcard(path.filename().string());  // an existing "a[1].nii" is a file
  if (!fs::is_directory(path, ec)) return false;
  const std::vector<fs::path> files = visible_files(path);
  return std::any_of(files.begin(), files.end(), [](const fs::path& f) { return format_of(f).has_value(); });
}

std::vector<fs::path> stack_slice_files(const fs::path& stack) {
  std::error_code ec;
  const bool folder = fs::is_directory(stack, ec);
  std::vector<fs::path> files = folder ? visible_files(stack) : glob_matches(stack);
  if (files.empty())
    CARDIO_FAIL("stack of slices " << in_quotes(stack)
                                   << (folder ? ": the folder holds no files" : ": the pattern matches no file")
                                   << "; expected 2-D slices (.tif, .tiff or .png)");
  std::sort(files.begin(), files.end(), [](const fs::path& a, const fs::path& b) {
    return natural_less(a.filename().string(), b.filename().string());
  });
  check_one_format(files, stack);
  return files;
}

void write_label_stack(const LabelVolume& labels, const fs::path& folder, const std::string& extension) {
  const std::string what = "label stack";
  CARDIO_CHECK(labels.grid.n_voxels() > 0 && std::size_t(labels.grid.n_voxels()) == labels.values.size(),
               what << ": " << labels.values.size() << " values for the grid");
  if (extension != ".tif" && extension != ".png")
    CARDIO_FAIL("cannot write " << what << " " << in_quotes(folder) << ": unknown slice extension '" << extension
                                << "' (use .tif or .png)");
  if (!labels.grid.direction.isIdentity(1e-12))
    CARDIO_FAIL("cannot write " << what << " " << in_quotes(folder)
                                << ": 2-D slices cannot store a direction matrix; use .nii.gz, .mha or .nrrd");
  const auto [lo, hi] = std::minmax_element(labels.values.begin(), labels.values.end());
  if (*lo < 0 || *hi > 65535)
    CARDIO_FAIL("cannot write " << what << " " << in_quotes(folder) << ": labels " << *lo << ".." << *hi
                                << " do not fit in 16-bit slices");
  check_replaceable(folder, what);
  const fs::path tmp = folder.parent_path() / (".tmp" + std::to_string(::getpid()) + "-" + folder.filename().string());
  std::error_code ec;
  fs::remove_all(tmp, ec);
  fs::create_directories(tmp);
  try {
    if (*hi <= 255) {
      const std::vector<std::uint8_t> v(labels.values.begin(), labels.values.end());
      itk_bridge::write_slices(tmp, extension, labels.grid.size, itk_bridge::Component::u8, v.data(), what);
    } else {
      const std::vector<std::uint16_t> v(labels.values.begin(), labels.values.end());
      itk_bridge::write_slices(tmp, extension, labels.grid.size, itk_bridge::Component::u16, v.data(), what);
    }
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
  fs::remove_all(folder, ec);
  fs::rename(tmp, folder, ec);
  if (ec) CARDIO_FAIL("cannot write " << what << " " << in_quotes(folder) << ": " << ec.message());
}

}  // namespace cardio::imaging
