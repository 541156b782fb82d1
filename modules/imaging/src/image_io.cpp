// Image IO, Eigen side: validation and conversion to volumes (writers: image_write.cpp). ITK itself is only in
// itk_bridge.cpp (the two cannot share a translation unit, see itk_bridge.hpp).
#include "cardio/imaging/image_io.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <limits>
#include <numbers>
#include <optional>
#include <sstream>
#include <type_traits>
#include <utility>

#include "cardio/core/error.hpp"
#include "cardio/imaging/memory.hpp"
#include "file_checks.hpp"
#include "image_io_common.hpp"
#include "itk_bridge.hpp"

namespace cardio::imaging {
namespace fs = std::filesystem;

std::string in_quotes(const fs::path& p) {
  std::string s(1, '\'');  // built by appending: GCC 12 warns (-Wrestrict, PR 105329) on "'" + str
  s.append(p.string()).push_back('\'');
  return s;
}

itk_bridge::Geometry geometry_of(const Grid& g) {
  itk_bridge::Geometry geo;
  for (int a = 0; a < 3; ++a) {
    geo.size[a] = g.size[a];
    geo.spacing[a] = g.spacing[a];
    geo.origin[a] = g.origin[a];
    for (int r = 0; r < 3; ++r) geo.direction[3 * r + a] = g.direction(r, a);
  }
  return geo;
}

namespace {

using itk_bridge::Component;

/// Calls f(T{}) with the C++ type of a component.
template <class F>
void dispatch(Component c, F&& f) {
  switch (c) {
    case Component::u8:
      f(std::uint8_t{});
      break;
    case Component::i8:
      f(std::int8_t{});
      break;
    case Component::u16:
      f(std::uint16_t{});
      break;
    case Component::i16:
      f(std::int16_t{});
      break;
    case Component::u32:
      f(std::uint32_t{});
      break;
    case Component::i32:
      f(std::int32_t{});
      break;
    case Component::u64:
      f(std::uint64_t{});
      break;
    case Component::i64:
      f(std::int64_t{});
      break;
    case Component::f32:
      f(0.0f);
      break;
    case Component::f64:
      f(0.0);
      break;
  }
}

template <class T>
T load(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

std::string size_text(const std::vector<std::uint64_t>& sizes) {
  std::ostringstream os;
  for (std::size_t a = 0; a < sizes.size(); ++a) os << (a ? "x" : "") << sizes[a];
  return os.str();
}

std::string index_text(const Grid& g, std::int64_t linear) {
  const Index3 ijk = g.index(linear);
  std::ostringstream os;
  os << "(" << ijk[0] << ", " << ijk[1] << ", " << ijk[2] << ")";
  return os.str();
}

Grid grid_of(const itk_bridge::Geometry& geo) {
  Grid g;
  for (int a = 0; a < 3; ++a) {
    g.size[a] = geo.size[a];
    g.spacing[a] = geo.spacing[a];
    g.origin[a] = geo.origin[a];
    for (int r = 0; r < 3; ++r) g.direction(r, a) = geo.direction[3 * r + a];
  }
  return g;
}

ImageInfo info_of(const itk_bridge::Header& h) {
  ImageInfo info;
  info.grid = grid_of(h.geometry);
  info.dimension = h.dimension;
  info.sizes = h.sizes;
  info.components = h.components;
  info.component_type = h.component_type;
  info.pixel_type = h.pixel_type;
  info.bytes_per_component = itk_bridge::component_size(h.component);
  return info;
}

/// Positive spacing and orthonormal axes, as Grid assumes.
void validate_geometry(const Grid& g, const fs::path& file, const std::string& what) {
  for (int a = 0; a < 3; ++a)
    if (!(std::isfinite(g.spacing[a]) && g.spacing[a] > 0))
      CARDIO_FAIL("cannot read " << what << " " << in_quotes(file) << ": invalid spacing (" << g.spacing.transpose()
                                 << ") mm");
  if (!g.origin.allFinite()) CARDIO_FAIL("cannot read " << what << " " << in_quotes(file) << ": non-finite origin");
  const double err = (g.direction.transpose() * g.direction - Eigen::Matrix3d::Identity()).cwiseAbs().maxCoeff();
  if (!(err < 1e-3))
    CARDIO_FAIL("cannot read " << what << " " << in_quotes(file)
                               << ": the direction matrix is not orthonormal (|D^T D - I| = " << err << ")");
}

/// Stored axes from `allowed_dims` on must have size 1 (e.g. a 4-D NIfTI with one time point).
void require_3d(const ImageInfo& info, const fs::path& file, const std::string& what, unsigned allowed_dims = 3) {
  bool ok = info.dimension >= 3;
  for (unsigned a = allowed_dims; a < info.dimension; ++a) ok = ok && info.sizes[a] == 1;
  if (!ok)
    CARDIO_FAIL("cannot read " << what << " " << in_quotes(file) << ": it is a " << info.dimension << "-D image (size "
                               << size_text(info.sizes) << "); a " << what << " must be 3-D");
}

/// A stack's grid from the caller's geometry (its slices carry none); other sources unchanged.
void apply_stack_geometry(ImageInfo& info, itk_bridge::Reader::Source source, const std::optional<StackGeometry>& stack,
                          const fs::path& path, const std::string& what) {
  if (source != itk_bridge::Reader::Source::slice_stack) return;
  if (!stack)
    CARDIO_FAIL("cannot read " << what << " " << in_quotes(path) << ": a stack of " << info.grid.size[2]
                               << " 2-D slices carries no 3-D voxel spacing or origin; they must be given with it");
  for (int a = 0; a < 3; ++a) {
    info.grid.spacing[a] = stack->spacing_mm[std::size_t(a)];
    info.grid.origin[a] = stack->origin_mm[std::size_t(a)];
  }
  info.grid.direction.setIdentity();
}

/// Opens, validates dimension/geometry via `check`, checks memory, reads the pixels.
template <class Check>
std::pair<ImageInfo, itk_bridge::Pixels> read_checked(const fs::path& file, const std::string& what,
                                                      const std::optional<StackGeometry>& stack,
                                                      std::uint64_t bytes_per_output_voxel, Check&& check) {
  file_checks::check_spacing(file, what);  // first: ITK may fail on the scaled sform, less clearly
  itk_bridge::Reader reader(file, what);
  ImageInfo info = info_of(reader.header());
  apply_stack_geometry(info, reader.source(), stack, file, what);
  check(info);
  validate_geometry(info.grid, file, what);
  const auto n = static_cast<std::uint64_t>(info.grid.n_voxels());
  check_fits_in_memory(reader.header().pixel_bytes() + n * bytes_per_output_voxel,
                       "reading " + what + " " + in_quotes(file));
  if (reader.source() == itk_bridge::Reader::Source::file)
    file_checks::check_complete(file, reader.header().pixel_bytes() / info.bytes_per_component,
                                info.bytes_per_component, what);
  itk_bridge::Pixels pixels = reader.read();
  return {info, std::move(pixels)};
}

[[noreturn]] void fail_nan_label(const fs::path& file, const Grid& grid, std::uint64_t voxel) {
  CARDIO_FAIL("label image " << in_quotes(file) << " has a NaN (not a number) at voxel "
                             << index_text(grid, static_cast<std::int64_t>(voxel)) << "; labels must be integers");
}

/// Label conversion with integrality and range checks; the first offending voxel is reported.
template <class T>
void convert_labels(const std::byte* data, LabelVolume& out, const fs::path& file) {
  const std::size_t n = out.values.size();
  for (std::size_t i = 0; i < n; ++i) {
    const T v = load<T>(data + i * sizeof(T));
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(v)) fail_nan_label(file, out.grid, i);
      if (!(std::isfinite(v) && v == std::floor(v)))
        CARDIO_FAIL("label image " << in_quotes(file) << " has a non-integral value " << v << " at voxel "
                                   << index_text(out.grid, static_cast<std::int64_t>(i))
                                   << "; labels must be integers");
      if (v < double(std::numeric_limits<std::int32_t>::min()) || v > double(std::numeric_limits<std::int32_t>::max()))
        CARDIO_FAIL("label image " << in_quotes(file) << " has a label " << v << " out of the int32 range at voxel "
                                   << index_text(out.grid, static_cast<std::int64_t>(i)));
    } else if constexpr (sizeof(T) >= 4 && !std::is_same_v<T, std::int32_t>) {
      if (!std::in_range<std::int32_t>(v))
        CARDIO_FAIL("label image " << in_quotes(file) << " has a label " << v << " out of the int32 range at voxel "
                                   << index_text(out.grid, static_cast<std::int64_t>(i)));
    }
    out.values[i] = static_cast<std::int32_t>(v);
  }
}

}  // namespace

