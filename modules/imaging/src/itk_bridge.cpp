// ITK side of the image IO (see itk_bridge.hpp for why no Eigen may be included here).
#include "itk_bridge.hpp"

#include <algorithm>
#include <cstring>

#include <itkGDCMImageIO.h>
#include <itkGDCMSeriesFileNames.h>
#include <itkImage.h>
#include <itkImageFileWriter.h>
#include <itkImageIOBase.h>
#include <itkImageIOFactory.h>
#include <itkImageSeriesReader.h>
#include <itkVector.h>

#include "cardio/core/error.hpp"
#include "cardio/imaging/image_stack.hpp"
#include "itk_util.hpp"
#include "vti_reader.hpp"

namespace cardio::imaging::itk_bridge {
namespace fs = std::filesystem;

namespace {

template <class TImage>
Geometry geometry_of(const TImage& image) {
  Geometry g;
  const auto size = image.GetLargestPossibleRegion().GetSize();
  for (unsigned a = 0; a < 3; ++a) {
    g.size[a] = static_cast<std::int64_t>(size[a]);
    g.spacing[a] = image.GetSpacing()[a];
    g.origin[a] = image.GetOrigin()[a];
    for (unsigned r = 0; r < 3; ++r) g.direction[3 * r + a] = image.GetDirection()(r, a);
  }
  return g;
}

std::vector<std::string> dicom_series_files(const fs::path& dir) {
  auto names = itk::GDCMSeriesFileNames::New();
  names->SetUseSeriesDetails(true);
  std::vector<std::string> uids;
  try {
    names->SetDirectory(dir.string());
    uids = names->GetSeriesUIDs();
  } catch (const itk::ExceptionObject& e) {
    CARDIO_FAIL("cannot read DICOM folder " << in_quotes(dir) << ": " << itk_message(e));
  }
  if (uids.empty())
    CARDIO_FAIL("cannot read DICOM folder " << in_quotes(dir) << ": no DICOM series found in it, and no 2-D slices "
                                            << "(.tif, .tiff, .png)");
  std::vector<std::string> files = names->GetFileNames(uids.front());
  if (files.empty()) CARDIO_FAIL("cannot read DICOM folder " << in_quotes(dir) << ": its first series has no files");
  return files;
}

template <class T>
Pixels read_series_as(const fs::path& dir, const std::vector<std::string>& files, Component c) {
  auto reader = itk::ImageSeriesReader<itk::Image<T, 3>>::New();
  reader->SetImageIO(itk::GDCMImageIO::New());
  reader->SetFileNames(files);
  try {
    reader->Update();
  } catch (const itk::ExceptionObject& e) {
    CARDIO_FAIL("cannot read DICOM series in " << in_quotes(dir) << ": " << itk_message(e));
  }
  const auto& image = *reader->GetOutput();
  const std::size_t n = image.GetLargestPossibleRegion().GetNumberOfPixels();
  Pixels p;
  p.component = c;
  p.data.resize(n * sizeof(T));
  std::memcpy(p.data.data(), image.GetBufferPointer(), p.data.size());
  return p;
}

template <class TImage>
void write_image(const TImage* image, const fs::path& tmp, const fs::path& final_file, bool compress,
                 const std::string& what) {
  auto writer = itk::ImageFileWriter<TImage>::New();
  writer->SetInput(image);
  writer->SetFileName(tmp.string());
  writer->SetUseCompression(compress);
  try {
    writer->Update();
  } catch (const itk::ExceptionObject& e) {
    CARDIO_FAIL("cannot write " << what << " " << in_quotes(final_file) << ": " << itk_message(e));
  }
}

template <class TPixel>
typename itk::Image<TPixel, 3>::Pointer make_image(const Geometry& g) {
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
    for (unsigned r = 0; r < 3; ++r) direction(r, a) = g.direction[3 * r + a];
  }
  image->SetRegions(typename ImageType::RegionType(size));
  image->SetSpacing(spacing);
  image->SetOrigin(origin);
  image->SetDirection(direction);
  image->Allocate();
  return image;
}

template <class TPixel>
void write_scalar(const fs::path& tmp, const fs::path& final_file, const Geometry& g, const void* data, bool compress,
                  const std::string& what) {
  auto image = make_image<TPixel>(g);
  std::memcpy(static_cast<void*>(image->GetBufferPointer()), data,
              image->GetLargestPossibleRegion().GetNumberOfPixels() * sizeof(TPixel));
  write_image(image.GetPointer(), tmp, final_file, compress, what);
}

}  // namespace

