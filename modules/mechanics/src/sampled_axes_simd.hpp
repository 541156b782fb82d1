#pragma once
/// @file sampled_axes_simd.hpp (private)
/// The sampled-axes loop with one element per SIMD lane, templated on the xsimd architecture.
/// Included only by the sampled_axes_<isa>.cpp files, each compiled for its instruction set: code
/// here must stay free of non-template inline functions on plain doubles (Eigen, std containers),
/// or the linker could keep a wide-instruction copy of them for the whole program.
///
/// Each element's arithmetic is lane-local, so its forces are the same whichever lane or batch it
/// lands in, and the scatter runs in element order: bit-identical at any thread count.
#include <xsimd/xsimd.hpp>

#include <cstdint>
#include <limits>
#include <type_traits>

#include "sampled_axes_batch.hpp"
#include "sampled_axes_dual.hpp"
#include "sampled_axes_kernel.hpp"

namespace cardio::mechanics::detail {

template <class S, class Arch>
struct ScalarMath<xsimd::batch<S, Arch>> {
  using B = xsimd::batch<S, Arch>;
  static B exp_minus_one(const B& q) { return xsimd::expm1(q); }
  static B two_thirds_power(const B& r) {
    const B c = xsimd::cbrt(r);
    return c * c;
  }
};

/// The loop in arithmetic S (double, or float for the explicit beat) on element constants stored
/// as Store (double in 8-element blocks, float in 16-element blocks).
template <class Arch, class S = double, class Store = double>
struct SampledLanes {
  using B = xsimd::batch<S, Arch>;
  static constexpr int L = static_cast<int>(B::size);
  static constexpr int kLanes = std::is_same_v<Store, double> ? kBlockLanes : kSingleBlockLanes;
  static_assert(kLanes % L == 0, "a vector must not straddle two element blocks");
  static_assert(kSingleBlockLanes % kBlockLanes == 0, "chunks start at multiples of both block sizes");

  /// Node values (positions or velocities) of the lanes' elements. In single precision the positions
  /// are taken relative to each element's node 0, in double, before rounding: the edge vectors then
  /// keep single precision relative to the element's size, not to its distance from the origin.
  static void gather(const double* values, const std::int32_t* hexes, const std::int32_t (&element)[L], bool relative,
                     ElementNodes<B>& out) {
    alignas(64) S lanes[3][8][L];
    for (int l = 0; l < L; ++l) {  // lane by lane: each node's 3 coordinates are adjacent in memory
      const std::int32_t* hex = hexes + 8 * std::int64_t(element[l]);
      const double* origin = values + 3 * std::int64_t(hex[0]);
      for (int j = 0; j < 8; ++j) {
        const double* node = values + 3 * std::int64_t(hex[j]);
        for (int i = 0; i < 3; ++i) {
          if constexpr (std::is_same_v<S, double>)
            lanes[i][j][l] = node[i];
          else
            lanes[i][j][l] = S(relative ? node[i] - origin[i] : node[i]);
        }
      }
    }
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 8; ++j) out.c[i][j] = B::load_aligned(lanes[i][j]);
  }

  /// Per-lane value of a per-element or per-material array.
  template <class Value>
  static B per_lane(Value&& value) {
    alignas(64) S lane[L];
    for (int l = 0; l < L; ++l) lane[l] = S(value(l));
    return B::load_aligned(lane);
  }

  /// L consecutive stored values as a batch (converted when S is not the storage type).
  static B load(const Store* p) {
    if constexpr (std::is_same_v<S, Store>) {
      return B::load_unaligned(p);
    } else {
      alignas(64) S lane[L];
      for (int l = 0; l < L; ++l) lane[l] = S(p[l]);
      return B::load_aligned(lane);
    }
  }

  static const Store* stored_blocks(const SampledBatchInput& in) {
    if constexpr (std::is_same_v<Store, double>)
      return in.blocks;
    else
      return in.single_blocks;
  }