std::uint64_t ImageInfo::pixel_bytes() const {
  std::uint64_t n = std::uint64_t{components} * bytes_per_component;
  for (std::uint64_t s : sizes) n *= s;
  return n;
}

ImageInfo read_image_info(const fs::path& path, const std::optional<StackGeometry>& stack) {
  file_checks::check_spacing(path, "image");
  itk_bridge::Reader reader(path, "image");
  ImageInfo info = info_of(reader.header());
  apply_stack_geometry(info, reader.source(), stack, path, "image");
  return info;
}

namespace {

/// A 3-D image of one component per voxel, read whole into `Volume` (its grid and values):
/// `convert(tag, bytes, out)` turns the file's pixels (type of `tag`) into out.values.
template <class Volume, class Convert>
Volume read_one_component(const fs::path& path, const std::string& what, const std::optional<StackGeometry>& stack,
                          Convert convert) {
  using Value = typename decltype(Volume::values)::value_type;
  auto loaded = read_checked(path, what, stack, sizeof(Value), [&](const ImageInfo& i) {
    require_3d(i, path, what);
    if (i.components != 1)
      CARDIO_FAIL("cannot read " << what << " " << in_quotes(path) << ": it has " << i.components
                                 << " components per voxel (" << i.pixel_type << "); a " << what << " must have 1");
  });
  const itk_bridge::Pixels& pixels = loaded.second;
  Volume out;
  out.grid = loaded.first.grid;
  out.values.resize(static_cast<std::size_t>(out.grid.n_voxels()));
  dispatch(pixels.component, [&](auto tag) {
    using T = decltype(tag);
    CARDIO_CHECK(pixels.data.size() == out.values.size() * sizeof(T), "pixel buffer size mismatch");
    convert(tag, pixels.data.data(), out);
  });
  return out;
}

}  // namespace

