#pragma once
/// @file image_io_common.hpp (private)
/// What the Eigen-side image IO sources share (image_io.cpp reads, image_write.cpp writes).
#include <filesystem>
#include <string>

#include "cardio/core/error.hpp"
#include "cardio/imaging/volume.hpp"
#include "itk_bridge.hpp"

namespace cardio::imaging {

/// 'path', for messages.
std::string in_quotes(const std::filesystem::path& p);

/// The bridge's geometry of a grid (size, spacing, origin, direction by columns).
itk_bridge::Geometry geometry_of(const Grid& g);

/// Refuses (CARDIO_CHECK) a volume whose values do not fill its grid.
template <class T>
inline void check_sizes(const Volume<T>& v, const std::string& what) {
  CARDIO_CHECK(v.grid.size[0] > 0 && v.grid.size[1] > 0 && v.grid.size[2] > 0 &&
                   static_cast<std::size_t>(v.grid.n_voxels()) == v.values.size(),
               what << ": " << v.values.size() << " values for a grid of " << v.grid.size[0] << "x" << v.grid.size[1]
                    << "x" << v.grid.size[2] << " voxels");
}

}  // namespace cardio::imaging
