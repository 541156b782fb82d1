#include "cardio/mechanics/myocardium.hpp"

#include <algorithm>
#include <cmath>
#include <span>
#include <string>

#include "cardio/core/error.hpp"
#include "cardio/core/parallel.hpp"

#include "sampled_axes_batch.hpp"
#include "sampled_axes_constants.hpp"

namespace cardio::mechanics {
namespace detail {

/// The sampled-axes elements in SIMD blocks (sampled_axes_batch.hpp), stored in double or in single
/// precision, and the loop that runs them.
struct SampledElements {
  std::vector<double> blocks;              ///< double storage (empty in single)
  std::vector<float> single_blocks;        ///< single-precision storage (empty in double)
  std::vector<double> material_constants;  ///< kMaterialValues per law
  SampledKernel kernel;

  SampledElements(std::size_t n, const std::vector<GuccioneLaw>& laws, Precision storage)
      : kernel(runnable_sampled_kernels().front()) {
    if (storage == Precision::single_precision)
      single_blocks.resize((n + kSingleBlockLanes - 1) / kSingleBlockLanes * kSingleBlockLanes * kBlockValues);
    else
      blocks.resize((n + kBlockLanes - 1) / kBlockLanes * kBlockLanes * kBlockValues);
    for (const GuccioneLaw& m : laws)
      material_constants.insert(material_constants.end(),
                                {m.C, m.b_f, m.b_t, m.b_fs, m.bulk, m.damping_time, m.active.beta, m.active.gamma,
                                 m.cross_fibre.sheet, m.cross_fibre.normal});
  }
  bool single() const { return !single_blocks.empty(); }
  std::size_t padded_count() const {
    return single() ? single_blocks.size() / kBlockValues : blocks.size() / kBlockValues;
  }
  static std::size_t index(std::size_t e, int k, std::size_t lanes) {
    return ((e / lanes) * kBlockValues + std::size_t(k)) * lanes + e % lanes;
  }
  void put(std::size_t e, int k, double value) {
    if (single())
      single_blocks[index(e, k, kSingleBlockLanes)] = static_cast<float>(value);
    else
      blocks[index(e, k, kBlockLanes)] = value;
  }
  double value(std::size_t e, int k) const {
    return single() ? double(single_blocks[index(e, k, kSingleBlockLanes)]) : blocks[index(e, k, kBlockLanes)];
  }
  void set(std::size_t e, const SampledElementData& d) {
    for (int g = 0; g < kSamples; ++g) {
      for (int k = 0; k < 9; ++k) put(e, 9 * g + k, d.map[std::size_t(g)].data()[k]);
      put(e, kWeightOffset + g, d.weight[std::size_t(g)]);
    }
    put(e, kVolumeOffset, d.volume);
  }
  /// The stored data (in single storage: the single-precision values, exactly, as doubles).
  SampledElementData get(std::size_t e) const {
    SampledElementData d;
    for (int g = 0; g < kSamples; ++g) {
      for (int k = 0; k < 9; ++k) d.map[std::size_t(g)].data()[k] = value(e, 9 * g + k);
      d.weight[std::size_t(g)] = value(e, kWeightOffset + g);
    }
    d.volume = value(e, kVolumeOffset);
    return d;
  }
  /// Lanes past the last element repeat it, so that their (discarded) arithmetic stays finite.
  void pad(std::size_t n) {
    if (n == 0) return;
    const SampledElementData last = get(n - 1);
    for (std::size_t e = n; e < padded_count(); ++e) set(e, last);
  }
};

}  // namespace detail

GuccioneForces::GuccioneForces(const HexMesh& mesh, std::vector<GuccioneLaw> laws, ElementKind kind, Precision storage)
    : m_hexes(mesh.hexes), m_material(mesh.material), m_laws(std::move(laws)), m_kind(kind) {
  CARDIO_CHECK(!m_laws.empty(), "Guccione forces need at least one material law");
  for (std::size_t k = 0; k < m_laws.size(); ++k) {
    try {
      m_laws[k].validate();
    } catch (const std::exception& ex) {
      CARDIO_FAIL("material " << k << ": " << ex.what());
    }
    const ActiveCrossFibre& cross = m_laws[k].cross_fibre;
    CARDIO_CHECK(kind == ElementKind::sampled_axes || (cross.sheet == 0 && cross.normal == 0),
                 "material " << k << ": cross-fibre active stress needs the sampled-axes element");
  }
  for (std::size_t e = 0; e < m_hexes.size(); ++e)
    CARDIO_CHECK(m_material[e] < m_laws.size(), "element " << e << " has material " << m_material[e] << " but only "
                                                           << m_laws.size() << " are defined");
  const bool sampled = kind == ElementKind::sampled_axes;
  if (sampled) {
    m_sampled = std::make_unique<detail::SampledElements>(m_hexes.size(), m_laws, storage);
  } else {
    m_data.resize(m_hexes.size());
    m_hg.resize(m_hexes.size());
  }
  std::vector<std::string> errors(m_hexes.size());
  parallel_for(static_cast<std::int64_t>(m_hexes.size()), [&](std::int64_t e) {
    try {
      const NodeMatrix X = gather(mesh.rest, m_hexes[std::size_t(e)]);
      if (sampled) {
        std::array<Eigen::Matrix3d, kSamples> frames;
        for (int g = 0; g < kSamples; ++g) frames[std::size_t(g)] = mesh.sample_frame(e, g);
        m_sampled->set(std::size_t(e), sampled_element_data(X, frames));
      } else {
        Eigen::Matrix3d frame;
        frame << mesh.fibre.col(e), mesh.sheet.col(e), mesh.normal(e);
        m_data[std::size_t(e)] = bc_element_data(X, frame);
        m_hg[std::size_t(e)] =
            guccione_hourglass_data(X, frame, m_data[std::size_t(e)], m_laws[m_material[std::size_t(e)]]);
      }
    } catch (const std::exception& ex) {
      errors[std::size_t(e)] = ex.what();
    }
  });
  for (std::size_t e = 0; e < errors.size(); ++e)
    if (!errors[e].empty()) CARDIO_FAIL("element " << e << ": " << errors[e]);
  if (sampled) m_sampled->pad(m_hexes.size());
  m_schedule = schedule_elements(mesh);
}

GuccioneForces::~GuccioneForces() = default;

Precision GuccioneForces::storage_precision() const {
  return m_sampled && m_sampled->single() ? Precision::single_precision : Precision::double_precision;
}

std::string_view GuccioneForces::simd_isa() const { return m_sampled ? m_sampled->kernel.isa : ""; }

void GuccioneForces::use_simd_isa(std::string_view isa) {
  CARDIO_CHECK(m_sampled, "the one-point element has no SIMD loop");
  for (const detail::SampledKernel& k : detail::runnable_sampled_kernels())
    if (isa == k.isa) {
      m_sampled->kernel = k;
      return;
    }
  CARDIO_FAIL("this CPU cannot run the '" << isa << "' build of the sampled-axes loop");
}

std::vector<std::string> runnable_simd_isas() {
  std::vector<std::string> names;
  for (const detail::SampledKernel& k : detail::runnable_sampled_kernels()) names.emplace_back(k.isa);
  return names;
}

SampledElementData GuccioneForces::sampled_element(std::int32_t e) const {
  CARDIO_CHECK(m_sampled && e >= 0 && std::size_t(e) < m_hexes.size(), "no sampled-axes element " << e);
  return m_sampled->get(std::size_t(e));
}

void GuccioneForces::check_inputs(const ForceInputs& in) const {
  const std::size_t n = m_hexes.size();
  const auto& Ta = in.active_tension;
  const auto& activation = in.activation;
  CARDIO_CHECK(Ta.empty() || Ta.size() == n, "active tension has " << Ta.size() << " values for " << n << " elements");
  CARDIO_CHECK(activation.empty() || activation.size() == n,
               "activation has " << activation.size() << " values for " << n << " elements");
  // Runs at every force evaluation: a vectorised test first, the element-by-element walk only to name
  // the bad element (a serial walk was about 1 % of a beat at 25 000 elements).
  const auto Ta_values = Eigen::Map<const Eigen::ArrayXd>(Ta.data(), Eigen::Index(Ta.size()));
  if (!Ta_values.allFinite())
    for (std::size_t e = 0; e < Ta.size(); ++e)
      CARDIO_CHECK(std::isfinite(Ta[e]), "active tension of element " << e << " is " << Ta[e] << " kPa");
  const auto a_values = Eigen::Map<const Eigen::ArrayXd>(activation.data(), Eigen::Index(activation.size()));
  if (!((a_values >= 0).all() && (a_values <= 1).all()))
    for (std::size_t e = 0; e < activation.size(); ++e)
      CARDIO_CHECK(activation[e] >= 0 && activation[e] <= 1,
                   "activation of element " << e << " is " << activation[e] << " (must be in [0, 1])");
}

namespace {
// Element i's value of a per-element input (zero when the input is empty).
double value_at(std::span<const double> values, std::size_t i) { return values.empty() ? 0.0 : values[i]; }
}  // namespace

double GuccioneForces::element_forces(std::int32_t e, double Ta, double a, const NodeMatrix& x, const NodeMatrix* v,
                                      NodeMatrix& f) const {
  const std::size_t i = std::size_t(e);
  const GuccioneLaw& law = m_laws[m_material[i]];
  if (m_kind == ElementKind::sampled_axes) return sampled_element_forces(m_sampled->get(i), law, Ta, a, x, v, f);
  return guccione_element_forces(m_data[i], &m_hg[i], law, Ta, a, x, v, f);
}

void GuccioneForces::do_add_forces(const Eigen::Matrix3Xd& x, const Eigen::Matrix3Xd& v, const ForceInputs& inputs,
                                   Eigen::Matrix3Xd& f) const {
  check_inputs(inputs);
  const bool with_v = v.cols() == x.cols() && max_damping_time() > 0;
  if (m_sampled) {
    detail::SampledBatchInput in;
    in.x = x.data();
    in.v = with_v ? v.data() : nullptr;
    in.f = f.data();
    in.hexes = m_hexes.data()->data();
    in.n_elements = static_cast<std::int32_t>(m_hexes.size());
    const bool single = m_sampled->single();
    in.blocks = single ? nullptr : m_sampled->blocks.data();
    in.single_blocks = single ? m_sampled->single_blocks.data() : nullptr;
    in.material = m_material.data();
    in.material_constants = m_sampled->material_constants.data();
    in.Ta = inputs.active_tension.empty() ? nullptr : inputs.active_tension.data();
    in.activation = inputs.activation.empty() ? nullptr : inputs.activation.data();
    // Single-precision arithmetic only where it was asked for and the constants are stored so.
    const detail::SampledRangeKernel run = single && inputs.precision == Precision::single_precision
                                               ? m_sampled->kernel.run_single
                                               : m_sampled->kernel.run;
    for_each_chunk(m_schedule, [&](std::int32_t begin, std::int32_t end) { run(in, begin, end); });
    return;
  }
  // The schedule makes the scatter race-free and its summation order thread-count independent.
  for_each_element(m_schedule, [&](std::int32_t e) {
    const Hex& hx = m_hexes[std::size_t(e)];
    const NodeMatrix xe = gather(x, hx);
    NodeMatrix ve, fe = NodeMatrix::Zero();
    if (with_v) ve = gather(v, hx);
    const std::size_t i = std::size_t(e);
    element_forces(e, value_at(inputs.active_tension, i), value_at(inputs.activation, i), xe, with_v ? &ve : nullptr,
                   fe);
    for (int k = 0; k < 8; ++k) f.col(hx[k]) += fe.col(k);
  });
}

void GuccioneForces::do_element_stiffness(std::int32_t e, const Eigen::Matrix3Xd& x, const ForceInputs& in,
                                          Tangent part, ElementStiffness& K) const {
  CARDIO_CHECK(m_kind == ElementKind::sampled_axes, "the one-point element has no tangent stiffness");
  const std::size_t i = std::size_t(e);
  CARDIO_CHECK(in.active_tension.empty() || in.active_tension.size() == m_hexes.size(),
               "active tension has " << in.active_tension.size() << " values for " << m_hexes.size() << " elements");
  CARDIO_CHECK(in.activation.empty() || in.activation.size() == m_hexes.size(),
               "activation has " << in.activation.size() << " values for " << m_hexes.size() << " elements");
  const double Ta = value_at(in.active_tension, i), a = value_at(in.activation, i);
  // The kernel on SIMD dual numbers (sampled_axes_dual.hpp); sampled_element_stiffness is its
  // Eigen-AutoDiff reference.
  const NodeMatrix xe = gather(x, m_hexes[i]);
  Eigen::Matrix<double, 24, 24, Eigen::RowMajor> rows;
  m_sampled->kernel.stiffness(detail::sampled_constants(m_sampled->get(i), m_laws[m_material[i]], Ta, a), xe.data(),
                              part == Tangent::exact, rows.data());
  K = rows;
}

double GuccioneForces::do_energy(const Eigen::Matrix3Xd& x, const ForceInputs& in) const {
  check_inputs(in);
  return deterministic_sum(static_cast<std::int64_t>(m_hexes.size()), [&](std::int64_t e) {
    NodeMatrix fe = NodeMatrix::Zero();
    const std::size_t i = std::size_t(e);
    return element_forces(std::int32_t(e), value_at(in.active_tension, i), value_at(in.activation, i),
                          gather(x, m_hexes[i]), nullptr, fe);
  });
}

double GuccioneForces::max_damping_time() const {
  double t = 0;
  for (const auto& m : m_laws) t = std::max(t, m.damping_time);
  return t;
}

}  // namespace cardio::mechanics
