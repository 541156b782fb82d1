// The sampled-axes loop for AVX2 with FMA (4 doubles per vector); compiled with -mavx2 -mfma and
// called only when the CPU has both (sampled_axes_dispatch.cpp).
#include "sampled_axes_simd.hpp"

namespace cardio::mechanics::detail {

void sampled_range_avx2(const SampledBatchInput& in, std::int32_t begin, std::int32_t end) {
  if (in.blocks != nullptr)
    SampledLanes<xsimd::fma3<xsimd::avx2>>::run(in, begin, end);
  else
    SampledLanes<xsimd::fma3<xsimd::avx2>, double, float>::run(in, begin, end);
}

void sampled_range_single_avx2(const SampledBatchInput& in, std::int32_t begin, std::int32_t end) {
  SampledLanes<xsimd::fma3<xsimd::avx2>, float, float>::run(in, begin, end);
}

void sampled_stiffness_avx2(const SampledConstants<double>& d, const double* x, bool volumetric_geometry, double* K) {
  SampledLanes<xsimd::fma3<xsimd::avx2>>::stiffness(d, x, volumetric_geometry, K);
}

}  // namespace cardio::mechanics::detail
