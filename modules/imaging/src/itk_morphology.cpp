// ITK side of derive_cavities (see itk_morphology.hpp for why no Eigen may be included here).
#include "itk_morphology.hpp"

#include <algorithm>
#include <cstring>

#include <itkBinaryFillholeImageFilter.h>
#include <itkConnectedComponentImageFilter.h>
#include <itkImage.h>
#include <itkSignedMaurerDistanceMapImageFilter.h>

namespace cardio::imaging::itk_morphology {
namespace {

using MaskImage = itk::Image<std::uint8_t, 3>;
using FloatImage = itk::Image<float, 3>;
using LabelImage = itk::Image<std::int32_t, 3>;

MaskImage::Pointer to_itk(const Image<std::uint8_t>& m) {
  auto image = MaskImage::New();
  MaskImage::SizeType size;
  MaskImage::SpacingType spacing;
  for (unsigned a = 0; a < 3; ++a) {
    size[a] = static_cast<itk::SizeValueType>(m.size[a]);
    spacing[a] = m.spacing[a];
  }
  image->SetRegions(MaskImage::RegionType(size));
  image->SetSpacing(spacing);
  image->Allocate();
  std::memcpy(image->GetBufferPointer(), m.values.data(), m.values.size());
  return image;
}

/// Euclidean distance [mm] from each voxel centre to the nearest foreground voxel centre
/// (positive outside the foreground; inside values are not used).
FloatImage::Pointer distance_to_foreground(const MaskImage::Pointer& mask) {
  auto distance = itk::SignedMaurerDistanceMapImageFilter<MaskImage, FloatImage>::New();
  distance->SetInput(mask);
  distance->SetBackgroundValue(0);
  distance->SquaredDistanceOff();
  distance->UseImageSpacingOn();
  distance->InsideIsPositiveOff();
  distance->Update();
  return distance->GetOutput();
}

}  // namespace

std::vector<std::uint8_t> closed_and_filled(const Image<std::uint8_t>& mask, double radius_mm) {
  const double r = radius_mm * (1 + 1e-9);  // a voxel centre exactly on the ball counts as inside
  const MaskImage::Pointer input = to_itk(mask);
  const std::size_t n = mask.values.size();
  // Dilation, stored as its complement: the erosion measures the distance to it.
  Image<std::uint8_t> outside_dilated{mask.size, mask.spacing, std::vector<std::uint8_t>(n)};
  {
    const FloatImage::Pointer to_mask = distance_to_foreground(input);
    const float* d = to_mask->GetBufferPointer();
    for (std::size_t v = 0; v < n; ++v) outside_dilated.values[v] = !(mask.values[v] || d[v] <= r);
  }
  const FloatImage::Pointer to_outside = distance_to_foreground(to_itk(outside_dilated));
  const float* d = to_outside->GetBufferPointer();
  auto closed = MaskImage::New();
  closed->SetRegions(input->GetLargestPossibleRegion());
  closed->SetSpacing(input->GetSpacing());
  closed->Allocate();
  std::uint8_t* c = closed->GetBufferPointer();
  for (std::size_t v = 0; v < n; ++v) c[v] = !outside_dilated.values[v] && d[v] > r;
  auto fill = itk::BinaryFillholeImageFilter<MaskImage>::New();
  fill->SetInput(closed);
  fill->SetForegroundValue(1);
  fill->FullyConnectedOff();
  fill->Update();
  const std::uint8_t* f = fill->GetOutput()->GetBufferPointer();
  return {f, f + n};
}

std::vector<std::int32_t> face_connected_components(const Image<std::uint8_t>& mask) {
  auto components = itk::ConnectedComponentImageFilter<MaskImage, LabelImage>::New();
  components->SetInput(to_itk(mask));
  components->FullyConnectedOff();
  components->SetBackgroundValue(0);
  components->Update();
  const std::int32_t* l = components->GetOutput()->GetBufferPointer();
  return {l, l + mask.values.size()};
}

}  // namespace cardio::imaging::itk_morphology
