// The production loop of the sampled-axes element (elements in SIMD lanes, one build per
// instruction set) against the element-by-element reference kernel, every term on: two materials,
// active tension and activation, damping, per-sample frames, a mesh whose element count is not a
// multiple of the vector width; in double, and in single precision against double. And inverted
// elements give NaN on their own nodes only.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "cardio/mechanics/block.hpp"
#include "cardio/mechanics/myocardium.hpp"
#include "test_support.hpp"

namespace cardio::mechanics {
namespace {

struct Case {
  HexMesh mesh;
  std::vector<GuccioneLaw> laws;
  std::vector<double> Ta, activation;
  Eigen::Matrix3Xd x, v;
};

Case mixed_case() {
  Case c;
  c.mesh = make_block({5, 4, 3, 0.9, Eigen::Vector3d(1, -2, 0.5)}, FibreField{});  // 60 elements
  std::mt19937_64 rng(29);
  const auto n = c.mesh.n_elements();
  c.mesh.sample_fibre.resize(3, 8 * n);
  c.mesh.sample_sheet.resize(3, 8 * n);
  for (Eigen::Index k = 0; k < c.mesh.sample_fibre.cols(); ++k) {
    const Eigen::Matrix3d R = testing::random_rotation(rng);
    c.mesh.sample_fibre.col(k) = R.col(0);
    c.mesh.sample_sheet.col(k) = R.col(1);
  }
  for (std::size_t e = 0; e < c.mesh.material.size(); ++e) c.mesh.material[e] = std::uint16_t(e % 3 == 0);
  GuccioneLaw a, b;
  a.bulk = 350;
  a.damping_time = 2;
  a.active.beta = 0.1;
  a.active.gamma = 0.3;
  a.cross_fibre = {0.2, 0.4};  // material b has none: the lanes mix both
  b.C = 10;
  b.b_f = b.b_t = b.b_fs = 1;
  b.bulk = 500;
  c.laws = {a, b};
  std::uniform_real_distribution<double> u(0, 1);
  for (std::int64_t e = 0; e < n; ++e) {
    c.Ta.push_back(60 * u(rng));
    c.activation.push_back(u(rng));
  }
  c.x = c.mesh.rest + 0.1 * Eigen::Matrix3Xd::Random(3, c.mesh.n_nodes());
  c.v = 0.05 * Eigen::Matrix3Xd::Random(3, c.mesh.n_nodes());
  return c;
}

// Element by element with the reference kernel, in element order.
Eigen::Matrix3Xd reference_forces(const Case& c, const GuccioneForces& model) {
  Eigen::Matrix3Xd f = Eigen::Matrix3Xd::Zero(3, c.x.cols());
  for (std::int32_t e = 0; e < std::int32_t(c.mesh.n_elements()); ++e) {
    const Hex& hex = c.mesh.hexes[std::size_t(e)];
    const NodeMatrix ve = gather(c.v, hex);
    NodeMatrix fe = NodeMatrix::Zero();
    sampled_element_forces(model.sampled_element(e), c.laws[c.mesh.material[std::size_t(e)]], c.Ta[std::size_t(e)],
                           c.activation[std::size_t(e)], gather(c.x, hex), &ve, fe);
    for (int j = 0; j < 8; ++j) f.col(hex[j]) += fe.col(j);
  }
  return f;
}

TEST(SampledAxesSimd, EveryRunnableBuildMatchesTheReferenceKernel) {
  const Case c = mixed_case();
  GuccioneForces model(c.mesh, c.laws, ElementKind::sampled_axes);
  const Eigen::Matrix3Xd expected = reference_forces(c, model);
  ASSERT_TRUE(expected.allFinite());
  const std::vector<std::string> isas = runnable_simd_isas();
  ASSERT_FALSE(isas.empty());
  EXPECT_EQ(std::string(model.simd_isa()), isas.front()) << "the widest build runs by default";
  for (const std::string& isa : isas) {
    model.use_simd_isa(isa);
    Eigen::Matrix3Xd f = Eigen::Matrix3Xd::Zero(3, c.x.cols());
    model.add_forces(c.x, c.v, {1.0, c.Ta, c.activation}, f);
    // The same formulas per element, in lanes: agreement to rounding (FMA contraction differs).
    EXPECT_LT((f - expected).cwiseAbs().maxCoeff(), 1e-12 * expected.cwiseAbs().maxCoeff()) << isa;
  }
  EXPECT_THROW(model.use_simd_isa("sse9"), Error);
}

TEST(SampledAxesSimd, SingleStorageInDoubleArithmeticMatchesTheReferenceOnItsRoundedConstants) {
  const Case c = mixed_case();
  GuccioneForces model(c.mesh, c.laws, ElementKind::sampled_axes, Precision::single_precision);
  EXPECT_EQ(model.storage_precision(), Precision::single_precision);
  const Eigen::Matrix3Xd expected = reference_forces(c, model);  // sampled_element: the stored values
  for (const std::string& isa : runnable_simd_isas()) {
    model.use_simd_isa(isa);
    Eigen::Matrix3Xd f = Eigen::Matrix3Xd::Zero(3, c.x.cols());
    model.add_forces(c.x, c.v, {1.0, c.Ta, c.activation}, f);  // double arithmetic (the default)
    EXPECT_LT((f - expected).cwiseAbs().maxCoeff(), 1e-12 * expected.cwiseAbs().maxCoeff()) << isa;
  }
}

// Single-precision arithmetic against the double model: the forces agree to a few single-precision
// roundings of the largest force, wherever the mesh sits (the nodes are gathered relative to each
// element's first node before rounding, so a far-away heart loses nothing).
TEST(SampledAxesSimd, SinglePrecisionForcesAgreeWithDoubleWhereverTheMeshSits) {
  const Case c = mixed_case();
  GuccioneForces exact(c.mesh, c.laws, ElementKind::sampled_axes);
  GuccioneForces single(c.mesh, c.laws, ElementKind::sampled_axes, Precision::single_precision);
  const Eigen::Matrix3Xd expected = reference_forces(c, exact);
  const double scale = expected.cwiseAbs().maxCoeff();
  const ForceInputs in{1.0, c.Ta, c.activation, Precision::single_precision};
  for (const Eigen::Vector3d& offset : {Eigen::Vector3d::Zero().eval(), Eigen::Vector3d(800, -1500, 2000)}) {
    const Eigen::Matrix3Xd x = c.x.colwise() + offset;
    for (const std::string& isa : runnable_simd_isas()) {
      single.use_simd_isa(isa);
      Eigen::Matrix3Xd f = Eigen::Matrix3Xd::Zero(3, x.cols());
      single.add_forces(x, c.v, in, f);
      const double error = (f - expected).cwiseAbs().maxCoeff() / scale;
      EXPECT_LT(error, 2e-6) << isa << ", offset " << offset.transpose();
      EXPECT_GT(error, 0.0) << isa << ": single precision should not reproduce double to the last bit";
    }
  }
}

TEST(SampledAxesSimd, EveryBuildsTangentMatchesTheAutoDiffReference) {
  const Case c = mixed_case();
  GuccioneForces model(c.mesh, c.laws, ElementKind::sampled_axes);
  for (const std::string& isa : runnable_simd_isas()) {
    model.use_simd_isa(isa);
    for (std::int32_t e : {0, 7, 37, 59}) {
      const std::size_t i = std::size_t(e);
      ElementStiffness K, reference;
      model.element_stiffness(e, c.x, {1.0, c.Ta, c.activation}, K);
      sampled_element_stiffness(model.sampled_element(e), c.laws[c.mesh.material[i]], c.Ta[i], c.activation[i],
                                gather(c.x, c.mesh.hexes[i]), reference);
      ASSERT_TRUE(reference.allFinite());
      EXPECT_LT((K - reference).cwiseAbs().maxCoeff(), 1e-11 * reference.cwiseAbs().maxCoeff())
          << isa << ", element " << e;
    }
  }
}

// Tangent::without_volumetric_geometry against an independent reference. For a unit cube of a
// nearly pure penalty material (C ~ 0) dilated homogeneously by 5 %, the energy is
// kappa/(2 V0) (v(x) - V0)^2 with v the trilinear volume (mechanics::hex_volume), so the exact
// tangent is kappa/V0 (g g^T + (v - V0) H) and the tangent without the geometric part is
// kappa/V0 g g^T, with g and H the gradient and Hessian of v by central differences. At rest
// (no stress) the two tangents are the same.
TEST(SampledAxesSimd, TangentWithoutVolumetricGeometryKeepsOnlyThePenaltysOuterProduct) {
  const HexMesh mesh = make_block({1, 1, 1, 1.0, Eigen::Vector3d(0.3, -0.2, 0.1)}, FibreField{});
  GuccioneLaw law;
  law.C = 1e-9;  // the penalty alone, to round-off
  law.bulk = 100;
  GuccioneForces model(mesh, {law}, ElementKind::sampled_axes);
  const NodeMatrix rest = gather(mesh.rest, mesh.hexes[0]);
  const Eigen::Vector3d centre = rest.rowwise().mean();
  const NodeMatrix x = (1.05 * (rest.colwise() - centre)).colwise() + centre;
  const double V0 = hex_volume(rest), v = hex_volume(x), h = 1e-4;
  const auto gradient = [&](const NodeMatrix& at) {
    Eigen::Matrix<double, 24, 1> g;
    for (int k = 0; k < 24; ++k) {
      NodeMatrix p = at, m = at;
      p(k % 3, k / 3) += h;
      m(k % 3, k / 3) -= h;
      g[k] = (hex_volume(p) - hex_volume(m)) / (2 * h);
    }
    return g;
  };
  const Eigen::Matrix<double, 24, 1> g = gradient(x);
  ElementStiffness H;
  for (int k = 0; k < 24; ++k) {
    NodeMatrix p = x, m = x;
    p(k % 3, k / 3) += h;
    m(k % 3, k / 3) -= h;
    H.col(k) = (gradient(p) - gradient(m)) / (2 * h);
  }
  const ElementStiffness outer = (law.bulk / V0) * g * g.transpose();
  const ElementStiffness exact_reference = outer + (law.bulk / V0) * (v - V0) * H;
  Eigen::Matrix3Xd positions = mesh.rest;
  for (int j = 0; j < 8; ++j) positions.col(mesh.hexes[0][std::size_t(j)]) = x.col(j);
  for (const std::string& isa : runnable_simd_isas()) {
    model.use_simd_isa(isa);
    ElementStiffness exact, without, exact_at_rest, without_at_rest;
    model.element_stiffness(0, positions, {}, exact);
    model.element_stiffness(0, positions, {}, without, Tangent::without_volumetric_geometry);
    const double scale = exact_reference.cwiseAbs().maxCoeff();
    EXPECT_LT((exact - exact_reference).cwiseAbs().maxCoeff(), 1e-5 * scale) << isa;
    EXPECT_LT((without - outer).cwiseAbs().maxCoeff(), 1e-5 * scale) << isa;
    EXPECT_GT((exact - without).cwiseAbs().maxCoeff(), 0.05 * scale) << isa << ": the left-out part matters here";
    model.element_stiffness(0, mesh.rest, {}, exact_at_rest);
    model.element_stiffness(0, mesh.rest, {}, without_at_rest, Tangent::without_volumetric_geometry);
    EXPECT_LT((exact_at_rest - without_at_rest).cwiseAbs().maxCoeff(), 1e-12 * exact_at_rest.cwiseAbs().maxCoeff())
        << isa;
  }
}

void expect_nan_on_inverted_element_only(const Case& c, Precision precision) {
  GuccioneForces model(c.mesh, c.laws, ElementKind::sampled_axes, precision);
  // Element 37: swap two opposite corners of its current shape (every sample inverts).
  const std::int32_t bad = 37;
  Eigen::Matrix3Xd x = c.mesh.rest;
  const Hex& hex = c.mesh.hexes[bad];
  x.col(hex[0]).swap(x.col(hex[6]));
  for (const std::string& isa : runnable_simd_isas()) {
    model.use_simd_isa(isa);
    Eigen::Matrix3Xd f = Eigen::Matrix3Xd::Zero(3, x.cols());
    model.add_forces(x, Eigen::Matrix3Xd(), ForceInputs{1.0, {}, {}, precision}, f);
    std::vector<bool> touched(std::size_t(x.cols()), false);
    for (std::size_t e = 0; e < c.mesh.hexes.size(); ++e) {
      bool neighbour = false;
      for (std::int32_t n : c.mesh.hexes[e]) neighbour |= n == hex[0] || n == hex[6];
      if (neighbour)  // elements sharing the swapped nodes are distorted too, possibly inverted
        for (std::int32_t n : c.mesh.hexes[e]) touched[std::size_t(n)] = true;
    }
    for (std::int32_t n : hex)
      EXPECT_TRUE(f.col(n).array().isNaN().all()) << isa << ", precision " << int(precision) << ", node " << n;
    for (Eigen::Index n = 0; n < x.cols(); ++n) {
      if (!touched[std::size_t(n)]) {
        EXPECT_TRUE(f.col(n).allFinite()) << isa << ", precision " << int(precision) << ", node " << n;
      }
    }
  }
}

TEST(SampledAxesSimd, AnInvertedElementGivesNaNOnItsOwnNodesOnly) {
  const Case c = mixed_case();
  for (const Precision precision : {Precision::double_precision, Precision::single_precision})
    expect_nan_on_inverted_element_only(c, precision);
}

}  // namespace
}  // namespace cardio::mechanics