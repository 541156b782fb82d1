// ITK side of the stacks of 2-D slices (image_stack.hpp): every slice's header is checked, then
// the pixels are read slice by slice straight into one buffer (no second full-size copy, as
// itk::ImageSeriesReader's output would need, and a failure names its slice).
#include <itkImage.h>
#include <itkImageFileWriter.h>
#include <itkPNGImageIO.h>
#include <itkTIFFImageIO.h>

#include <algorithm>
#include <cctype>

#include "cardio/core/error.hpp"
#include "itk_util.hpp"

namespace cardio::imaging::itk_bridge {
namespace fs = std::filesystem;

namespace {

bool is_png(const fs::path& file) {
  std::string ext = file.extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext == ".png";
}

/// The IO of the stack's format (image_stack.cpp has checked that all slices share it). Palette
/// (indexed-colour) slices are read as their indices: those are the labels.
itk::ImageIOBase::Pointer slice_io(const fs::path& file) {
  itk::ImageIOBase::Pointer io;
  if (is_png(file))
    io = itk::PNGImageIO::New();
  else
    io = itk::TIFFImageIO::New();
  io->SetExpandRGBPalette(false);
  return io;
}

std::string size_text(const Header& h) {
  std::string s;
  for (std::size_t a = 0; a < h.sizes.size(); ++a) {
    if (a) s.push_back('x');  // appended: GCC 12 warns (-Wrestrict, PR 105329) on "x" + str
    s.append(std::to_string(h.sizes[a]));
  }
  return s;
}

/// The header of one slice, checked to be a 2-D image of one integer component.
Header slice_header(const fs::path& file, const fs::path& stack, const std::string& what) {
  itk::ImageIOBase::Pointer io = slice_io(file);
  const std::string kind = is_png(file) ? "PNG" : "TIFF";
  const std::string where = "stack of slices " + in_quotes(stack) + ": slice " + in_quotes(file.filename());
  if (!io->CanReadFile(file.string().c_str())) CARDIO_FAIL(where << " is not a readable " << kind << " image");
  io->SetFileName(file.string());
  try {
    io->ReadImageInformation();
  } catch (const itk::ExceptionObject& e) {
    CARDIO_FAIL(where << ": unreadable " << kind << " header (" << itk_message(e) << ")");
  }
  Header h = header_of(*io, file, what);
  const bool flat = h.dimension == 2 || (h.dimension == 3 && h.sizes[2] == 1);
  if (!flat)
    CARDIO_FAIL(where << " is a " << h.dimension << "-D image (size " << size_text(h)
                      << "); a stack needs 2-D slices, one image per file");
  if (h.components != 1)
    CARDIO_FAIL(where << " has " << h.components << " components per pixel (" << h.pixel_type
                      << "); label slices must be grey-scale, one integer label per pixel");
  if (h.component == Component::f32 || h.component == Component::f64)
    CARDIO_FAIL(where << " stores " << h.component_type
                      << " pixels; label slices must store integers (8, 16 or 32 bits)");
  return h;
}

template <class T>
void write_slices_as(const fs::path& folder, const std::string& extension, const std::array<std::int64_t, 3>& size,
                     const T* data, const std::string& what) {
  using Image2 = itk::Image<T, 2>;
  typename Image2::SizeType slice_size;
  slice_size[0] = static_cast<itk::SizeValueType>(size[0]);
  slice_size[1] = static_cast<itk::SizeValueType>(size[1]);
  const auto n = static_cast<std::size_t>(size[0] * size[1]);
  const std::size_t digits = std::max<std::size_t>(4, std::to_string(size[2] - 1).size());
  for (std::int64_t k = 0; k < size[2]; ++k) {
    auto image = Image2::New();
    image->SetRegions(typename Image2::RegionType(slice_size));
    image->Allocate();
    std::copy(data + std::size_t(k) * n, data + std::size_t(k + 1) * n, image->GetBufferPointer());
    std::string number = std::to_string(k);
    number.insert(0, digits - number.size(), '0');  // zero-padded: plain and natural order agree
    const fs::path file = folder / ("slice_" + number + extension);
    auto writer = itk::ImageFileWriter<Image2>::New();
    writer->SetImageIO(slice_io(file));
    writer->SetInput(image);
    writer->SetFileName(file.string());
    try {
      writer->Update();
    } catch (const itk::ExceptionObject& e) {
      CARDIO_FAIL("cannot write " << what << " slice " << in_quotes(file) << ": " << itk_message(e));
    }
  }
}

}  // namespace

void write_slices(const fs::path& folder, const std::string& extension, const std::array<std::int64_t, 3>& size,
                  Component component, const void* data, const std::string& what) {
  if (component == Component::u8)
    write_slices_as(folder, extension, size, static_cast<const std::uint8_t*>(data), what);
  else if (component == Component::u16)
    write_slices_as(folder, extension, size, static_cast<const std::uint16_t*>(data), what);
  else
    CARDIO_CHECK(false, "slices are written as uint8 or uint16");
}

Header stack_header(const std::vector<fs::path>& slices, const fs::path& stack, const std::string& what) {
  CARDIO_CHECK(!slices.empty(), "a stack without slices");
  Header first = slice_header(slices.front(), stack, what);
  for (std::size_t k = 1; k < slices.size(); ++k) {
    const Header h = slice_header(slices[k], stack, what);
    if (h.sizes[0] != first.sizes[0] || h.sizes[1] != first.sizes[1])
      CARDIO_FAIL("stack of slices " << in_quotes(stack) << ": slice " << in_quotes(slices[k].filename()) << " is "
                                     << h.sizes[0] << "x" << h.sizes[1] << " pixels but the first slice "
                                     << in_quotes(slices.front().filename()) << " is " << first.sizes[0] << "x"
                                     << first.sizes[1] << "; every slice must have the same size");
    if (h.component != first.component)
      CARDIO_FAIL("stack of slices " << in_quotes(stack) << ": slice " << in_quotes(slices[k].filename()) << " stores "
                                     << h.component_type << " pixels but the first slice "
                                     << in_quotes(slices.front().filename()) << " stores " << first.component_type
                                     << "; every slice must have the same pixel type");
  }
  Header h = first;
  h.dimension = 3;
  h.sizes = {first.sizes[0], first.sizes[1], slices.size()};
  h.geometry = Geometry{};  // the caller gives spacing and origin; the direction is the identity
  for (unsigned a = 0; a < 3; ++a) h.geometry.size[a] = static_cast<std::int64_t>(h.sizes[a]);
  return h;
}

Pixels read_stack(const std::vector<fs::path>& slices, const Header& header, const fs::path& stack,
                  const std::string& what) {
  Pixels p;
  p.component = header.component;
  p.data.resize(static_cast<std::size_t>(header.pixel_bytes()));
  const std::size_t slice_bytes = p.data.size() / slices.size();
  for (std::size_t k = 0; k < slices.size(); ++k) {
    itk::ImageIOBase::Pointer io = slice_io(slices[k]);
    io->SetFileName(slices[k].string());
    try {
      io->ReadImageInformation();
      itk::ImageIORegion region(io->GetNumberOfDimensions());
      for (unsigned a = 0; a < io->GetNumberOfDimensions(); ++a) region.SetSize(a, io->GetDimensions(a));
      io->SetIORegion(region);
      CARDIO_CHECK(static_cast<std::size_t>(io->GetImageSizeInBytes()) == slice_bytes,
                   "slice " << slices[k].string() << " changed size while the stack was read");
      io->Read(p.data.data() + k * slice_bytes);
    } catch (const itk::ExceptionObject& e) {
      CARDIO_FAIL("cannot read " << what << " " << in_quotes(stack) << ": the pixels of slice "
                                 << in_quotes(slices[k].filename()) << " are unreadable or truncated ("
                                 << itk_message(e) << ")");
    }
  }
  return p;
}

}  // namespace cardio::imaging::itk_bridge
