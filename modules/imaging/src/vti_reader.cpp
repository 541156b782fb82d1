// VTK XML image data (vti_reader.hpp).
#include "vti_reader.hpp"

#include <vtkCellData.h>
#include <vtkCommand.h>
#include <vtkDataArray.h>
#include <vtkImageData.h>
#include <vtkInformation.h>
#include <vtkMatrix3x3.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkSmartPointer.h>
#include <vtkStreamingDemandDrivenPipeline.h>
#include <vtkXMLImageDataReader.h>

#include <algorithm>
#include <array>
#include <cstring>

#include "cardio/core/error.hpp"

namespace cardio::imaging::vti {
namespace fs = std::filesystem;
using itk_bridge::Component;

namespace {

std::string in_quotes(const fs::path& p) {
  std::string s(1, '\'');  // built by appending: GCC 12 warns (-Wrestrict, PR 105329) on "'" + str
  s.append(p.string()).push_back('\'');
  return s;
}

/// VTK's error text, for the cardio::Error instead of stderr (an observed ErrorEvent is not printed).
class ErrorText final : public vtkCommand {
 public:
  static ErrorText* New() { return new ErrorText; }
  void Execute(vtkObject*, unsigned long, void* call_data) override {
    if (call_data == nullptr) return;
    std::string m = static_cast<const char*>(call_data);
    if (m.rfind("ERROR: In ", 0) == 0)  // drop "ERROR: In file.cxx, line N" and "vtkClass (0x...): "
      if (const auto nl = m.find('\n'); nl != std::string::npos) m = m.substr(nl + 1);
    if (const auto p = m.find("): "); p != std::string::npos && p < 80) m = m.substr(p + 3);
    std::replace(m.begin(), m.end(), '\n', ' ');
    while (!m.empty() && m.back() == ' ') m.pop_back();
    text += (text.empty() ? "" : "; ") + m;
  }
  std::string text;
};

Component component_of(vtkDataArray& a, const fs::path& file, const std::string& what) {
  const int type = a.GetDataType();
  if (type == VTK_FLOAT) return Component::f32;
  if (type == VTK_DOUBLE) return Component::f64;
  const bool is_signed = a.GetDataTypeMin() < 0;
  if (const auto c = itk_bridge::integer_component(std::size_t(a.GetDataTypeSize()), is_signed)) return *c;
  CARDIO_FAIL("cannot read " << what << " " << in_quotes(file) << ": unsupported data type " << a.GetDataTypeAsString()
                             << " of point array '" << a.GetName() << "'");
}

/// The voxel values: the active point scalars, else the only point array.
vtkDataArray& voxel_array(vtkImageData& image, const fs::path& file, const std::string& what) {
  vtkPointData& pd = *image.GetPointData();
  if (vtkDataArray* s = pd.GetScalars()) return *s;
  if (pd.GetNumberOfArrays() == 1 && pd.GetArray(0)) return *pd.GetArray(0);
  if (pd.GetNumberOfArrays() == 0)
    CARDIO_FAIL("cannot read " << what << " " << in_quotes(file) << ": it has no point data"
                               << (image.GetCellData()->GetNumberOfArrays() ? " (only cell data)" : "")
                               << "; the voxel values must be the image's point data scalars");
  std::string names;
  for (int i = 0; i < pd.GetNumberOfArrays(); ++i)
    names += (i ? ", '" : "'") + std::string(pd.GetArrayName(i) ? pd.GetArrayName(i) : "") + "'";
  CARDIO_FAIL("cannot read " << what << " " << in_quotes(file) << ": its point data hold " << pd.GetNumberOfArrays()
                             << " arrays (" << names
                             << ") and none is marked as the active scalars; keep only the label array");
}

struct Opened {
  vtkNew<vtkXMLImageDataReader> reader;
  vtkNew<ErrorText> errors;
  std::array<int, 6> extent{};
};

/// Reads the extent `extent` of the file (the whole file: its whole extent).
vtkSmartPointer<vtkImageData> read_extent(Opened& o, const std::array<int, 6>& extent, const fs::path& file,
                                          const std::string& what) {
  // vtkAlgorithm's: the reader has a member of the same name.
  const int ok = static_cast<vtkAlgorithm&>(*o.reader).UpdateExtent(extent.data());
  if (!ok || !o.errors->text.empty() || !o.reader->GetOutput())
    CARDIO_FAIL("cannot read " << what << " " << in_quotes(file) << ": unreadable VTK XML image data ("
                               << o.errors->text << ")");
  return o.reader->GetOutput();
}

void open(Opened& o, const fs::path& file, const std::string& what) {
  if (!o.reader->CanReadFile(file.string().c_str()))
    CARDIO_FAIL("cannot read " << what << " " << in_quotes(file) << ": not a VTK XML image data file (.vti)");
  for (vtkObject* source : {static_cast<vtkObject*>(o.reader.Get()), static_cast<vtkObject*>(o.reader->GetExecutive())})
    source->AddObserver(vtkCommand::ErrorEvent, o.errors);
  o.reader->SetReaderErrorObserver(o.errors);
  o.reader->SetParserErrorObserver(o.errors);
  o.reader->SetFileName(file.string().c_str());
  o.reader->UpdateInformation();
  vtkInformation* info = o.reader->GetOutputInformation(0);
  if (!o.errors->text.empty() || !info || !info->Has(vtkStreamingDemandDrivenPipeline::WHOLE_EXTENT()))
    CARDIO_FAIL("cannot read " << what << " " << in_quotes(file) << ": unreadable VTK XML image header ("
                               << o.errors->text << ")");
  info->Get(vtkStreamingDemandDrivenPipeline::WHOLE_EXTENT(), o.extent.data());
  for (int a = 0; a < 3; ++a)
    if (o.extent[std::size_t(2 * a + 1)] < o.extent[std::size_t(2 * a)])
      CARDIO_FAIL("cannot read " << what << " " << in_quotes(file) << ": it holds no voxels (empty extent)");
}

}  // namespace

itk_bridge::Header read_header(const fs::path& file, const std::string& what) {
  Opened o;
  open(o, file, what);
  const std::array<int, 6>& e = o.extent;
  vtkSmartPointer<vtkImageData> one = read_extent(o, {e[0], e[0], e[2], e[2], e[4], e[4]}, file, what);
  vtkDataArray& values = voxel_array(*one, file, what);
  itk_bridge::Header h;
  h.dimension = 3;
  h.components = static_cast<unsigned>(values.GetNumberOfComponents());
  h.component = component_of(values, file, what);
  h.component_type = values.GetDataTypeAsString();
  h.pixel_type = h.components == 1 ? "scalar" : "vector";
  itk_bridge::Geometry& g = h.geometry;
  const double* spacing = one->GetSpacing();
  const double* origin = one->GetOrigin();
  vtkMatrix3x3* d = one->GetDirectionMatrix();
  for (int a = 0; a < 3; ++a) {
    g.size[std::size_t(a)] = e[std::size_t(2 * a + 1)] - e[std::size_t(2 * a)] + 1;
    h.sizes.push_back(static_cast<std::uint64_t>(g.size[std::size_t(a)]));
    g.spacing[std::size_t(a)] = spacing[a];
    for (int r = 0; r < 3; ++r) g.direction[std::size_t(3 * r + a)] = d->GetElement(r, a);
  }
  // Voxel (0, 0, 0) is the extent's first point: origin + D diag(spacing) extent_min.
  for (int r = 0; r < 3; ++r) {
    g.origin[std::size_t(r)] = origin[r];
    for (int a = 0; a < 3; ++a)
      g.origin[std::size_t(r)] += d->GetElement(r, a) * spacing[a] * double(e[std::size_t(2 * a)]);
  }
  return h;
}

itk_bridge::Pixels read_pixels(const fs::path& file, const itk_bridge::Header& header, const std::string& what) {
  Opened o;
  open(o, file, what);
  vtkSmartPointer<vtkImageData> image = read_extent(o, o.extent, file, what);
  vtkDataArray& values = voxel_array(*image, file, what);
  itk_bridge::Pixels p;
  p.component = component_of(values, file, what);
  p.data.resize(static_cast<std::size_t>(header.pixel_bytes()));
  const auto stored = static_cast<std::size_t>(values.GetNumberOfValues()) * itk_bridge::component_size(p.component);
  if (p.component != header.component || stored != p.data.size())
    CARDIO_FAIL("cannot read " << what << " " << in_quotes(file) << ": its point array has "
                               << values.GetNumberOfValues() << " values of " << values.GetDataTypeAsString()
                               << ", expected " << header.pixel_bytes() / itk_bridge::component_size(header.component)
                               << " (the file is damaged or truncated)");
  std::memcpy(p.data.data(), values.GetVoidPointer(0), p.data.size());
  return p;
}

}  // namespace cardio::imaging::vti
