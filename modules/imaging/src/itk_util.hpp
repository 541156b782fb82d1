#pragma once
/// @file itk_util.hpp (private)
/// What the ITK sources of the image IO share (itk_bridge.cpp: files, DICOM series, writers;
/// stack_bridge.cpp: stacks of 2-D slices). Includes ITK: never in a translation unit with Eigen.
#include <itkImageIOBase.h>

#include <filesystem>
#include <string>
#include <vector>

#include "itk_bridge.hpp"

namespace cardio::imaging::itk_bridge {

/// Registers the IO factories of the single-file formats and DICOM (explicitly, not through
/// ITK_USE_FILE's generated manager, so that the readers work whatever the consuming target's CMake
/// does). TIFF and PNG are not registered: they are read only as stacks, with their IO chosen there.
void register_factories();

std::string in_quotes(const std::filesystem::path& p);

/// ITK's description without its "ITK ERROR: Class(0x...): " prefix, on one line.
std::string itk_message(const itk::ExceptionObject& e);

/// The header ITK's IO has read (ReadImageInformation); errors name `file`.
Header header_of(itk::ImageIOBase& io, const std::filesystem::path& file, const std::string& what);

/// The header of a stack of 2-D slices (stack_bridge.cpp): 3-D, the slices' size and pixel type,
/// unit spacing and zero origin (the caller sets them). Every slice's header is read and must be
/// 2-D, one component of an integer type, and agree in size and type with the first; errors name
/// the offending slice.
Header stack_header(const std::vector<std::filesystem::path>& slices, const std::filesystem::path& stack,
                    const std::string& what);

/// The pixels of the stack, slice after slice, as the header says.
Pixels read_stack(const std::vector<std::filesystem::path>& slices, const Header& header,
                  const std::filesystem::path& stack, const std::string& what);

}  // namespace cardio::imaging::itk_bridge
