#pragma once
/// @file sampled_axes_kernel.hpp (private)
/// The sampled-axes element's energy and nodal forces (formulas in sampled_axes.hpp), written once
/// for any scalar T of the node positions and P of the element constants:
///   - T = P = double: the reference kernel (sampled_element_forces);
///   - T = AutoDiffScalar, P = double: the exact tangent (sampled_element_stiffness);
///   - T = P = xsimd batch: one element per lane (sampled_axes_simd.hpp, the production loop).
/// Header-only on purpose and free of Eigen: see small_matrix.hpp.
#include <cmath>
#include <utility>

#include "small_matrix.hpp"

namespace cardio::mechanics::detail {

inline constexpr int kSampleCount = 8;

/// The two transcendental functions of the kernel for a scalar type. The primary template serves
/// Eigen's AutoDiffScalar (found by argument-dependent lookup); double is specialised below, the
/// xsimd batches in sampled_axes_simd.hpp.
template <class T>
struct ScalarMath {
  static T exp_minus_one(const T& q) {
    using std::exp;
    return exp(q) - 1.0;
  }
  static T two_thirds_power(const T& r) {
    using std::pow;
    return pow(r, 2.0 / 3.0);
  }
};
template <>
struct ScalarMath<double> {
  static double exp_minus_one(double q) { return std::expm1(q); }
  static double two_thirds_power(double r) {
    const double c = std::cbrt(r);
    return c * c;
  }
};

/// Node coordinates or forces: c[i][j] is coordinate i of node j (VTK order).
template <class T>
struct ElementNodes {
  T c[3][8];
};

/// The hexahedron's 12 edges, 4 along each reference direction a: edge k of direction a runs from
/// node kEdge[a][k][0] to node kEdge[a][k][1] (VTK order; mesh.hpp), i.e. from corner sign -1 to +1.
inline constexpr int kEdge[3][4][2] = {
    {{0, 1}, {3, 2}, {4, 5}, {7, 6}}, {{0, 3}, {1, 2}, {4, 7}, {5, 6}}, {{0, 4}, {1, 5}, {2, 6}, {3, 7}}};

/// dx/dxi_a at xi is a bilinear blend of the 4 edges along a: sum_k (1 + s xi_b)(1 + t xi_c) / 8
/// times edge k, (s, t) the edge's corner signs across a. It does not depend on xi_a, so it takes
/// 4 values per direction, on the 4 Gauss lines parallel to xi_a (xi_b, xi_c = +-1/sqrt(3)); line q
/// passes by edge q. kLineWeight.w[a][q][k] is edge k's weight on line q: symmetric in q and k.
struct LineWeights {
  double w[3][4][4];
};
constexpr LineWeights line_weights() {
  constexpr int c[8][3] = {{-1, -1, -1}, {1, -1, -1}, {1, 1, -1}, {-1, 1, -1},
                           {-1, -1, 1},  {1, -1, 1},  {1, 1, 1},  {-1, 1, 1}};
  constexpr double r = 0.57735026918962576451;  // 1 / sqrt(3)
  LineWeights t{};
  for (int a = 0; a < 3; ++a)
    for (int q = 0; q < 4; ++q)
      for (int k = 0; k < 4; ++k) {
        const int n = kEdge[a][k][0], m = kEdge[a][q][0], b = (a + 1) % 3, e = (a + 2) % 3;
        t.w[a][q][k] = (1 + c[n][b] * c[m][b] * r) * (1 + c[n][e] * c[m][e] * r) / 8;
      }
  return t;
}
inline constexpr LineWeights kLineWeight = line_weights();

/// kLineOf[g][a]: the line along a through Gauss point g (corner sign of node g / sqrt(3)), the
/// one whose edge starts at node g's corner signs across a.
struct LineIndex {
  int q[8][3];
};
constexpr LineIndex line_index() {
  constexpr int c[8][3] = {{-1, -1, -1}, {1, -1, -1}, {1, 1, -1}, {-1, 1, -1},
                           {-1, -1, 1},  {1, -1, 1},  {1, 1, 1},  {-1, 1, 1}};
  LineIndex t{};
  for (int g = 0; g < 8; ++g)
    for (int a = 0; a < 3; ++a)
      for (int q = 0; q < 4; ++q) {
        const int m = kEdge[a][q][0], b = (a + 1) % 3, e = (a + 2) % 3;
        if (c[m][b] == c[g][b] && c[m][e] == c[g][e]) t.q[g][a] = q;
      }
  return t;
}
inline constexpr LineIndex kLineOf = line_index();

/// Edge vectors of an element (positions, velocities), edge forces, or the same quantities on the
/// Gauss lines: v[a][k][i] is coordinate i of edge (line) k along direction a.
template <class T>
struct ElementEdges {
  T v[3][4][3];
};

template <class T>
ElementEdges<T> element_edges(const ElementNodes<T>& x) {
  ElementEdges<T> e;
  for (int a = 0; a < 3; ++a)
    for (int k = 0; k < 4; ++k)
      for (int i = 0; i < 3; ++i) e.v[a][k][i] = x.c[i][kEdge[a][k][1]] - x.c[i][kEdge[a][k][0]];
  return e;
}

/// The blend of edges onto the Gauss lines (dx/dxi_a there) and, the weights being symmetric, its
/// transpose: line forces back to edge forces.
template <class T>
ElementEdges<T> blend_lines(const ElementEdges<T>& e) {
  ElementEdges<T> l;
  for (int a = 0; a < 3; ++a)
    for (int q = 0; q < 4; ++q) {
      const double(&w)[4] = kLineWeight.w[a][q];
      for (int i = 0; i < 3; ++i)
        l.v[a][q][i] = w[0] * e.v[a][0][i] + w[1] * e.v[a][1][i] + w[2] * e.v[a][2][i] + w[3] * e.v[a][3][i];
    }
  return l;
}

/// dx/dxi at sample g, from the line values (blend_lines of the edges).
template <class T>
Mat3<T> reference_gradient(const ElementEdges<T>& lines, int g) {
  Mat3<T> F;
  for (int a = 0; a < 3; ++a)
    for (int i = 0; i < 3; ++i) F(i, a) = lines.v[a][kLineOf.q[g][a]][i];
  return F;
}

/// The transpose of reference_gradient: line forces += H = dW/d(dx/dxi) at sample g.
template <class T>
void add_line_forces(const Mat3<T>& H, int g, ElementEdges<T>& line_force) {
  for (int a = 0; a < 3; ++a)
    for (int i = 0; i < 3; ++i) line_force.v[a][kLineOf.q[g][a]][i] += H(i, a);
}

/// Nodal forces of the edge forces G = dW/d(edge): f_end -= G, f_start += G.
template <class T>
void subtract_edge_forces(const ElementEdges<T>& G, ElementNodes<T>& f) {
  for (int a = 0; a < 3; ++a)
    for (int k = 0; k < 4; ++k)
      for (int i = 0; i < 3; ++i) {
        f.c[i][kEdge[a][k][1]] -= G.v[a][k][i];
        f.c[i][kEdge[a][k][0]] += G.v[a][k][i];
      }
}

/// The law of one element in its active state, per element (or lane). The active-strain option
/// (hyperelastic.hpp, ActiveFibre) gives the elastic law the fibre rest length 1 - beta a and the
/// cross-fibre ones 1 / sqrt(1 - beta a): E_e = (D M D - I) / 2 with D = diag(ir).
template <class P>
struct SampleLaw {
  P ir[3];       // inverse active rest lengths
  P C;           // stiffness with the gamma option [kPa]
  P Ta;          // active fibre tension [kPa]
  P Ta_s, Ta_n;  // cross-fibre active tensions n_s Ta and n_n Ta [kPa] (GuccioneLaw::cross_fibre)
  P b_f, b_t, b_fs;
  P bulk;       // kappa [kPa]
  P viscosity;  // tau C [kPa ms] of the viscous stress (0: none)
};

/// The element's constants: A_g = (dx/dxi)(xi_g) map_g with map_g = (dX/dxi)^-1 R_g (R_g the
/// sample's frame), Gauss weights w_g = det(dX/dxi)(xi_g) and V0 = sum_g w_g.
template <class P>
struct SampledConstants {
  Mat3<P> map[kSampleCount];
  P weight[kSampleCount];
  P volume;
  SampleLaw<P> law;
};

/// The law's per-element factors, formed once per element rather than at each sample.
template <class P>
struct LawFactors {
  P half_rest[3][3];  // ir_i ir_j / 2: E_e = half_rest . M - I / 2
  P stress[3][3];     // C moduli_ij ir_i ir_j: G_ij = e^Q stress_ij E_ij
  P viscous[3][3];    // tau C moduli_ij (ir_i ir_j)^2 / 2
  P half_tension[3];  // (Ta, Ta_s, Ta_n) / 2: the active potential sum_i half_tension_i (M_ii - 1)
  P half_tension_sum;
};

template <class P>
LawFactors<P> law_factors(const SampleLaw<P>& a) {
  const P moduli[3][3] = {{a.b_f, a.b_fs, a.b_fs}, {a.b_fs, a.b_t, a.b_t}, {a.b_fs, a.b_t, a.b_t}};
  LawFactors<P> k;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      const P rest = a.ir[i] * a.ir[j];
      k.half_rest[i][j] = 0.5 * rest;
      k.stress[i][j] = a.C * moduli[i][j] * rest;
      k.viscous[i][j] = 0.5 * a.viscosity * moduli[i][j] * rest * rest;
    }
  k.half_tension[0] = 0.5 * a.Ta;
  k.half_tension[1] = 0.5 * a.Ta_s;
  k.half_tension[2] = 0.5 * a.Ta_n;
  k.half_tension_sum = k.half_tension[0] + k.half_tension[1] + k.half_tension[2];
  return k;
}