std::optional<Component> integer_component(std::size_t bytes, bool is_signed) {
  switch (bytes) {
    case 1:
      return is_signed ? Component::i8 : Component::u8;
    case 2:
      return is_signed ? Component::i16 : Component::u16;
    case 4:
      return is_signed ? Component::i32 : Component::u32;
    case 8:
      return is_signed ? Component::i64 : Component::u64;
    default:
      return std::nullopt;
  }
}

std::size_t component_size(Component c) {
  switch (c) {
    case Component::u8:
    case Component::i8:
      return 1;
    case Component::u16:
    case Component::i16:
      return 2;
    case Component::u32:
    case Component::i32:
    case Component::f32:
      return 4;
    case Component::u64:
    case Component::i64:
    case Component::f64:
      return 8;
  }
  return 0;
}

std::uint64_t Header::pixel_bytes() const {
  std::uint64_t n = std::uint64_t{components} * component_size(component);
  for (std::uint64_t s : sizes) n *= s;
  return n;
}

struct Reader::Impl {
  fs::path path;
  std::string what;
  Source source = Source::file;
  itk::ImageIOBase::Pointer io;          // single file
  std::vector<std::string> dicom_files;  // DICOM series
  std::vector<fs::path> slices;          // stack of 2-D slices
};

namespace {

Header dicom_header(const fs::path& dir, const std::vector<std::string>& files, const std::string& what) {
  auto io = itk::GDCMImageIO::New();
  auto reader = itk::ImageSeriesReader<itk::Image<float, 3>>::New();
  reader->SetImageIO(io);
  reader->SetFileNames(files);
  try {
    reader->UpdateOutputInformation();
  } catch (const itk::ExceptionObject& e) {
    CARDIO_FAIL("cannot read DICOM series in " << in_quotes(dir) << ": " << itk_message(e));
  }
  Header h = header_of(*io, dir, what);
  h.geometry = geometry_of(*reader->GetOutput());
  h.dimension = 3;
  h.sizes.clear();
  for (unsigned a = 0; a < 3; ++a) h.sizes.push_back(static_cast<std::uint64_t>(h.geometry.size[a]));
  return h;
}

bool has_extension(const fs::path& p, std::initializer_list<const char*> extensions) {
  std::string ext = p.extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return std::find(extensions.begin(), extensions.end(), ext) != extensions.end();
}

/// A single-file format ITK reads, with its header read.
itk::ImageIOBase::Pointer open_file(const fs::path& path, const std::string& what) {
  itk::ImageIOBase::Pointer io =
      itk::ImageIOFactory::CreateImageIO(path.string().c_str(), itk::IOFileModeEnum::ReadMode);
  if (!io && has_extension(path, {".tif", ".tiff", ".png"}))
    CARDIO_FAIL("cannot read " << what << " " << in_quotes(path) << ": a single 2-D slice is not a volume; "
                               << "give the stack of slices as their folder or a glob pattern (e.g. "
                               << in_quotes(path.parent_path() / ("*" + path.extension().string()))
                               << ") with its voxel spacing");
  if (!io)
    CARDIO_FAIL("cannot read " << what << " " << in_quotes(path) << ": not an image file in a format ITK recognises "
                               << "(NIfTI .nii/.nii.gz, MetaImage .mha/.mhd, NRRD .nrrd/.nhdr, legacy VTK .vtk, VTK "
                               << "XML .vti; as a folder: a DICOM series or 2-D TIFF/PNG slices)");
  io->SetFileName(path.string());
  try {
    io->ReadImageInformation();
  } catch (const itk::ExceptionObject& e) {
    CARDIO_FAIL("cannot read " << what << " " << in_quotes(path) << ": unreadable image header (" << itk_message(e)
                               << ")");
  } catch (const std::exception& e) {
    CARDIO_FAIL("cannot read " << what << " " << in_quotes(path) << ": unreadable image header (" << e.what() << ")");
  }
  return io;
}

}  // namespace

