#include "app/runtime_env.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace cardio::pipeline {
namespace {

/// OpenMP threads spin at every barrier by default (libgomp: some 300 000 spins before sleeping):
/// next to one other busy process that made a run 2.8x slower. Fully passive waiting wakes the
/// team with a system call per parallel region, which costs more than the second thread saves at
/// today's short steps. A bounded spin of 500 before sleeping: the default case (1 mm, 2 threads)
/// 9.4-9.8 s idle as with 2 000 spins (passive 16.1 s, 1 thread 13.3 s), 21-25 s next to a busy
/// process where 2 000 spins took 43-44 s (docs/performance.md, "OpenMP waiting").
bool set_bounded_openmp_spinning() {
  if (std::getenv("OMP_WAIT_POLICY") != nullptr || std::getenv("GOMP_SPINCOUNT") != nullptr) return false;
  return setenv("GOMP_SPINCOUNT", "500", 1) == 0;
}

/// Debian 12's OpenBLAS (0.3.21) does not recognise some virtual CPUs (CPUID "Intel Xeon
/// Processor") and runs its Prescott (SSE3) kernels on them: CHOLMOD's factorisations at 0.5 mm
/// took 1.55x longer than with the AVX-512 kernels the CPU supports (docs/performance.md, Newton).
/// The choice is made once per machine, so results stay the same run to run.
bool set_openblas_kernels() {
  if (std::getenv("OPENBLAS_CORETYPE") != nullptr) return false;
  using CoreName = char* (*)();
  const auto corename = reinterpret_cast<CoreName>(dlsym(RTLD_DEFAULT, "openblas_get_corename"));
  if (corename == nullptr || std::strcmp(corename(), "Prescott") != 0) return false;
  __builtin_cpu_init();
  const char* core = __builtin_cpu_supports("avx512f")                                 ? "SkylakeX"
                     : __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? "Haswell"
                                                                                       : nullptr;
  return core != nullptr && setenv("OPENBLAS_CORETYPE", core, 1) == 0;
}

}  // namespace

void choose_runtime_settings(char** argv) {
  const bool waiting = set_bounded_openmp_spinning();
  const bool blas = set_openblas_kernels();
  if (waiting || blas) execv("/proc/self/exe", argv);  // returns only on failure
}

}  // namespace cardio::pipeline
