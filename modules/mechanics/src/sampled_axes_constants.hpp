#pragma once
/// @file sampled_axes_constants.hpp (private)
/// From an element's rest data and its law to the kernel's constants (sampled_axes_kernel.hpp).
#include "cardio/mechanics/sampled_axes.hpp"
#include "sampled_axes_kernel.hpp"

namespace cardio::mechanics::detail {

/// The element's constants and its law in the active state (hyperelastic.hpp, ActiveFibre). The
/// same formulas run on SIMD lanes in sampled_axes_simd.hpp (load_constants).
SampledConstants<double> sampled_constants(const SampledElementData& e, const GuccioneLaw& law, double Ta,
                                           double activation);

}  // namespace cardio::mechanics::detail
