#pragma once
/// @file itk_morphology.hpp (private)
/// Binary morphology with ITK for derive_cavities.cpp. Like itk_bridge.hpp: no Eigen types, so
/// that ITK's bundled Eigen and the system Eigen never meet in one translation unit.
#include <array>
#include <cstdint>
#include <vector>

namespace cardio::imaging::itk_morphology {

/// A binary or label image on an axis-aligned grid (the direction does not matter for distances).
template <class T>
struct Image {
  std::array<std::int64_t, 3> size{0, 0, 0};  ///< voxels along i, j, k (i fastest)
  std::array<double, 3> spacing{1, 1, 1};     ///< [mm]
  std::vector<T> values;
};

/// The morphological closing of `mask` (nonzero = foreground) by a Euclidean ball of radius
/// `radius_mm` (voxel centres within the radius), computed exactly from two Maurer distance maps
/// (ITK SignedMaurerDistanceMapImageFilter): dilation {d(x, mask) <= r}, then erosion
/// {d(x, not dilated) > r}; then the holes not connected to the image border filled
/// (BinaryFillholeImageFilter, face connectivity). Outside the image counts as background, so the
/// caller pads the mask by more than the radius. Returns 0/1.
std::vector<std::uint8_t> closed_and_filled(const Image<std::uint8_t>& mask, double radius_mm);

/// Face-connected components of the nonzero voxels (ConnectedComponentImageFilter): 0 for
/// background, 1..n otherwise.
std::vector<std::int32_t> face_connected_components(const Image<std::uint8_t>& mask);

}  // namespace cardio::imaging::itk_morphology