/// Energy density [kPa] at the (barred) metric M = A^T A and G = 2 dW/dM (w.r.t. the total axes):
/// G = D S D with S = dW/dE_e (Guccione et al. 1991, Q and S as in hyperelastic.hpp), plus Ta on
/// G_ff (potential Ta E_ff, Land et al. 2015 eq. 3) and the cross-fibre tensions on G_ss and G_nn
/// (potential Ta_s E_ss + Ta_n E_nn; E of the total axes, as for the fibre).
template <class T, class P>
T energy_density(const SampleLaw<P>& a, const LawFactors<P>& k, const Mat3<T>& M, Mat3<T>& G) {
  Mat3<T> E;
  for (int j = 0; j < 3; ++j)
    for (int i = 0; i <= j; ++i) E(i, j) = E(j, i) = M(i, j) * k.half_rest[i][j] - (i == j ? 0.5 : 0.0);
  const T Q = a.b_f * (E(0, 0) * E(0, 0)) +
              a.b_t * (E(1, 1) * E(1, 1) + E(2, 2) * E(2, 2) + 2.0 * (E(1, 2) * E(1, 2))) +
              2.0 * a.b_fs * (E(0, 1) * E(0, 1) + E(0, 2) * E(0, 2));
  const T e_minus_one = ScalarMath<T>::exp_minus_one(Q);
  const T e_Q = e_minus_one + 1.0;  // S = C e^Q (1/2) dQ/dE
  for (int j = 0; j < 3; ++j)
    for (int i = 0; i <= j; ++i) G(i, j) = G(j, i) = (e_Q * E(i, j)) * k.stress[i][j];
  G(0, 0) += a.Ta;
  G(1, 1) += a.Ta_s;
  G(2, 2) += a.Ta_n;
  const T active = k.half_tension[0] * M(0, 0) + k.half_tension[1] * M(1, 1) + k.half_tension[2] * M(2, 2);
  return 0.5 * a.C * e_minus_one + (active - k.half_tension_sum);
}

