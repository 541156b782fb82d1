#include "itk_writers.hpp"

#include <itkGDCMImageIO.h>
#include <itkImage.h>
#include <itkImageFileWriter.h>
#include <itkImageSeriesWriter.h>
#include <itkMetaDataObject.h>
#include <itkMetaImageIO.h>
#include <itkNiftiImageIO.h>
#include <itkNrrdImageIO.h>
#include <itkNumericSeriesFileNames.h>
#include <itkPNGImageIO.h>
#include <itkRGBPixel.h>
#include <itkTIFFImageIO.h>
#include <itkVTKImageIO.h>

#include <cctype>

namespace cardio::imaging::test {

void write_dicom_series(const std::filesystem::path& dir, std::array<unsigned, 3> size_in,
                        std::array<double, 3> spacing_in, std::array<double, 3> origin_in,
                        std::array<double, 9> direction_in, const std::vector<std::int16_t>& values) {
  using Image3 = itk::Image<std::int16_t, 3>;
  using Image2 = itk::Image<std::int16_t, 2>;
  auto image = Image3::New();
  Image3::SizeType size;
  Image3::SpacingType spacing;
  Image3::PointType origin;
  Image3::DirectionType direction;
  for (unsigned a = 0; a < 3; ++a) {
    size[a] = size_in[a];
    spacing[a] = spacing_in[a];
    origin[a] = origin_in[a];
    for (unsigned r = 0; r < 3; ++r) direction(r, a) = direction_in[3 * r + a];
  }
  image->SetRegions(Image3::RegionType(size));
  image->SetSpacing(spacing);
  image->SetOrigin(origin);
  image->SetDirection(direction);
  image->Allocate();
  std::copy(values.begin(), values.end(), image->GetBufferPointer());
  auto names = itk::NumericSeriesFileNames::New();
  names->SetSeriesFormat((dir / "slice%03d.dcm").string());
  names->SetStartIndex(0);
  names->SetEndIndex(size_in[2] - 1);
  names->SetIncrementIndex(1);
  // Without a modality GDCM writes Secondary Capture objects, which carry no position/orientation.
  auto io = itk::GDCMImageIO::New();
  auto& dict = io->GetMetaDataDictionary();
  itk::EncapsulateMetaData<std::string>(dict, "0008|0060", "CT");
  itk::EncapsulateMetaData<std::string>(dict, "0008|0016", "1.2.840.10008.5.1.4.1.1.2");  // CT Image Storage
  itk::EncapsulateMetaData<std::string>(dict, "0028|0004", "MONOCHROME2");
  itk::EncapsulateMetaData<std::string>(dict, "0028|1052", "0");  // rescale intercept
  itk::EncapsulateMetaData<std::string>(dict, "0028|1053", "1");  // rescale slope
  auto writer = itk::ImageSeriesWriter<Image3, Image2>::New();
  writer->SetInput(image);
  writer->SetImageIO(io);
  writer->SetFileNames(names->GetFileNames());
  writer->Update();
}

namespace {

/// TIFF or PNG by the extension (their factories are not registered in the tests).
itk::ImageIOBase::Pointer slice_io(const std::filesystem::path& file) {
  std::string ext = file.extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (ext == ".png") return itk::PNGImageIO::New();
  return itk::TIFFImageIO::New();
}

template <class TPixel, unsigned D>
void write_image(const std::filesystem::path& file, const std::array<unsigned, D>& size_in,
                 const std::vector<TPixel>& values, itk::ImageIOBase* io) {
  using Image = itk::Image<TPixel, D>;
  auto image = Image::New();
  typename Image::SizeType size;
  for (unsigned a = 0; a < D; ++a) size[a] = size_in[a];
  image->SetRegions(typename Image::RegionType(size));
  image->Allocate();
  std::copy(values.begin(), values.end(), image->GetBufferPointer());
  auto writer = itk::ImageFileWriter<Image>::New();
  if (io) writer->SetImageIO(io);
  writer->SetInput(image);
  writer->SetFileName(file.string());
  writer->Update();
}

}  // namespace

void write_3d_image(const std::filesystem::path& file, std::array<unsigned, 3> size_in,
                    std::array<double, 3> spacing_in, std::array<double, 3> origin_in,
                    const std::vector<std::int16_t>& values) {
  using Image3 = itk::Image<std::int16_t, 3>;
  auto image = Image3::New();
  Image3::SizeType size;
  Image3::SpacingType spacing;
  Image3::PointType origin;
  for (unsigned a = 0; a < 3; ++a) {
    size[a] = size_in[a];
    spacing[a] = spacing_in[a];
    origin[a] = origin_in[a];
  }
  image->SetRegions(Image3::RegionType(size));
  image->SetSpacing(spacing);
  image->SetOrigin(origin);
  image->Allocate();
  std::copy(values.begin(), values.end(), image->GetBufferPointer());
  auto writer = itk::ImageFileWriter<Image3>::New();
  const std::string name = file.filename().string();
  if (name.ends_with(".mhd") || name.ends_with(".mha"))
    writer->SetImageIO(itk::MetaImageIO::New());
  else if (name.ends_with(".nhdr") || name.ends_with(".nrrd"))
    writer->SetImageIO(itk::NrrdImageIO::New());
  else if (name.ends_with(".vtk"))
    writer->SetImageIO(itk::VTKImageIO::New());
  else
    writer->SetImageIO(itk::NiftiImageIO::New());
  writer->SetInput(image);
  writer->SetFileName(file.string());
  writer->Update();
}

void write_slice(const std::filesystem::path& file, std::array<unsigned, 2> size,
                 const std::vector<std::uint8_t>& values) {
  write_image<std::uint8_t, 2>(file, size, values, slice_io(file));
}

void write_slice(const std::filesystem::path& file, std::array<unsigned, 2> size,
                 const std::vector<std::uint16_t>& values) {
  write_image<std::uint16_t, 2>(file, size, values, slice_io(file));
}

void write_slice(const std::filesystem::path& file, std::array<unsigned, 2> size, const std::vector<float>& values) {
  write_image<float, 2>(file, size, values, slice_io(file));
}

void write_palette_png(const std::filesystem::path& file, std::array<unsigned, 2> size,
                       const std::vector<std::uint8_t>& indices) {
  auto io = itk::PNGImageIO::New();
  itk::PNGImageIO::PaletteType palette(4);
  for (unsigned c = 0; c < 4; ++c) palette[c].Set(std::uint8_t(60 * c), std::uint8_t(255 - 60 * c), 7);
  io->SetColorPalette(palette);
  io->SetWritePalette(true);
  write_image<std::uint8_t, 2>(file, size, indices, io);
}

void write_rgb_slice(const std::filesystem::path& file, std::array<unsigned, 2> size) {
  itk::RGBPixel<std::uint8_t> p;
  p[0] = 1;
  p[1] = 2;
  p[2] = 3;
  write_image<itk::RGBPixel<std::uint8_t>, 2>(file, size, std::vector(std::size_t(size[0]) * size[1], p),
                                              slice_io(file));
}

void write_multipage_tiff(const std::filesystem::path& file, std::array<unsigned, 3> size) {
  write_image<std::uint8_t, 3>(file, size, std::vector<std::uint8_t>(std::size_t(size[0]) * size[1] * size[2], 1),
                               itk::TIFFImageIO::New());
}

void write_2d_mha(const std::filesystem::path& file) {
  using Image2 = itk::Image<std::uint8_t, 2>;
  auto image = Image2::New();
  Image2::SizeType size;
  size[0] = 4;
  size[1] = 3;
  image->SetRegions(Image2::RegionType(size));
  image->Allocate();
  image->FillBuffer(1);
  auto writer = itk::ImageFileWriter<Image2>::New();
  writer->SetImageIO(itk::MetaImageIO::New());
  writer->SetInput(image);
  writer->SetFileName(file.string());
  writer->Update();
}

void write_4d_nrrd(const std::filesystem::path& file, std::array<unsigned, 3> size3) {
  using Image4 = itk::Image<float, 4>;
  auto image = Image4::New();
  Image4::SizeType size;
  for (unsigned a = 0; a < 3; ++a) size[a] = size3[a];
  size[3] = 3;
  image->SetRegions(Image4::RegionType(size));
  Image4::SpacingType spacing;
  spacing.Fill(1.5);
  image->SetSpacing(spacing);
  image->Allocate();
  Image4::IndexType i;
  for (i[3] = 0; i[3] < 3; ++i[3])
    for (i[2] = 0; i[2] < size3[2]; ++i[2])
      for (i[1] = 0; i[1] < size3[1]; ++i[1])
        for (i[0] = 0; i[0] < size3[0]; ++i[0])
          image->SetPixel(i, float(100 * i[3] + i[0] + size3[0] * (i[1] + size3[1] * i[2])));
  auto writer = itk::ImageFileWriter<Image4>::New();
  writer->SetImageIO(itk::NrrdImageIO::New());
  writer->SetInput(image);
  writer->SetFileName(file.string());
  writer->Update();
}

}  // namespace cardio::imaging::test