LabelVolume read_label_image(const fs::path& path, const std::optional<StackGeometry>& stack) {
  LabelVolume out = read_one_component<LabelVolume>(
      path, "label image", stack,
      [&](auto tag, const auto* bytes, auto& v) { convert_labels<decltype(tag)>(bytes, v, path); });
  // NIfTI: the library has read every NaN as 0 (a label, often the background).
  if (const auto nan = file_checks::non_finite_values(path); !nan.empty()) fail_nan_label(path, out.grid, nan[0]);
  return out;
}

ScalarVolume read_scalar_image(const fs::path& path) {
  ScalarVolume out =
      read_one_component<ScalarVolume>(path, "scalar image", std::nullopt, [](auto tag, const auto* bytes, auto& v) {
        using T = decltype(tag);
        for (std::size_t i = 0; i < v.values.size(); ++i)
          v.values[i] = static_cast<float>(load<T>(bytes + i * sizeof(T)));
      });
  // NIfTI: the NaN the library read as 0 are NaN again (e.g. an angle map's voxels without a fibre).
  for (const std::uint64_t i : file_checks::non_finite_values(path))
    if (i < out.values.size()) out.values[i] = std::numeric_limits<float>::quiet_NaN();
  return out;
}

VectorVolume read_vector_image(const fs::path& path, VectorAxes axes) {
  const std::string what = "vector image";
  bool component_axis = false;
  auto loaded = read_checked(path, what, std::nullopt, sizeof(Eigen::Vector3f), [&](const ImageInfo& i) {
    // Layout 1: 3 interleaved components. Layout 2: a 4-D scalar image, components along axis 3.
    component_axis = i.components == 1 && i.dimension >= 4 && i.sizes[3] == 3;
    require_3d(i, path, what, component_axis ? 4 : 3);
    if (i.components != 3 && !component_axis)
      CARDIO_FAIL("cannot read " << what << " " << in_quotes(path) << ": it has " << i.components
                                 << " component(s) per voxel (size " << size_text(i.sizes)
                                 << "); a vector image needs 3 components, or a 4-D image whose last size is 3");
  });
  const ImageInfo& info = loaded.first;
  const itk_bridge::Pixels& pixels = loaded.second;
  VectorVolume out;
  out.grid = info.grid;
  const auto n = static_cast<std::size_t>(out.grid.n_voxels());
  out.values.resize(n);
  const Eigen::Matrix3d d = out.grid.direction;
  dispatch(pixels.component, [&](auto tag) {
    using T = decltype(tag);
    CARDIO_CHECK(pixels.data.size() == 3 * n * sizeof(T), "pixel buffer size mismatch");
    const std::size_t voxel_stride = component_axis ? sizeof(T) : 3 * sizeof(T);
    const std::size_t comp_stride = component_axis ? n * sizeof(T) : sizeof(T);
    for (std::size_t i = 0; i < n; ++i) {
      const std::byte* p = pixels.data.data() + i * voxel_stride;
      Eigen::Vector3d v(double(load<T>(p)), double(load<T>(p + comp_stride)), double(load<T>(p + 2 * comp_stride)));
      if (axes == VectorAxes::index) v = d * v;
      out.values[i] = v.cast<float>();
    }
  });
  return out;
}

VectorVolume fibres_from_angles(const ScalarVolume& azimuth, const ScalarVolume& elevation, AngleUnit unit,
                                const Eigen::Matrix3d& axes, const std::string& azimuth_name,
                                const std::string& elevation_name) {
  check_sizes(azimuth, azimuth_name);
  check_sizes(elevation, elevation_name);
  std::string why;
  if (!same_grid(azimuth.grid, elevation.grid, &why))
    CARDIO_FAIL("angle maps " << in_quotes(azimuth_name) << " and " << in_quotes(elevation_name)
                              << " are not on the same grid: " << why);
  const double scale = unit == AngleUnit::degrees ? std::numbers::pi / 180.0 : 1.0;
  VectorVolume out;
  out.grid = azimuth.grid;
  out.values.resize(azimuth.values.size());
  for (std::size_t i = 0; i < out.values.size(); ++i) {
    const double a = scale * azimuth.values[i];
    const double e = scale * elevation.values[i];
    if (!std::isfinite(a) || !std::isfinite(e)) {
      out.values[i].setZero();  // no fibre here; resample_axes ignores zero vectors
      continue;
    }
    const Eigen::Vector3d f =
        std::cos(e) * std::cos(a) * axes.col(0) + std::cos(e) * std::sin(a) * axes.col(1) + std::sin(e) * axes.col(2);
    out.values[i] = f.cast<float>();
  }
  return out;
}

}  // namespace cardio::imaging