/// Viscous G = D (tau C_small : dE/dt) D for the metric rate N + N^T, N = A^T dA/dt.
template <class T, class P>
Mat3<T> viscous_g(const LawFactors<P>& k, const Mat3<T>& N) {
  Mat3<T> G;
  for (int j = 0; j < 3; ++j)
    for (int i = 0; i <= j; ++i) G(i, j) = G(j, i) = k.viscous[i][j] * (N(i, j) + N(j, i));
  return G;
}

/// x with its derivatives dropped (dual numbers overload it; sampled_axes_dual.hpp): plain values
/// have none.
template <class T>
T without_derivatives(const T& x) {
  return x;
}

/// Line forces += c_g w_g cof(A_g) map_g^T = c_g cof(dx/dxi at g): det map_g = 1 / w_g, the frame
/// being right-handed (sampled_element_data checks it). kVolumetricGeometry false: the cofactors'
/// derivatives dropped.
template <bool kVolumetricGeometry, class T>
void add_cofactor_line_forces(const ElementEdges<T>& lines, const T (&c)[kSampleCount], ElementEdges<T>& line_force) {
  for (int g = 0; g < kSampleCount; ++g) {
    Mat3<T> cof = cofactor(reference_gradient(lines, g));
    if constexpr (!kVolumetricGeometry)
      for (int k = 0; k < 9; ++k) cof.m[k] = without_derivatives(cof.m[k]);
    for (int k = 0; k < 9; ++k) cof.m[k] = c[g] * cof.m[k];
    add_line_forces(cof, g, line_force);
  }
}

