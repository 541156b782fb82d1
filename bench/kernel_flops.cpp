// Floating-point operations of the heart's element per element update: the sampled-axes kernel
// (mechanics/src/sampled_axes_kernel.hpp, private; read here on purpose) instantiated with a scalar
// that counts every +, -, *, / it executes. Used for the fraction of the machine's peak in
// docs/performance.md. Run: build/bench/cardio_kernel_flops
#include <cmath>
#include <cstdio>

namespace {
long g_ops = 0, g_divisions = 0, g_transcendental = 0;
}

/// A double that counts its arithmetic.
struct Counted {
  double v;
  Counted(double x = 0) : v(x) {}
  friend Counted operator+(Counted a, Counted b) { return ++g_ops, a.v + b.v; }
  friend Counted operator-(Counted a, Counted b) { return ++g_ops, a.v - b.v; }
  friend Counted operator*(Counted a, Counted b) { return ++g_ops, a.v * b.v; }
  friend Counted operator/(Counted a, Counted b) { return ++g_ops, ++g_divisions, a.v / b.v; }
  Counted& operator+=(Counted b) { return ++g_ops, v += b.v, *this; }
  Counted& operator-=(Counted b) { return ++g_ops, v -= b.v, *this; }
  friend bool operator>(Counted a, Counted b) { return a.v > b.v; }
};

#include "sampled_axes_kernel.hpp"

namespace cardio::mechanics::detail {
template <>
struct ScalarMath<Counted> {
  static Counted exp_minus_one(Counted q) { return ++g_transcendental, std::expm1(q.v); }
  static Counted two_thirds_power(Counted r) { return ++g_transcendental, std::cbrt(r.v) * std::cbrt(r.v); }
};
}  // namespace cardio::mechanics::detail

int main() {
  using namespace cardio::mechanics::detail;
  SampledConstants<Counted> d;
  for (int g = 0; g < kSampleCount; ++g) {
    for (int k = 0; k < 9; ++k) d.map[g].m[k] = k % 4 == 0 ? 1.0 : 0.0;  // unit cube, aligned frame
    d.weight[g] = 0.125;
  }
  d.volume = 1;
  // No cross-fibre tension, as hearts run by default.
  d.law = {.ir = {1.1, 0.95, 0.95},
           .C = 2,
           .Ta = 60,
           .Ta_s = 0,
           .Ta_n = 0,
           .b_f = 8,
           .b_t = 2,
           .b_fs = 4,
           .bulk = 1000,
           .viscosity = 0.02};
  ElementNodes<Counted> x, v, f;
  const int corner[8][3] = {{-1, -1, -1}, {1, -1, -1}, {1, 1, -1}, {-1, 1, -1},
                            {-1, -1, 1},  {1, -1, 1},  {1, 1, 1},  {-1, 1, 1}};
  for (int j = 0; j < 8; ++j)
    for (int i = 0; i < 3; ++i) {
      x.c[i][j] = 0.51 * corner[j][i] + 0.01 * i;
      v.c[i][j] = 0.001 * j;
    }
  for (const bool damped : {true, false}) {
    for (auto& row : f.c)
      for (Counted& value : row) value = 0.0;
    g_ops = g_divisions = g_transcendental = 0;
    bool valid = true;
    sampled_kernel(d, x, damped ? &v : nullptr, f, valid);
    std::printf("%s damping: %ld arithmetic operations (%ld divisions) and %ld transcendental calls per element\n",
                damped ? "with" : "without", g_ops, g_divisions, g_transcendental);
  }
}