  /// The constants of the lanes' elements, their law in its active state (sampled_axes.cpp,
  /// active_sample_law: the same formulas on lanes).
  static void load_constants(const SampledBatchInput& in, std::int32_t first, const std::int32_t (&element)[L],
                             SampledConstants<B>& d) {
    const Store* block = stored_blocks(in) + std::int64_t(first / kLanes) * kBlockValues * kLanes + first % kLanes;
    // In memory order: a jump ahead to the weights cost a cache miss per block (perf, 2026-12-07).
    for (int g = 0; g < kSampleCount; ++g)
      for (int k = 0; k < 9; ++k) d.map[g].m[k] = load(block + (9 * g + k) * kLanes);
    for (int g = 0; g < kSampleCount; ++g) d.weight[g] = load(block + (kWeightOffset + g) * kLanes);
    d.volume = load(block + kVolumeOffset * kLanes);
    // Most blocks hold one material: its constants are broadcast (the same values per lane).
    const std::uint16_t material = in.material[element[0]];
    bool one_material = true;
    for (int l = 1; l < L; ++l) one_material = one_material && in.material[element[l]] == material;
    auto constant = [&](MaterialConstant c) {
      if (one_material) return B(S(in.material_constants[material * kMaterialValues + c]));
      return per_lane([&](int l) { return in.material_constants[in.material[element[l]] * kMaterialValues + c]; });
    };
    const B activation = in.activation ? per_lane([&](int l) { return in.activation[element[l]]; }) : B(0.0);
    const B shortening = 1.0 - constant(kBeta) * activation;
    const B widening = xsimd::sqrt(shortening);
    SampleLaw<B>& a = d.law;
    a.ir[0] = 1.0 / shortening;
    a.ir[1] = a.ir[2] = widening;
    a.C = constant(kC) * (1.0 + constant(kGamma) * activation);
    a.Ta = in.Ta ? per_lane([&](int l) { return in.Ta[element[l]]; }) : B(0.0);
    a.Ta_s = constant(kActiveSheet) * a.Ta;
    a.Ta_n = constant(kActiveNormal) * a.Ta;
    a.b_f = constant(kBf);
    a.b_t = constant(kBt);
    a.b_fs = constant(kBfs);
    a.bulk = constant(kBulk);
    a.viscosity = constant(kTau) * a.C;
  }

  /// Adds the forces of the first `count` lanes to in.f, element by element, node by node.
  static void scatter(const SampledBatchInput& in, std::int32_t first, int count, const ElementNodes<B>& f) {
    alignas(64) S lanes[3][8][L];
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 8; ++j) f.c[i][j].store_aligned(lanes[i][j]);
    for (int l = 0; l < count; ++l) {
      const std::int32_t* hex = in.hexes + 8 * std::int64_t(first + l);
      for (int j = 0; j < 8; ++j)
        for (int i = 0; i < 3; ++i) in.f[3 * std::int64_t(hex[j]) + i] += lanes[i][j][l];
    }
  }

  /// The tangent K = -df/dx of one element at x (24 values, 3 j + i), row-major into K: the
  /// kernel on dual numbers whose 24 derivatives fill the vectors (Tangent: `volumetric_geometry`).
  static void stiffness(const SampledConstants<double>& d, const double* x, bool volumetric_geometry, double* K) {
    using D = Dual<Arch>;
    ElementNodes<D> xa, fa;
    for (int j = 0; j < 8; ++j)
      for (int i = 0; i < 3; ++i) {
        xa.c[i][j] = D::variable(x[3 * j + i], 3 * j + i);
        fa.c[i][j] = D(0.0);
      }
    bool valid = true;
    if (volumetric_geometry)
      sampled_kernel<true>(d, xa, static_cast<const ElementNodes<D>*>(nullptr), fa, valid);
    else
      sampled_kernel<false>(d, xa, static_cast<const ElementNodes<D>*>(nullptr), fa, valid);
    for (int j = 0; j < 8; ++j)
      for (int i = 0; i < 3; ++i)
        for (int p = 0; p < D::kParts; ++p) {
          const B row = valid ? -fa.c[i][j].d[p] : B(std::numeric_limits<double>::quiet_NaN());
          row.store_unaligned(K + 24 * (3 * j + i) + p * L);
        }
  }

  static void run(const SampledBatchInput& in, std::int32_t begin, std::int32_t end) {
    for (std::int32_t first = begin; first < end; first += L) {
      std::int32_t element[L];  // lanes past the last element repeat it (computed, not scattered)
      for (int l = 0; l < L; ++l) element[l] = first + l < in.n_elements ? first + l : in.n_elements - 1;
      SampledConstants<B> d;
      load_constants(in, first, element, d);
      ElementNodes<B> x, v, f;
      gather(in.x, in.hexes, element, true, x);
      if (in.v) gather(in.v, in.hexes, element, false, v);
      for (auto& row : f.c)
        for (B& value : row) value = B(0.0);
      typename B::batch_bool_type valid(true);
      sampled_kernel(d, x, in.v ? &v : nullptr, f, valid);
      const B nan(std::numeric_limits<S>::quiet_NaN());
      for (auto& row : f.c)
        for (B& value : row) value = xsimd::select(valid, value, nan);
      scatter(in, first, end - first < L ? end - first : L, f);
    }
  }
};

}  // namespace cardio::mechanics::detail