/// Elastic energy of the element at x; adds its nodal forces -dW/dx into f and, with v, the
/// viscous forces of the law's damping.
/// `valid` is false (per lane) when a sample is inverted (J_g <= 0 or NaN): the caller then
/// replaces energy and forces by NaN (an inverted sample has no F-bar energy).
/// kVolumetricGeometry false: on dual numbers, the tangent without the volumetric and F-bar terms'
/// geometric part, their cofactors' derivatives (mechanics::Tangent); the forces are the same.
template <bool kVolumetricGeometry = true, class T, class P, class Mask>
T sampled_kernel(const SampledConstants<P>& d, const ElementNodes<T>& x, const ElementNodes<T>* v, ElementNodes<T>& f,
                 Mask& valid) {
  const ElementEdges<T> lines = blend_lines(element_edges(x));
  const LawFactors<P> law = law_factors(d.law);
  Mat3<T> A[kSampleCount];
  T J[kSampleCount];
  T volume = T(0.0);
  for (int g = 0; g < kSampleCount; ++g) {
    A[g] = times(reference_gradient(lines, g), d.map[g]);
    J[g] = determinant(A[g]);
    volume += d.weight[g] * J[g];
    valid = valid & (J[g] > T(0.0));
  }
  // Mean dilatation: W_vol = V0 kappa/2 (Jbar - 1)^2, dW_vol/dA_g = kappa (Jbar - 1) w_g cof(A_g).
  const T Jbar = volume / d.volume;
  const T p = d.law.bulk * (Jbar - 1.0);
  T W = 0.5 * d.volume * d.law.bulk * ((Jbar - 1.0) * (Jbar - 1.0));

  // F-bar (de Souza Neto et al. 1996, eq. 7): the law sees Fbar_g = (Jbar / J_g)^(1/3) F_g, i.e.
  // Mbar_g = s_g A_g^T A_g with s_g = (Jbar / J_g)^(2/3). ds_g = 2/3 s_g (dln Jbar - dln J_g) adds
  // beta_g (w_h cof A_h / v - delta_gh cof A_g / J_g) to dW/dA_h, beta_g = s_g/3 G_g : M_g.
  // dW/dA_g = w_g (A_g G_g + c_g cof A_g) with c_g = p - beta_g / J_g + sum_h w_h beta_h / v.
  ElementEdges<T> line_force;  // dW/d(dx/dxi) on the Gauss lines
  for (auto& direction : line_force.v)
    for (auto& line : direction)
      for (T& value : line) value = T(0.0);
  ElementEdges<T> rate_lines;
  if (v != nullptr) rate_lines = blend_lines(element_edges(*v));
  T c[kSampleCount];
  T beta_sum = T(0.0);  // sum_g w_g beta_g
  for (int g = 0; g < kSampleCount; ++g) {
    const T inv_J = 1.0 / J[g];  // one division per sample (a 512-bit division costs ~16 FMAs)
    const T s = ScalarMath<T>::two_thirds_power(Jbar * inv_J);
    const Mat3<T> M = gram(A[g]);  // l_a . l_b (unit rest lengths)
    Mat3<T> sM, G;
    for (int k = 0; k < 9; ++k) sM.m[k] = s * M.m[k];
    W += d.weight[g] * energy_density(d.law, law, sM, G);
    const T beta = s * (1.0 / 3.0) * contract_symmetric(G, M);
    beta_sum += d.weight[g] * beta;
    c[g] = p - beta * inv_J;
    const T ws = d.weight[g] * s;
    if (v != nullptr) {  // viscous dW/dA_g = A_g G_visc, unbarred
      const Mat3<T> N = transposed_times(A[g], times(reference_gradient(rate_lines, g), d.map[g]));
      const Mat3<T> Gv = viscous_g(law, N);
      for (int k = 0; k < 9; ++k) G.m[k] = ws * G.m[k] + d.weight[g] * Gv.m[k];
    } else {
      for (int k = 0; k < 9; ++k) G.m[k] = ws * G.m[k];
    }
    // dW/d(dx/dxi) = dW/dA_g map_g^T: the A_g G_g part here, the cofactor part after the loop.
    add_line_forces(times_transposed(times(A[g], G), d.map[g]), g, line_force);
  }
  const T jbar_term = beta_sum / volume;
  for (T& value : c) value = value + jbar_term;
  add_cofactor_line_forces<kVolumetricGeometry>(lines, c, line_force);
  subtract_edge_forces(blend_lines(line_force), f);
  return W;
}

}  // namespace cardio::mechanics::detail
