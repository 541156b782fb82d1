// Helpers shared by the ITK sources of the image IO (itk_util.hpp).
#include "itk_util.hpp"

#include <cctype>
#include <mutex>

#include <itkGDCMImageIOFactory.h>
#include <itkMetaImageIOFactory.h>
#include <itkNiftiImageIOFactory.h>
#include <itkNrrdImageIOFactory.h>
#include <itkVTKImageIOFactory.h>

#include "cardio/core/error.hpp"

namespace cardio::imaging::itk_bridge {
namespace fs = std::filesystem;

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

std::string in_quotes(const fs::path& p) {
  std::string s(1, '\'');  // built by appending: GCC 12 warns (-Wrestrict, PR 105329) on "'" + str
  s.append(p.string()).push_back('\'');
  return s;
}

std::string itk_message(const itk::ExceptionObject& e) {
  std::string s = e.GetDescription();
  if (s.rfind("ITK ERROR: ", 0) == 0) {
    const auto colon = s.find("): ");
    if (colon != std::string::npos) s = s.substr(colon + 3);
  }
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  return s;
}

namespace {

using IOComponent = itk::IOComponentEnum;

/// Our component enum from ITK's; fails for types we do not convert (e.g. long double).
Component component_of(IOComponent type, std::size_t size, const fs::path& file, const std::string& what) {
  const bool is_signed = type == IOComponent::CHAR || type == IOComponent::SHORT || type == IOComponent::INT ||
                         type == IOComponent::LONG || type == IOComponent::LONGLONG;
  switch (type) {
    case IOComponent::FLOAT:
      return Component::f32;
    case IOComponent::DOUBLE:
      return Component::f64;
    case IOComponent::UCHAR:
    case IOComponent::CHAR:
    case IOComponent::USHORT:
    case IOComponent::SHORT:
    case IOComponent::UINT:
    case IOComponent::INT:
    case IOComponent::ULONG:
    case IOComponent::LONG:
    case IOComponent::ULONGLONG:
    case IOComponent::LONGLONG:
      if (const auto c = integer_component(size, is_signed)) return *c;
      break;
    default:
      break;
  }
  CARDIO_FAIL("cannot read " << what << " " << in_quotes(file) << ": unsupported pixel component type "
                             << itk::ImageIOBase::GetComponentTypeAsString(type));
}

}  // namespace

Header header_of(itk::ImageIOBase& io, const fs::path& file, const std::string& what) {
  Header h;
  h.dimension = io.GetNumberOfDimensions();
  for (unsigned a = 0; a < h.dimension; ++a) h.sizes.push_back(io.GetDimensions(a));
  const unsigned n = std::min(h.dimension, 3u);
  for (unsigned a = 0; a < n; ++a) {
    h.geometry.size[a] = static_cast<std::int64_t>(io.GetDimensions(a));
    h.geometry.spacing[a] = io.GetSpacing(a);
    h.geometry.origin[a] = io.GetOrigin(a);
    const std::vector<double> axis = io.GetDirection(a);  // column a of ITK's direction matrix
    for (unsigned r = 0; r < n && r < axis.size(); ++r) h.geometry.direction[3 * r + a] = axis[r];
  }
  h.components = io.GetNumberOfComponents();
  h.component_type = itk::ImageIOBase::GetComponentTypeAsString(io.GetComponentType());
  h.pixel_type = itk::ImageIOBase::GetPixelTypeAsString(io.GetPixelType());
  h.component = component_of(io.GetComponentType(), io.GetComponentSize(), file, what);
  return h;
}

}  // namespace cardio::imaging::itk_bridge
