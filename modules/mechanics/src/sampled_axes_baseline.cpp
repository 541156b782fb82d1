// The sampled-axes loop for the build's default instruction set (SSE2 on x86-64): runs anywhere
// the rest of the program runs.
#include "sampled_axes_simd.hpp"

namespace cardio::mechanics::detail {

void sampled_range_baseline(const SampledBatchInput& in, std::int32_t begin, std::int32_t end) {
  if (in.blocks != nullptr)
    SampledLanes<xsimd::default_arch>::run(in, begin, end);
  else
    SampledLanes<xsimd::default_arch, double, float>::run(in, begin, end);
}

void sampled_range_single_baseline(const SampledBatchInput& in, std::int32_t begin, std::int32_t end) {
  SampledLanes<xsimd::default_arch, float, float>::run(in, begin, end);
}

void sampled_stiffness_baseline(const SampledConstants<double>& d, const double* x, bool volumetric_geometry,
                                double* K) {
  SampledLanes<xsimd::default_arch>::stiffness(d, x, volumetric_geometry, K);
}

}  // namespace cardio::mechanics::detail
