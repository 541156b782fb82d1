#pragma once
/// @file runtime_env.hpp
/// Settings the OpenMP runtime and OpenBLAS read once, when they load (before main): `cardiac`
/// chooses them and re-executes itself once, unless the user set them (docs/performance.md).

namespace cardio::pipeline {

/// Sets what the user left unset, then re-executes /proc/self/exe with argv if anything changed
/// (returns only if nothing did, or if the re-execution failed: the defaults then stay):
/// - GOMP_SPINCOUNT=500, a bounded spin before sleeping (unless OMP_WAIT_POLICY or GOMP_SPINCOUNT
///   is set);
/// - OPENBLAS_CORETYPE, where OpenBLAS did not recognise the CPU and fell back to its oldest
///   kernels (Prescott) although the CPU has AVX-512 (SkylakeX) or AVX2 with FMA (Haswell).
void choose_runtime_settings(char** argv);

}  // namespace cardio::pipeline
