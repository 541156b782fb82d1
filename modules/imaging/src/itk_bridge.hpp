#pragma once
/// @file itk_bridge.hpp (private)
/// The interface of the ITK side (itk_bridge.cpp, itk_util.cpp, stack_bridge.cpp). No Eigen types
/// here: Debian's ITK 5.2 ships its own Eigen 3.3 (itkeigen, included by itkImageIOBase.h) under the
/// same include guards as the system Eigen 3.4, so ITK headers and <Eigen/...> must never meet in
/// one translation unit.
#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace cardio::imaging::itk_bridge {

enum class Component { u8, i8, u16, i16, u32, i32, u64, i64, f32, f64 };

std::size_t component_size(Component c);
/// The integer component of `bytes` bytes (1, 2, 4 or 8), signed or not; nullopt for other sizes.
std::optional<Component> integer_component(std::size_t bytes, bool is_signed);

/// ITK geometry of the first three axes (voxel centre = origin + D diag(spacing) index).
struct Geometry {
  std::array<std::int64_t, 3> size{1, 1, 1};
  std::array<double, 3> spacing{1, 1, 1};
  std::array<double, 3> origin{0, 0, 0};
  std::array<double, 9> direction{1, 0, 0, 0, 1, 0, 0, 0, 1};  ///< row-major; column a = index axis a
};

struct Header {
  Geometry geometry;
  unsigned dimension = 0;
  std::vector<std::uint64_t> sizes;  ///< every stored axis
  unsigned components = 1;
  std::string component_type;  ///< ITK's name
  std::string pixel_type;      ///< ITK's name
  Component component = Component::u8;
  std::uint64_t pixel_bytes() const;
};

/// Pixels as stored: components interleaved, axis 0 fastest, native byte order.
struct Pixels {
  Component component = Component::u8;
  std::vector<std::byte> data;
};

/// A label or other image in any form the readers take: a file ITK reads, a VTK XML image (.vti,
/// through VTK: vti_reader.hpp), a folder read as its first DICOM series, or a stack of 2-D slices
/// (a folder or glob of TIFF/PNG files, image_stack.hpp; its header has unit spacing and zero
/// origin, which the caller replaces). The constructor reads the header (and fails with a
/// cardio::Error naming the file); read() reads the pixels.
class Reader {
 public:
  enum class Source { file, vti, dicom_series, slice_stack };

  Reader(const std::filesystem::path& path, const std::string& what);
  ~Reader();
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;
  const Header& header() const { return header_; }
  Source source() const;
  Pixels read();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  Header header_;
};

/// Writes one 3-D image with ITK (format from tmp_file's extension, which must equal final's).
/// components: 1 (u8, i16, i32, f32) or 3 (f32, written as itk::Vector<float, 3>).
/// Errors name `final_file`.
void write(const std::filesystem::path& tmp_file, const std::filesystem::path& final_file, const Geometry& g,
           Component component, unsigned components, const void* data, bool compress, const std::string& what);

/// Writes a 3-D image as 2-D slices folder/slice_NNNN<extension> (.tif or .png; NNNN the slice
/// index k, zero-padded to at least 4 digits). component: u8 or u16. Errors name the slice.
void write_slices(const std::filesystem::path& folder, const std::string& extension,
                  const std::array<std::int64_t, 3>& size, Component component, const void* data,
                  const std::string& what);

}  // namespace cardio::imaging::itk_bridge
