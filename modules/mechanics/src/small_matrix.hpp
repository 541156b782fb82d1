#pragma once
/// @file small_matrix.hpp (private)
/// A 3 x 3 matrix of any arithmetic scalar: double, Eigen's AutoDiffScalar (the exact tangent) or
/// an xsimd batch (one element per lane). Deliberately not Eigen: the SIMD translation units are
/// compiled for wider instruction sets than the rest, and must not instantiate code (Eigen's
/// double kernels) that the linker could pick for the whole program (sampled_axes_simd.hpp).
namespace cardio::mechanics::detail {

/// Column-major 3 x 3 matrix: (i, j) is m[i + 3 j].
template <class T>
struct Mat3 {
  T m[9];
  T& operator()(int i, int j) { return m[i + 3 * j]; }
  const T& operator()(int i, int j) const { return m[i + 3 * j]; }
};

/// A B.
template <class T, class S>
Mat3<T> times(const Mat3<T>& A, const Mat3<S>& B) {
  Mat3<T> C;
  for (int j = 0; j < 3; ++j)
    for (int i = 0; i < 3; ++i) C(i, j) = A(i, 0) * B(0, j) + A(i, 1) * B(1, j) + A(i, 2) * B(2, j);
  return C;
}

/// A B^T.
template <class T, class S>
Mat3<T> times_transposed(const Mat3<T>& A, const Mat3<S>& B) {
  Mat3<T> C;
  for (int j = 0; j < 3; ++j)
    for (int i = 0; i < 3; ++i) C(i, j) = A(i, 0) * B(j, 0) + A(i, 1) * B(j, 1) + A(i, 2) * B(j, 2);
  return C;
}

/// A^T B.
template <class T>
Mat3<T> transposed_times(const Mat3<T>& A, const Mat3<T>& B) {
  Mat3<T> C;
  for (int j = 0; j < 3; ++j)
    for (int i = 0; i < 3; ++i) C(i, j) = A(0, i) * B(0, j) + A(1, i) * B(1, j) + A(2, i) * B(2, j);
  return C;
}

/// A^T A, each product once (symmetric).
template <class T>
Mat3<T> gram(const Mat3<T>& A) {
  Mat3<T> C;
  for (int j = 0; j < 3; ++j)
    for (int i = 0; i <= j; ++i) C(i, j) = C(j, i) = A(0, i) * A(0, j) + A(1, i) * A(1, j) + A(2, i) * A(2, j);
  return C;
}

/// Cofactor matrix (d det A / dA): its columns are a_1 x a_2, a_2 x a_0, a_0 x a_1.
template <class T>
Mat3<T> cofactor(const Mat3<T>& A) {
  Mat3<T> c;
  for (int k = 0; k < 3; ++k) {
    const int a = (k + 1) % 3, b = (k + 2) % 3;
    c(0, k) = A(1, a) * A(2, b) - A(2, a) * A(1, b);
    c(1, k) = A(2, a) * A(0, b) - A(0, a) * A(2, b);
    c(2, k) = A(0, a) * A(1, b) - A(1, a) * A(0, b);
  }
  return c;
}

/// det A (expansion along the first column).
template <class T>
T determinant(const Mat3<T>& A) {
  return A(0, 0) * (A(1, 1) * A(2, 2) - A(2, 1) * A(1, 2)) + A(1, 0) * (A(2, 1) * A(0, 2) - A(0, 1) * A(2, 2)) +
         A(2, 0) * (A(0, 1) * A(1, 2) - A(1, 1) * A(0, 2));
}

/// sum_ij A_ij B_ij of two symmetric matrices, from their upper triangles.
template <class T>
T contract_symmetric(const Mat3<T>& A, const Mat3<T>& B) {
  const T off = A(0, 1) * B(0, 1) + A(0, 2) * B(0, 2) + A(1, 2) * B(1, 2);
  return A(0, 0) * B(0, 0) + A(1, 1) * B(1, 1) + A(2, 2) * B(2, 2) + 2.0 * off;
}

}  // namespace cardio::mechanics::detail
