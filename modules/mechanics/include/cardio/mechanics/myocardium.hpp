#pragma once
/// @file myocardium.hpp
/// The myocardium of a mesh: the Guccione law with active tension on every element, carried by
/// the sampled-axes element (sampled_axes.hpp, the default for hearts) or by the one-point
/// element with physical hourglass control (hyperelastic.hpp).
#include <Eigen/Core>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cardio/mechanics/hyperelastic.hpp"
#include "cardio/mechanics/internal_forces.hpp"
#include "cardio/mechanics/mesh.hpp"
#include "cardio/mechanics/sampled_axes.hpp"

namespace cardio::mechanics {
namespace detail {
struct SampledElements;
}

/// Which element carries the law (docs/calibration.md, "Which element").
enum class ElementKind {
  sampled_axes,  ///< axes at the 2x2x2 Gauss points, mean-dilatation volume term (sampled_axes.hpp);
                 ///< any hexahedron, fibre frames per sample; the default for hearts
  one_point,     ///< the centre axes + physical hourglass control; voxel parallelepipeds only
};

/// The builds of the sampled-axes element loop this CPU can run, widest first (sampled_axes_batch.hpp).
std::vector<std::string> runnable_simd_isas();

/// The whole mesh of Guccione elements: one-point elements (voxel-like parallelepipeds, axes
/// through the barycentre along the element frame) or sampled-axes elements (any hexahedron, the
/// mesh's sample frames).
class GuccioneForces final : public InternalForces {
 public:
  /// laws[k] is the law of material index k of the mesh. The mesh is copied in part. `storage`:
  /// the precision of the sampled-axes element's constants. In single precision they take half the
  /// memory, and add_forces runs the loop in single precision when the inputs ask for it
  /// (ForceInputs::precision, the explicit beat); every other evaluation computes in double on the
  /// stored (rounded) constants. The one-point element always stores double.
  GuccioneForces(const HexMesh& mesh, std::vector<GuccioneLaw> laws, ElementKind kind = ElementKind::one_point,
                 Precision storage = Precision::double_precision);
  ~GuccioneForces() override;

  /// True: at fixed inputs (Ta, activation), add_forces without damping is exactly -grad energy,
  /// whose active potential sum V0 Ta E_ff can make it negative in a contracting element. When the
  /// caller changes Ta over time the energy is not conserved (work of the activation).
  bool conservative() const override { return true; }
  double max_damping_time() const override;
  std::string_view name() const override {
    return m_kind == ElementKind::sampled_axes ? "guccione_sampled_axes" : "guccione_one_point";
  }
  ElementKind kind() const { return m_kind; }
  /// The exact tangent (automatic differentiation) of the sampled-axes element; the one-point
  /// element has none (its quasi-static problems use dynamic relaxation).
  bool has_stiffness() const override { return m_kind == ElementKind::sampled_axes; }

  /// Instruction set of the sampled-axes element loop, the widest the CPU runs ("avx512", "avx2"
  /// or "baseline"); empty for the one-point element.
  std::string_view simd_isa() const;
  /// Run the loop built for `isa` instead (one of runnable_simd_isas()): for tests and benchmarks
  /// that compare the builds. Throws cardio::Error for an instruction set this CPU cannot run.
  void use_simd_isa(std::string_view isa);
  /// The precision of the stored sampled-axes constants (double for the one-point element).
  Precision storage_precision() const;
  /// Rest data of sampled-axes element e (a copy out of the SIMD blocks).
  SampledElementData sampled_element(std::int32_t e) const;

  /// One-point element data (empty for sampled-axes elements).
  const std::vector<BCElementData>& elements() const { return m_data; }
  const std::vector<GuccioneLaw>& laws() const { return m_laws; }
  const std::vector<GuccioneHourglass>& hourglass() const { return m_hg; }

 private:
  /// The active tension Ta [kPa] and activation a in [0, 1] of every element (ForceInputs): sizes
  /// (one value per element or none) and values checked.
  void check_inputs(const ForceInputs& in) const;
  void do_add_forces(const Eigen::Matrix3Xd& x, const Eigen::Matrix3Xd& v, const ForceInputs& in,
                     Eigen::Matrix3Xd& f) const override;
  double do_energy(const Eigen::Matrix3Xd& x, const ForceInputs& in) const override;
  void do_element_stiffness(std::int32_t e, const Eigen::Matrix3Xd& x, const ForceInputs& in, Tangent part,
                            ElementStiffness& K) const override;
  /// Forces and energy of element e at its node positions (the kind's kernel) with its Ta and a.
  double element_forces(std::int32_t e, double Ta, double a, const NodeMatrix& x, const NodeMatrix* v,
                        NodeMatrix& f) const;

  std::vector<Hex> m_hexes;
  std::vector<BCElementData> m_data;
  std::vector<std::uint16_t> m_material;
  std::vector<GuccioneLaw> m_laws;
  std::vector<GuccioneHourglass> m_hg;                 ///< per element (one-point)
  std::unique_ptr<detail::SampledElements> m_sampled;  ///< SIMD blocks (sampled axes)
  ElementKind m_kind = ElementKind::one_point;
  ElementSchedule m_schedule;
};

}  // namespace cardio::mechanics
