#include "cardio/imaging/image_io.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <cstring>
#include <limits>
#include <mutex>
#include <numbers>
#include <sstream>
#include <type_traits>
#include <utility>

#include <itkGDCMImageIO.h>
#include <itkGDCMImageIOFactory.h>
#include <itkGDCMSeriesFileNames.h>
#include <itkImage.h>
#include <itkImageFileWriter.h>
#include <itkImageIOBase.h>
#include <itkImageIOFactory.h>
#include <itkImageSeriesReader.h>
#include <itkMetaImageIOFactory.h>
#include <itkNiftiImageIOFactory.h>
#include <itkNrrdImageIOFactory.h>
#include <itkVTKImageIOFactory.h>
#include <itkVector.h>

#include "cardio/core/error.hpp"
#include "cardio/imaging/memory.hpp"

namespace cardio::imaging {
namespace fs = std::filesystem;

namespace {

using IOComponent = itk::IOComponentEnum;

/// Registered explicitly (not through ITK_USE_FILE's generated manager) so that the readers work
/// whatever the consuming target's CMake does.
void register_factories() {
  static std::once_flag once;
  std::call_once(once, [] {
    itk::NiftiImageIOFactory::RegisterOneFactory();
    itk::MetaImageIOFactory::RegisterOneFactory();
    itk::NrrdImageIOFactory::RegisterOneFactory();
    itk::VTKImageIOFactory::RegisterOneFactory();
    itk::GDCMImageIOFactory::RegisterOneFactory();
  });
}

std::string quoted(const fs::path& p) { return "'" + p.string() + "'"; }

std::string itk_message(const itk::ExceptionObject& e) {
  std::string s = e.GetDescription();
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  return s;
}

/// Calls f(T{}) with the C++ type of an ITK component type.
template <class F>
void dispatch_component(IOComponent type, const fs::path& file, F&& f) {
  switch (type) {
    case IOComponent::UCHAR: f(std::uint8_t{}); break;
    case IOComponent::CHAR: f(std::int8_t{}); break;
    case IOComponent::USHORT: f(std::uint16_t{}); break;
    case IOComponent::SHORT: f(std::int16_t{}); break;
    case IOComponent::UINT: f(std::uint32_t{}); break;
    case IOComponent::INT: f(std::int32_t{}); break;
    case IOComponent::ULONG: f(static_cast<unsigned long>(0)); break;
    case IOComponent::LONG: f(0L); break;
    case IOComponent::ULONGLONG: f(0ULL); break;
    case IOComponent::LONGLONG: f(0LL); break;
    case IOComponent::FLOAT: f(0.0f); break;
    case IOComponent::DOUBLE: f(0.0); break;
    default:
      CARDIO_FAIL("cannot read " << quoted(file) << ": unsupported pixel component type "
                                 << itk::ImageIOBase::GetComponentTypeAsString(type));
  }
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

/// Origin/spacing/direction must describe a usable grid (positive spacing, orthonormal axes).
void validate_geometry(const Grid& g, const fs::path& file) {
  for (int a = 0; a < 3; ++a)
    if (!(std::isfinite(g.spacing[a]) && g.spacing[a] > 0))
      CARDIO_FAIL("image " << quoted(file) << " has an invalid spacing (" << g.spacing.transpose() << ") mm");
  if (!g.origin.allFinite()) CARDIO_FAIL("image " << quoted(file) << " has a non-finite origin");
  const double err = (g.direction.transpose() * g.direction - Eigen::Matrix3d::Identity()).cwiseAbs().maxCoeff();
  if (!(err < 1e-3))
    CARDIO_FAIL("image " << quoted(file) << " has a direction matrix that is not orthonormal (|D^T D - I| = " << err
                         << ")");
}

ImageInfo info_from_io(itk::ImageIOBase& io) {
  ImageInfo info;
  info.dimension = io.GetNumberOfDimensions();
  for (unsigned a = 0; a < info.dimension; ++a) info.sizes.push_back(io.GetDimensions(a));
  const unsigned n = std::min(info.dimension, 3u);
  for (unsigned a = 0; a < n; ++a) {
    info.grid.size[a] = static_cast<std::int64_t>(io.GetDimensions(a));
    info.grid.spacing[a] = io.GetSpacing(a);
    info.grid.origin[a] = io.GetOrigin(a);
    const std::vector<double> axis = io.GetDirection(a);  // column a of ITK's direction matrix
    for (unsigned r = 0; r < n && r < axis.size(); ++r) info.grid.direction(r, a) = axis[r];
  }
  info.components = io.GetNumberOfComponents();
  info.component_type = itk::ImageIOBase::GetComponentTypeAsString(io.GetComponentType());
  info.pixel_type = itk::ImageIOBase::GetPixelTypeAsString(io.GetPixelType());
  info.bytes_per_component = io.GetComponentSize();
  return info;
}

/// An opened image file: its ImageIO with the header read.
itk::ImageIOBase::Pointer open_image(const fs::path& file, const std::string& what) {
  register_factories();
  std::error_code ec;
  if (!fs::exists(file, ec)) CARDIO_FAIL("cannot read " << what << " " << quoted(file) << ": no such file");
  if (fs::is_directory(file, ec))
    CARDIO_FAIL("cannot read " << what << " " << quoted(file) << ": is a folder (only label images are read from "
                               << "DICOM series folders)");
  itk::ImageIOBase::Pointer io =
      itk::ImageIOFactory::CreateImageIO(file.string().c_str(), itk::IOFileModeEnum::ReadMode);
  if (!io)
    CARDIO_FAIL("cannot read " << what << " " << quoted(file) << ": not an image file in a format ITK recognises "
                               << "(NIfTI .nii/.nii.gz, MetaImage .mha/.mhd, NRRD .nrrd/.nhdr, VTK .vtk, DICOM)");
  io->SetFileName(file.string());
  try {
    io->ReadImageInformation();
  } catch (const itk::ExceptionObject& e) {
    CARDIO_FAIL("cannot read " << what << " " << quoted(file) << ": unreadable image header (" << itk_message(e)
                               << ")");
  } catch (const std::exception& e) {
    CARDIO_FAIL("cannot read " << what << " " << quoted(file) << ": unreadable image header (" << e.what() << ")");
  }
  return io;
}

/// All pixels as stored (components interleaved, axis 0 fastest), in native byte order.
std::vector<std::byte> read_pixels(itk::ImageIOBase& io, const ImageInfo& info, const fs::path& file,
                                   const std::string& what, std::uint64_t extra_bytes) {
  check_fits_in_memory(info.pixel_bytes() + extra_bytes, "reading " + what + " " + quoted(file));
  itk::ImageIORegion region(info.dimension);
  for (unsigned a = 0; a < info.dimension; ++a) {
    region.SetIndex(a, 0);
    region.SetSize(a, static_cast<itk::SizeValueType>(info.sizes[a]));
  }
  io.SetIORegion(region);
  std::vector<std::byte> buffer(static_cast<std::size_t>(io.GetImageSizeInBytes()));
  try {
    io.Read(buffer.data());
  } catch (const itk::ExceptionObject& e) {
    CARDIO_FAIL("cannot read " << what << " " << quoted(file) << ": the pixel data are unreadable or truncated ("
                               << itk_message(e) << ")");
  } catch (const std::exception& e) {
    CARDIO_FAIL("cannot read " << what << " " << quoted(file) << ": the pixel data are unreadable or truncated ("
                               << e.what() << ")");
  }
  return buffer;
}

template <class T>
T load(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

/// Stored axes beyond the third must have size 1 (e.g. 4-D NIfTI with one time point).
void require_3d(const ImageInfo& info, const fs::path& file, const std::string& what, unsigned allowed_dims = 3) {
  if (info.dimension < 3)
    CARDIO_FAIL("cannot read " << what << " " << quoted(file) << ": it is a " << info.dimension << "-D image (size "
                               << size_text(info.sizes) << "); a " << what << " must be 3-D");
  for (unsigned a = allowed_dims; a < info.dimension; ++a)
    if (info.sizes[a] != 1)
      CARDIO_FAIL("cannot read " << what << " " << quoted(file) << ": it is a " << info.dimension
                                 << "-D image (size " << size_text(info.sizes) << "); a " << what << " must be 3-D");
}

/// Label conversion with integrality and range checks.
template <class T>
void convert_labels(const std::byte* data, std::size_t stride, LabelVolume& out, const fs::path& file) {
  const std::size_t n = out.values.size();
  for (std::size_t i = 0; i < n; ++i) {
    const T v = load<T>(data + i * stride);
    if constexpr (std::is_floating_point_v<T>) {
      if (!(std::isfinite(v) && v == std::floor(v)))
        CARDIO_FAIL("label image " << quoted(file) << " has a non-integral value " << v << " at voxel "
                                   << index_text(out.grid, static_cast<std::int64_t>(i))
                                   << "; labels must be integers");
      if (v < double(std::numeric_limits<std::int32_t>::min()) || v > double(std::numeric_limits<std::int32_t>::max()))
        CARDIO_FAIL("label image " << quoted(file) << " has a label " << v << " out of the int32 range at voxel "
                                   << index_text(out.grid, static_cast<std::int64_t>(i)));
    } else if constexpr (!std::is_same_v<T, std::int32_t> && sizeof(T) >= 4) {
      if (!std::in_range<std::int32_t>(v))
        CARDIO_FAIL("label image " << quoted(file) << " has a label " << v << " out of the int32 range at voxel "
                                   << index_text(out.grid, static_cast<std::int64_t>(i)));
    }
    out.values[i] = static_cast<std::int32_t>(v);
  }
}

// ---------------------------------------------------------------- DICOM series

bool is_dicom_dir(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}

std::vector<std::string> dicom_series_files(const fs::path& dir) {
  register_factories();
  auto names = itk::GDCMSeriesFileNames::New();
  names->SetUseSeriesDetails(true);
  std::vector<std::string> uids;
  try {
    names->SetDirectory(dir.string());
    uids = names->GetSeriesUIDs();
  } catch (const itk::ExceptionObject& e) {
    CARDIO_FAIL("cannot read DICOM folder " << quoted(dir) << ": " << itk_message(e));
  }
  if (uids.empty()) CARDIO_FAIL("cannot read DICOM folder " << quoted(dir) << ": no DICOM series found in it");
  std::vector<std::string> files = names->GetFileNames(uids.front());
  if (files.empty()) CARDIO_FAIL("cannot read DICOM folder " << quoted(dir) << ": the first series has no files");
  return files;
}

template <class T>
typename itk::ImageSeriesReader<itk::Image<T, 3>>::Pointer dicom_reader(const std::vector<std::string>& files,
                                                                        itk::GDCMImageIO* io) {
  auto reader = itk::ImageSeriesReader<itk::Image<T, 3>>::New();
  reader->SetImageIO(io);
  reader->SetFileNames(files);
  return reader;
}

template <class TImage>
Grid grid_of(const TImage& image) {
  Grid g;
  const auto size = image.GetLargestPossibleRegion().GetSize();
  for (int a = 0; a < 3; ++a) {
    g.size[a] = static_cast<std::int64_t>(size[a]);
    g.spacing[a] = image.GetSpacing()[a];
    g.origin[a] = image.GetOrigin()[a];
    for (int r = 0; r < 3; ++r) g.direction(r, a) = image.GetDirection()(r, a);
  }
  return g;
}

/// Header of a DICOM series (geometry of the whole stack); `type` receives the component type.
ImageInfo dicom_info(const fs::path& dir, const std::vector<std::string>& files, IOComponent* type = nullptr) {
  auto io = itk::GDCMImageIO::New();
  auto reader = dicom_reader<float>(files, io);
  try {
    reader->UpdateOutputInformation();
  } catch (const itk::ExceptionObject& e) {
    CARDIO_FAIL("cannot read DICOM series in " << quoted(dir) << ": " << itk_message(e));
  }
  ImageInfo info;
  info.grid = grid_of(*reader->GetOutput());
  info.dimension = 3;
  for (int a = 0; a < 3; ++a) info.sizes.push_back(static_cast<std::uint64_t>(info.grid.size[a]));
  info.components = io->GetNumberOfComponents();
  info.component_type = itk::ImageIOBase::GetComponentTypeAsString(io->GetComponentType());
  info.pixel_type = itk::ImageIOBase::GetPixelTypeAsString(io->GetPixelType());
  info.bytes_per_component = io->GetComponentSize();
  if (type) *type = io->GetComponentType();
  return info;
}

template <class T>
LabelVolume read_dicom_labels_as(const fs::path& dir, const std::vector<std::string>& files) {
  auto io = itk::GDCMImageIO::New();
  auto reader = dicom_reader<T>(files, io);
  try {
    reader->Update();
  } catch (const itk::ExceptionObject& e) {
    CARDIO_FAIL("cannot read DICOM series in " << quoted(dir) << ": " << itk_message(e));
  }
  const auto& image = *reader->GetOutput();
  LabelVolume out;
  out.grid = grid_of(image);
  validate_geometry(out.grid, dir);
  out.values.resize(static_cast<std::size_t>(out.grid.n_voxels()));
  convert_labels<T>(reinterpret_cast<const std::byte*>(image.GetBufferPointer()), sizeof(T), out, dir);
  return out;
}

LabelVolume read_dicom_labels(const fs::path& dir) {
  const auto files = dicom_series_files(dir);
  IOComponent type = IOComponent::UNKNOWNCOMPONENTTYPE;
  const ImageInfo info = dicom_info(dir, files, &type);
  if (info.components != 1)
    CARDIO_FAIL("cannot read label image " << quoted(dir) << ": the DICOM series has " << info.components
                                           << " components per voxel; a label image must have 1");
  check_fits_in_memory(static_cast<std::uint64_t>(info.grid.n_voxels()) * 12, "reading label image " + quoted(dir));
  switch (type) {
    case IOComponent::UCHAR:
    case IOComponent::CHAR:
    case IOComponent::USHORT:
    case IOComponent::SHORT:
    case IOComponent::INT:
      return read_dicom_labels_as<std::int32_t>(dir, files);
    default:  // wider or floating (rescaled) values: checked for integrality and range
      return read_dicom_labels_as<double>(dir, files);
  }
}

// ---------------------------------------------------------------- writers

/// Lower-case file name.
std::string lower_name(const fs::path& p) {
  std::string s = p.filename().string();
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// Checks the output name; returns whether to ask for compression.
bool check_output_name(const fs::path& file, const Grid& grid, const std::string& what) {
  const std::string name = lower_name(file);
  for (const char* detached : {".mhd", ".nhdr", ".hdr", ".img", ".img.gz"})
    if (ends_with(name, detached))
      CARDIO_FAIL("cannot write " << what << " " << quoted(file) << ": formats with a separate data file ("
                                  << detached << ") cannot be written atomically; use .mha or .nrrd");
  const bool vtk = ends_with(name, ".vtk");
  if (!(ends_with(name, ".nii") || ends_with(name, ".nii.gz") || ends_with(name, ".mha") ||
        ends_with(name, ".nrrd") || vtk))
    CARDIO_FAIL("cannot write " << what << " " << quoted(file)
                                << ": unknown image extension (use .nii.gz, .nii, .mha, .nrrd or .vtk)");
  if (vtk && !grid.direction.isIdentity(1e-12))
    CARDIO_FAIL("cannot write " << what << " " << quoted(file)
                                << ": legacy VTK images cannot store a direction matrix; use .nii.gz, .mha or .nrrd");
  const fs::path dir = file.parent_path().empty() ? fs::path(".") : file.parent_path();
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    CARDIO_FAIL("cannot write " << what << " " << quoted(file) << ": folder " << quoted(dir) << " does not exist");
  CARDIO_CHECK(grid.n_voxels() > 0, "empty grid");
  return !(ends_with(name, ".nii") || vtk);  // .nii.gz compresses by its name; .nii and .vtk cannot
}

/// Same folder, same extension (ITK picks the format from it), hidden, unique in this process.
fs::path temp_name(const fs::path& file) {
  static std::atomic<unsigned> counter{0};
  return file.parent_path() /
         (".tmp" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + "-" + file.filename().string());
}

template <class TPixel>
typename itk::Image<TPixel, 3>::Pointer make_image(const Grid& g) {
  using ImageType = itk::Image<TPixel, 3>;
  auto image = ImageType::New();
  typename ImageType::SizeType size;
  typename ImageType::SpacingType spacing;
  typename ImageType::PointType origin;
  typename ImageType::DirectionType direction;
  for (unsigned a = 0; a < 3; ++a) {
    size[a] = static_cast<itk::SizeValueType>(g.size[a]);
    spacing[a] = g.spacing[a];
    origin[a] = g.origin[a];
    for (unsigned r = 0; r < 3; ++r) direction(r, a) = g.direction(r, a);
  }
  image->SetRegions(typename ImageType::RegionType(size));
  image->SetSpacing(spacing);
  image->SetOrigin(origin);
  image->SetDirection(direction);
  image->Allocate();
  return image;
}

template <class TImage>
void write_atomic(const TImage* image, const fs::path& file, bool compress, const std::string& what) {
  register_factories();
  const fs::path tmp = temp_name(file);
  auto writer = itk::ImageFileWriter<TImage>::New();
  writer->SetInput(image);
  writer->SetFileName(tmp.string());
  writer->SetUseCompression(compress);
  std::error_code ec;
  try {
    writer->Update();
  } catch (const itk::ExceptionObject& e) {
    fs::remove(tmp, ec);
    CARDIO_FAIL("cannot write " << what << " " << quoted(file) << ": " << itk_message(e));
  }
  fs::rename(tmp, file, ec);
  if (ec) {
    std::error_code ec2;
    fs::remove(tmp, ec2);
    CARDIO_FAIL("cannot write " << what << " " << quoted(file) << ": rename from " << quoted(tmp)
                                << " failed: " << ec.message());
  }
}

template <class TPixel, class TValue>
void write_scalar_as(const Volume<TValue>& v, const fs::path& file, bool compress, const std::string& what) {
  auto image = make_image<TPixel>(v.grid);
  TPixel* out = image->GetBufferPointer();
  for (std::size_t i = 0; i < v.values.size(); ++i) out[i] = static_cast<TPixel>(v.values[i]);
  write_atomic(image.GetPointer(), file, compress, what);
}

template <class T>
void check_sizes(const Volume<T>& v, const std::string& what) {
  CARDIO_CHECK(v.grid.n_voxels() >= 0 && static_cast<std::size_t>(v.grid.n_voxels()) == v.values.size(),
               what << ": " << v.values.size() << " values for a grid of " << v.grid.n_voxels() << " voxels");
}

}  // namespace

std::uint64_t ImageInfo::pixel_bytes() const {
  std::uint64_t n = static_cast<std::uint64_t>(components) * bytes_per_component;
  for (std::uint64_t s : sizes) n *= s;
  return n;
}

ImageInfo read_image_info(const fs::path& path) {
  if (is_dicom_dir(path)) return dicom_info(path, dicom_series_files(path));
  auto io = open_image(path, "image");
  return info_from_io(*io);
}

LabelVolume read_label_image(const fs::path& path) {
  if (is_dicom_dir(path)) return read_dicom_labels(path);
  const std::string what = "label image";
  auto io = open_image(path, what);
  const ImageInfo info = info_from_io(*io);
  require_3d(info, path, what);
  if (info.components != 1)
    CARDIO_FAIL("cannot read " << what << " " << quoted(path) << ": it has " << info.components
                               << " components per voxel (" << info.pixel_type << "); a label image must have 1");
  LabelVolume out;
  out.grid = info.grid;
  validate_geometry(out.grid, path);
  const auto n = static_cast<std::uint64_t>(out.grid.n_voxels());
  const std::vector<std::byte> buffer = read_pixels(*io, info, path, what, n * sizeof(std::int32_t));
  out.values.resize(static_cast<std::size_t>(n));
  dispatch_component(io->GetComponentType(), path, [&](auto tag) {
    using T = decltype(tag);
    CARDIO_CHECK(sizeof(T) == info.bytes_per_component, "component size mismatch");
    convert_labels<T>(buffer.data(), sizeof(T), out, path);
  });
  return out;
}

ScalarVolume read_scalar_image(const fs::path& path) {
  const std::string what = "scalar image";
  auto io = open_image(path, what);
  const ImageInfo info = info_from_io(*io);
  require_3d(info, path, what);
  if (info.components != 1)
    CARDIO_FAIL("cannot read " << what << " " << quoted(path) << ": it has " << info.components
                               << " components per voxel (" << info.pixel_type << "); a scalar image must have 1");
  ScalarVolume out;
  out.grid = info.grid;
  validate_geometry(out.grid, path);
  const auto n = static_cast<std::uint64_t>(out.grid.n_voxels());
  const std::vector<std::byte> buffer = read_pixels(*io, info, path, what, n * sizeof(float));
  out.values.resize(static_cast<std::size_t>(n));
  dispatch_component(io->GetComponentType(), path, [&](auto tag) {
    using T = decltype(tag);
    CARDIO_CHECK(sizeof(T) == info.bytes_per_component, "component size mismatch");
    for (std::size_t i = 0; i < out.values.size(); ++i)
      out.values[i] = static_cast<float>(load<T>(buffer.data() + i * sizeof(T)));
  });
  return out;
}

VectorVolume read_vector_image(const fs::path& path, VectorAxes axes) {
  const std::string what = "vector image";
  auto io = open_image(path, what);
  const ImageInfo info = info_from_io(*io);
  // Layout 1: 3 interleaved components. Layout 2: a 4-D scalar image with the components on axis 3.
  const bool component_axis = info.components == 1 && info.dimension >= 4 && info.sizes[3] == 3;
  require_3d(info, path, what, component_axis ? 4 : 3);
  if (info.components != 3 && !component_axis)
    CARDIO_FAIL("cannot read " << what << " " << quoted(path) << ": it has " << info.components
                               << " component(s) per voxel (size " << size_text(info.sizes)
                               << "); a vector image needs 3 components, or a 4-D image whose last size is 3");
  VectorVolume out;
  out.grid = info.grid;
  validate_geometry(out.grid, path);
  const auto n = static_cast<std::uint64_t>(out.grid.n_voxels());
  const std::vector<std::byte> buffer = read_pixels(*io, info, path, what, n * sizeof(Eigen::Vector3f));
  out.values.resize(static_cast<std::size_t>(n));
  const Eigen::Matrix3d d = out.grid.direction;
  dispatch_component(io->GetComponentType(), path, [&](auto tag) {
    using T = decltype(tag);
    CARDIO_CHECK(sizeof(T) == info.bytes_per_component, "component size mismatch");
    const std::size_t voxel_stride = component_axis ? sizeof(T) : 3 * sizeof(T);
    const std::size_t comp_stride = component_axis ? static_cast<std::size_t>(n) * sizeof(T) : sizeof(T);
    for (std::size_t i = 0; i < out.values.size(); ++i) {
      const std::byte* p = buffer.data() + i * voxel_stride;
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
    CARDIO_FAIL("angle maps " << quoted(azimuth_name) << " and " << quoted(elevation_name)
                              << " are not on the same grid: " << why);
  const double scale = unit == AngleUnit::degrees ? std::numbers::pi / 180.0 : 1.0;
  VectorVolume out;
  out.grid = azimuth.grid;
  out.values.resize(azimuth.values.size());
  for (std::size_t i = 0; i < out.values.size(); ++i) {
    const double a = scale * azimuth.values[i];
    const double e = scale * elevation.values[i];
    if (!std::isfinite(a) || !std::isfinite(e)) {
      out.values[i].setZero();  // no fibre here (ignored by resample_axes)
      continue;
    }
    const Eigen::Vector3d f =
        std::cos(e) * std::cos(a) * axes.col(0) + std::cos(e) * std::sin(a) * axes.col(1) + std::sin(e) * axes.col(2);
    out.values[i] = f.cast<float>();
  }
  return out;
}

void write_label_image(const LabelVolume& labels, const fs::path& file) {
  const std::string what = "label image";
  check_sizes(labels, what);
  const bool compress = check_output_name(file, labels.grid, what);
  std::int32_t lo = 0, hi = 0;
  if (!labels.values.empty()) {
    const auto [mn, mx] = std::minmax_element(labels.values.begin(), labels.values.end());
    lo = *mn;
    hi = *mx;
  }
  if (lo >= 0 && hi <= 255)
    write_scalar_as<std::uint8_t>(labels, file, compress, what);
  else if (lo >= std::numeric_limits<std::int16_t>::min() && hi <= std::numeric_limits<std::int16_t>::max())
    write_scalar_as<std::int16_t>(labels, file, compress, what);
  else
    write_scalar_as<std::int32_t>(labels, file, compress, what);
}

void write_scalar_image(const ScalarVolume& values, const fs::path& file) {
  const std::string what = "scalar image";
  check_sizes(values, what);
  const bool compress = check_output_name(file, values.grid, what);
  write_scalar_as<float>(values, file, compress, what);
}

void write_vector_image(const VectorVolume& vectors, const fs::path& file) {
  const std::string what = "vector image";
  check_sizes(vectors, what);
  const bool compress = check_output_name(file, vectors.grid, what);
  using Pixel = itk::Vector<float, 3>;
  auto image = make_image<Pixel>(vectors.grid);
  Pixel* out = image->GetBufferPointer();
  for (std::size_t i = 0; i < vectors.values.size(); ++i)
    for (unsigned c = 0; c < 3; ++c) out[i][c] = vectors.values[i][c];
  write_atomic(image.GetPointer(), file, compress, what);
}

}  // namespace cardio::imaging
