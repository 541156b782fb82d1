// The sampled-axes loop for AVX-512 (F, CD, DQ, BW: 8 doubles per vector); compiled with those
// flags and called only when the CPU and the OS support them (sampled_axes_dispatch.cpp).
#include "sampled_axes_simd.hpp"

namespace cardio::mechanics::detail {

void sampled_range_avx512(const SampledBatchInput& in, std::int32_t begin, std::int32_t end) {
  if (in.blocks != nullptr)
    SampledLanes<xsimd::avx512bw>::run(in, begin, end);
  else
    SampledLanes<xsimd::avx512bw, double, float>::run(in, begin, end);
}

void sampled_range_single_avx512(const SampledBatchInput& in, std::int32_t begin, std::int32_t end) {
  SampledLanes<xsimd::avx512bw, float, float>::run(in, begin, end);
}

void sampled_stiffness_avx512(const SampledConstants<double>& d, const double* x, bool volumetric_geometry, double* K) {
  SampledLanes<xsimd::avx512bw>::stiffness(d, x, volumetric_geometry, K);
}

}  // namespace cardio::mechanics::detail
