// Which build of the sampled-axes loop runs: the widest the CPU supports. The default build is
// portable (no -march); the wide builds are separate translation units (docs/performance.md, "SIMD").
#include "sampled_axes_batch.hpp"

namespace cardio::mechanics::detail {

std::vector<SampledKernel> runnable_sampled_kernels() {
  std::vector<SampledKernel> kernels;
#if defined(CARDIO_SIMD_X86)
  // libgcc's CPU check includes the OS's support for the wide registers (XGETBV).
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512bw"))
    kernels.push_back({"avx512", &sampled_range_avx512, &sampled_range_single_avx512, &sampled_stiffness_avx512});
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    kernels.push_back({"avx2", &sampled_range_avx2, &sampled_range_single_avx2, &sampled_stiffness_avx2});
#endif
  kernels.push_back({"baseline", &sampled_range_baseline, &sampled_range_single_baseline, &sampled_stiffness_baseline});
  return kernels;
}

}  // namespace cardio::mechanics::detail
