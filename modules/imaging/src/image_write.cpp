// Image IO, Eigen side: atomic writes of label, scalar and vector images (ITK writes through
// itk_bridge.cpp; the two cannot share a translation unit, see itk_bridge.hpp).
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <utility>
#include <vector>

#include "cardio/core/error.hpp"
#include "cardio/imaging/image_io.hpp"
#include "image_io_common.hpp"
#include "itk_bridge.hpp"

namespace cardio::imaging {
namespace fs = std::filesystem;

namespace {

using itk_bridge::Component;

std::string lower_name(const fs::path& p) {
  std::string s = p.filename().string();
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// Checks the output name and grid; returns whether to ask ITK for compression.
bool check_output(const fs::path& file, const Grid& grid, const std::string& what) {
  const std::string name = lower_name(file);
  for (const char* detached : {".mhd", ".nhdr", ".hdr", ".img", ".img.gz"})
    if (ends_with(name, detached))
      CARDIO_FAIL("cannot write " << what << " " << in_quotes(file) << ": formats with a separate data file ("
                                  << detached << ") cannot be written atomically; use .mha or .nrrd");
  const bool vtk = ends_with(name, ".vtk");
  const bool nii = ends_with(name, ".nii");
  if (!(nii || vtk || ends_with(name, ".nii.gz") || ends_with(name, ".mha") || ends_with(name, ".nrrd")))
    CARDIO_FAIL("cannot write " << what << " " << in_quotes(file)
                                << ": unknown image extension (use .nii.gz, .nii, .mha, .nrrd or .vtk)");
  if (vtk && !grid.direction.isIdentity(1e-12))
    CARDIO_FAIL("cannot write " << what << " " << in_quotes(file)
                                << ": legacy VTK images cannot store a direction matrix; use .nii.gz, .mha or .nrrd");
  if (!(grid.spacing.allFinite() && grid.spacing.minCoeff() > 0 && grid.origin.allFinite()))
    CARDIO_FAIL("cannot write " << what << " " << in_quotes(file) << ": invalid spacing or origin");
  const fs::path dir = file.parent_path().empty() ? fs::path(".") : file.parent_path();
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    CARDIO_FAIL("cannot write " << what << " " << in_quotes(file) << ": folder " << in_quotes(dir)
                                << " does not exist");
  return !(nii || vtk);  // .nii.gz is compressed because of its name; .nii and legacy .vtk cannot be
}

/// Write to a hidden temporary name with the same extension in the same folder (ITK picks the
/// format from the extension; cardio::write_via_temp would append ".tmpPID"), then rename.
void write_atomic(const fs::path& file, const Grid& grid, Component component, unsigned components, const void* data,
                  bool compress, const std::string& what) {
  static std::atomic<unsigned> counter{0};
  const fs::path tmp = file.parent_path() / (".tmp" + std::to_string(::getpid()) + "-" + std::to_string(counter++) +
                                             "-" + file.filename().string());
  std::error_code ec;
  try {
    itk_bridge::write(tmp, file, geometry_of(grid), component, components, data, compress, what);
  } catch (...) {
    fs::remove(tmp, ec);
    throw;
  }
  fs::rename(tmp, file, ec);
  if (ec) {
    const std::string reason = ec.message();
    fs::remove(tmp, ec);
    CARDIO_FAIL("cannot write " << what << " " << in_quotes(file) << ": renaming " << in_quotes(tmp)
                                << " failed: " << reason);
  }
}

template <class TOut>
void write_labels_as(const LabelVolume& v, const fs::path& file, Component c, bool compress) {
  std::vector<TOut> out(v.values.begin(), v.values.end());
  write_atomic(file, v.grid, c, 1, out.data(), compress, "label image");
}

}  // namespace

void write_label_image(const LabelVolume& labels, const fs::path& file) {
  const std::string what = "label image";
  check_sizes(labels, what);
  const bool compress = check_output(file, labels.grid, what);
  const auto [lo, hi] = std::minmax_element(labels.values.begin(), labels.values.end());
  if (*lo >= 0 && *hi <= 255)
    write_labels_as<std::uint8_t>(labels, file, Component::u8, compress);
  else if (std::in_range<std::int16_t>(*lo) && std::in_range<std::int16_t>(*hi))
    write_labels_as<std::int16_t>(labels, file, Component::i16, compress);
  else
    write_atomic(file, labels.grid, Component::i32, 1, labels.values.data(), compress, what);
}

void write_scalar_image(const ScalarVolume& values, const fs::path& file) {
  const std::string what = "scalar image";
  check_sizes(values, what);
  const bool compress = check_output(file, values.grid, what);
  write_atomic(file, values.grid, Component::f32, 1, values.values.data(), compress, what);
}

void write_vector_image(const VectorVolume& vectors, const fs::path& file) {
  const std::string what = "vector image";
  check_sizes(vectors, what);
  const bool compress = check_output(file, vectors.grid, what);
  std::vector<float> flat(3 * vectors.values.size());
  for (std::size_t i = 0; i < vectors.values.size(); ++i)
    for (int c = 0; c < 3; ++c) flat[3 * i + static_cast<std::size_t>(c)] = vectors.values[i][c];
  write_atomic(file, vectors.grid, Component::f32, 3, flat.data(), compress, what);
}

}  // namespace cardio::imaging
