#pragma once
/// @file sampled_axes_batch.hpp (private)
/// The production loop of the sampled-axes element: elements in SIMD lanes (sampled_axes_simd.hpp),
/// one build of it per instruction set, the widest the CPU runs chosen at run time (the default
/// build stays portable; docs/performance.md, "SIMD").
///
/// Element constants are stored in blocks of elements, structure-of-arrays inside a block (value k
/// of lane l at block[k * lanes + l]): 81 values per element, in double (8-element blocks, 648
/// bytes per element) or in single precision (16-element blocks, 324 bytes; the explicit beat).
#include <cstdint>
#include <vector>

#include "sampled_axes_kernel.hpp"

namespace cardio::mechanics::detail {

inline constexpr int kBlockLanes = 8;         ///< elements per block of double constants
inline constexpr int kSingleBlockLanes = 16;  ///< elements per block of single-precision constants
/// Per element: 8 maps of 9 values, 8 Gauss weights, the rest volume.
inline constexpr int kBlockValues = 8 * 9 + 8 + 1;
inline constexpr int kWeightOffset = 72;
inline constexpr int kVolumeOffset = 80;

/// Per material: the law's constants in this order.
enum MaterialConstant { kC, kBf, kBt, kBfs, kBulk, kTau, kBeta, kGamma, kActiveSheet, kActiveNormal, kMaterialValues };

/// Everything one pass over a range of elements reads and writes. Positions, velocities and
/// forces are 3 x n_nodes column-major arrays (Eigen::Matrix3Xd storage).
struct SampledBatchInput {
  const double* x = nullptr;
  const double* v = nullptr;            ///< null: no damping
  double* f = nullptr;                  ///< the forces are added
  const std::int32_t* hexes = nullptr;  ///< 8 node indices per element
  std::int32_t n_elements = 0;
  const double* blocks = nullptr;        ///< ceil(n / kBlockLanes) blocks of kBlockValues x kBlockLanes, or null
  const float* single_blocks = nullptr;  ///< or ceil(n / kSingleBlockLanes) blocks of single-precision values
  const std::uint16_t* material = nullptr;
  const double* material_constants = nullptr;  ///< kMaterialValues per material
  const double* Ta = nullptr;                  ///< per element [kPa]; null: zero
  const double* activation = nullptr;          ///< per element; null: zero
};

/// Adds the forces of elements [begin, end) into in.f, in element order (begin must be a multiple
/// of kSingleBlockLanes). An element with an inverted sample gets NaN forces.
using SampledRangeKernel = void (*)(const SampledBatchInput& in, std::int32_t begin, std::int32_t end);

/// K = -df/dx (24 x 24, row-major) of one element at its node coordinates x (3 j + i); without
/// the volumetric term's geometric part unless `volumetric_geometry` (Tangent).
using SampledStiffnessKernel = void (*)(const SampledConstants<double>& d, const double* x, bool volumetric_geometry,
                                        double* K);

struct SampledKernel {
  const char* isa = "";                     ///< "avx512f", "avx2", or "baseline" (the build's default instruction set)
  SampledRangeKernel run = nullptr;         ///< double arithmetic, on either storage
  SampledRangeKernel run_single = nullptr;  ///< single-precision arithmetic on single_blocks
  SampledStiffnessKernel stiffness = nullptr;
};

/// Every build of the loop this CPU can run, widest first.
std::vector<SampledKernel> runnable_sampled_kernels();

void sampled_range_baseline(const SampledBatchInput& in, std::int32_t begin, std::int32_t end);
void sampled_range_single_baseline(const SampledBatchInput& in, std::int32_t begin, std::int32_t end);
void sampled_stiffness_baseline(const SampledConstants<double>& d, const double* x, bool volumetric_geometry,
                                double* K);
#if defined(CARDIO_SIMD_X86)
void sampled_range_avx2(const SampledBatchInput& in, std::int32_t begin, std::int32_t end);
void sampled_range_single_avx2(const SampledBatchInput& in, std::int32_t begin, std::int32_t end);
void sampled_stiffness_avx2(const SampledConstants<double>& d, const double* x, bool volumetric_geometry, double* K);
void sampled_range_avx512(const SampledBatchInput& in, std::int32_t begin, std::int32_t end);
void sampled_range_single_avx512(const SampledBatchInput& in, std::int32_t begin, std::int32_t end);
void sampled_stiffness_avx512(const SampledConstants<double>& d, const double* x, bool volumetric_geometry, double* K);
#endif

}  // namespace cardio::mechanics::detail