Reader::Reader(const fs::path& path, const std::string& what) : impl_(std::make_unique<Impl>()) {
  register_factories();
  impl_->path = path;
  impl_->what = what;
  Impl& m = *impl_;
  std::error_code ec;
  if (is_slice_stack(path)) {
    m.source = Source::slice_stack;
    m.slices = stack_slice_files(path);
    header_ = stack_header(m.slices, path, what);
  } else if (!fs::exists(path, ec)) {
    CARDIO_FAIL("cannot read " << what << " " << in_quotes(path) << ": no such file");
  } else if (fs::is_directory(path, ec)) {
    m.source = Source::dicom_series;
    m.dicom_files = dicom_series_files(path);
    header_ = dicom_header(path, m.dicom_files, what);
  } else if (has_extension(path, {".vti"})) {
    m.source = Source::vti;
    header_ = vti::read_header(path, what);
  } else {
    m.io = open_file(path, what);
    header_ = header_of(*m.io, path, what);
  }
}

Reader::~Reader() = default;

Reader::Source Reader::source() const { return impl_->source; }

Pixels Reader::read() {
  const fs::path& path = impl_->path;
  if (impl_->source == Source::slice_stack) return read_stack(impl_->slices, header_, path, impl_->what);
  if (impl_->source == Source::vti) return vti::read_pixels(path, header_, impl_->what);
  if (impl_->source == Source::dicom_series) {
    // Small integer types read as int32; wider or rescaled (floating) values as double, so the
    // caller can check integrality and range.
    switch (header_.component) {
      case Component::u8:
      case Component::i8:
      case Component::u16:
      case Component::i16:
      case Component::i32:
        return read_series_as<std::int32_t>(path, impl_->dicom_files, Component::i32);
      default:
        return read_series_as<double>(path, impl_->dicom_files, Component::f64);
    }
  }
  itk::ImageIOBase& io = *impl_->io;
  itk::ImageIORegion region(header_.dimension);
  for (unsigned a = 0; a < header_.dimension; ++a) {
    region.SetIndex(a, 0);
    region.SetSize(a, static_cast<itk::SizeValueType>(header_.sizes[a]));
  }
  io.SetIORegion(region);
  Pixels p;
  p.component = header_.component;
  p.data.resize(static_cast<std::size_t>(io.GetImageSizeInBytes()));
  CARDIO_CHECK(p.data.size() == header_.pixel_bytes(),
               "ITK image size " << p.data.size() << " bytes, expected " << header_.pixel_bytes());
  try {
    io.Read(p.data.data());
  } catch (const itk::ExceptionObject& e) {
    CARDIO_FAIL("cannot read " << impl_->what << " " << in_quotes(path)
                               << ": the pixel data are unreadable or truncated (" << itk_message(e) << ")");
  } catch (const std::exception& e) {
    CARDIO_FAIL("cannot read " << impl_->what << " " << in_quotes(path)
                               << ": the pixel data are unreadable or truncated (" << e.what() << ")");
  }
  return p;
}

void write(const fs::path& tmp, const fs::path& final_file, const Geometry& g, Component component, unsigned components,
           const void* data, bool compress, const std::string& what) {
  register_factories();
  if (components == 3) {
    CARDIO_CHECK(component == Component::f32, "vector images are written as float");
    using Pixel = itk::Vector<float, 3>;
    static_assert(sizeof(Pixel) == 3 * sizeof(float));
    write_scalar<Pixel>(tmp, final_file, g, data, compress, what);
    return;
  }
  CARDIO_CHECK(components == 1, "unsupported number of components " << components);
  switch (component) {
    case Component::u8:
      write_scalar<std::uint8_t>(tmp, final_file, g, data, compress, what);
      break;
    case Component::i16:
      write_scalar<std::int16_t>(tmp, final_file, g, data, compress, what);
      break;
    case Component::i32:
      write_scalar<std::int32_t>(tmp, final_file, g, data, compress, what);
      break;
    case Component::f32:
      write_scalar<float>(tmp, final_file, g, data, compress, what);
      break;
    default:
      CARDIO_CHECK(false, "unsupported component type for writing");
  }
}

}  // namespace cardio::imaging::itk_bridge
