#include "cardio/fibres/laplace.hpp"

#include <Eigen/IterativeLinearSolvers>
#include <Eigen/SparseCore>
#include <algorithm>
#include <chrono>
#include <cmath>

#include "cardio/core/error.hpp"
#include "cardio/core/parallel.hpp"

namespace cardio::fibres {

VoxelDomain VoxelDomain::build(const imaging::Grid& grid, std::vector<std::int64_t> voxels) {
  CARDIO_CHECK(voxels.size() < std::size_t(std::numeric_limits<std::int32_t>::max()),
               "voxel domain of " << voxels.size() << " voxels exceeds the 32-bit neighbour table");
  for (std::size_t m = 0; m < voxels.size(); ++m) {
    CARDIO_CHECK(voxels[m] >= 0 && voxels[m] < grid.n_voxels(), "domain voxel " << voxels[m] << " is outside the grid");
    CARDIO_CHECK(m == 0 || voxels[m] > voxels[m - 1], "domain voxels must be strictly ascending");
  }
  VoxelDomain d;
  d.grid = grid;
  d.voxels = std::move(voxels);
  d.neighbours.assign(d.voxels.size(), {-1, -1, -1, -1, -1, -1});
  const auto& vox = d.voxels;
  parallel_for(d.size(), [&](std::int64_t m) {
    const imaging::Index3 ijk = grid.index(vox[std::size_t(m)]);
    for (int side = 0; side < 6; ++side) {
      imaging::Index3 n = ijk;
      n[side / 2] += (side % 2) ? 1 : -1;
      if (!grid.contains(n[0], n[1], n[2])) continue;
      const std::int64_t lin = grid.linear(n[0], n[1], n[2]);
      // Neighbours with a larger index lie after m, smaller ones before it.
      const auto first = (side % 2) ? vox.begin() + m + 1 : vox.begin();
      const auto last = (side % 2) ? vox.end() : vox.begin() + m;
      const auto it = std::lower_bound(first, last, lin);
      if (it != last && *it == lin) d.neighbours[std::size_t(m)][side] = std::int32_t(it - vox.begin());
    }
  });
  return d;
}

std::vector<double> solve_voxel_laplace(const VoxelDomain& domain, const std::vector<double>& fixed,
                                        const LaplaceSolverOptions& options, LaplaceStats* stats,
                                        const std::vector<double>* initial) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::int64_t n = domain.size();
  CARDIO_CHECK(std::int64_t(fixed.size()) == n,
               "Dirichlet vector has " << fixed.size() << " entries for " << n << " voxels");
  CARDIO_CHECK(!initial || std::int64_t(initial->size()) == n, "initial guess size mismatch");
  const Eigen::Vector3d w = domain.grid.spacing.cwiseProduct(domain.grid.spacing).cwiseInverse();  // 1/h_a^2

  // Free voxels, numbered in domain order (so each row's neighbours are ascending: -k, -j, -i, +i, +j, +k).
  std::vector<std::int32_t> free_index(std::size_t(n), -1);
  std::int32_t n_free = 0;
  for (std::int64_t m = 0; m < n; ++m)
    if (std::isnan(fixed[std::size_t(m)])) free_index[std::size_t(m)] = n_free++;

  // Every free component must reach a Dirichlet voxel (else the system is singular).
  {
    std::vector<std::uint8_t> seen(std::size_t(n), 0);
    std::vector<std::int32_t> stack;
    for (std::int64_t start = 0; start < n; ++start) {
      if (free_index[std::size_t(start)] < 0 || seen[std::size_t(start)]) continue;
      bool anchored = false;
      std::int64_t count = 0;
      stack.assign(1, std::int32_t(start));
      seen[std::size_t(start)] = 1;
      while (!stack.empty()) {
        const std::int32_t m = stack.back();
        stack.pop_back();
        ++count;
        for (std::int32_t q : domain.neighbours[std::size_t(m)]) {
          if (q < 0) continue;
          if (free_index[std::size_t(q)] < 0) {
            anchored = true;
          } else if (!seen[std::size_t(q)]) {
            seen[std::size_t(q)] = 1;
            stack.push_back(q);
          }
        }
      }
      if (!anchored) {
        const imaging::Index3 ijk = domain.grid.index(domain.voxels[std::size_t(start)]);
        CARDIO_FAIL("Laplace problem" << (stats && !stats->name.empty() ? " '" + stats->name + "'" : std::string())
                                      << ": a connected region of " << count << " voxels (first voxel (" << ijk[0]
                                      << "," << ijk[1] << "," << ijk[2]
                                      << ")) touches no Dirichlet boundary; remove islands or fix the boundary tags");
      }
    }
  }

  // Row-major CSR of the free-voxel system, filled directly (no triplets: ~14 M entries at 2 M unknowns).
  using SpMat = Eigen::SparseMatrix<double, Eigen::RowMajor, int>;
  SpMat A(n_free, n_free);
  Eigen::VectorXd b = Eigen::VectorXd::Zero(n_free);
  std::vector<int> row_nnz(std::size_t(n_free) + 1, 0);
  for (std::int64_t m = 0; m < n; ++m) {
    const std::int32_t r = free_index[std::size_t(m)];
    if (r < 0) continue;
    int c = 1;
    for (std::int32_t q : domain.neighbours[std::size_t(m)]) c += (q >= 0 && free_index[std::size_t(q)] >= 0);
    row_nnz[std::size_t(r) + 1] = c;
  }
  for (std::size_t r = 1; r < row_nnz.size(); ++r) row_nnz[r] += row_nnz[r - 1];
  A.resizeNonZeros(row_nnz.back());
  std::copy(row_nnz.begin(), row_nnz.end(), A.outerIndexPtr());
  int* inner = A.innerIndexPtr();
  double* value = A.valuePtr();
  static constexpr int kOrder[7] = {4, 2, 0, -1, 1, 3, 5};  // ascending linear index; -1 = diagonal
  parallel_for(n, [&](std::int64_t m) {
    const std::int32_t r = free_index[std::size_t(m)];
    if (r < 0) return;
    const auto& nb = domain.neighbours[std::size_t(m)];
    double diag = 0, rhs = 0;
    for (int side = 0; side < 6; ++side) {
      const std::int32_t q = nb[side];
      if (q < 0) continue;
      diag += w[side / 2];
      if (free_index[std::size_t(q)] < 0) rhs += w[side / 2] * fixed[std::size_t(q)];
    }
    int pos = row_nnz[std::size_t(r)];
    for (int side : kOrder) {
      if (side < 0) {
        inner[pos] = r;
        value[pos++] = diag;
        continue;
      }
      const std::int32_t q = nb[side];
      if (q < 0 || free_index[std::size_t(q)] < 0) continue;
      inner[pos] = free_index[std::size_t(q)];
      value[pos++] = -w[side / 2];
    }
    b[r] = rhs;
  });

  Eigen::VectorXd x0 = Eigen::VectorXd::Zero(n_free);
  if (initial)
    for (std::int64_t m = 0; m < n; ++m)
      if (free_index[std::size_t(m)] >= 0) x0[free_index[std::size_t(m)]] = (*initial)[std::size_t(m)];

  Eigen::ConjugateGradient<SpMat, Eigen::Lower | Eigen::Upper, Eigen::DiagonalPreconditioner<double>> cg;
  cg.setTolerance(options.tolerance);
  cg.setMaxIterations(options.max_iterations);
  Eigen::VectorXd x = x0;
  int iterations = 0;
  double error = 0;
  if (n_free > 0) {
    cg.compute(A);
    x = cg.solveWithGuess(b, x0);
    iterations = int(cg.iterations());
    error = cg.error();
    if (cg.info() != Eigen::Success)
      CARDIO_FAIL("Laplace problem" << (stats && !stats->name.empty() ? " '" + stats->name + "'" : std::string())
                                    << " did not converge: relative residual " << error << " after " << iterations
                                    << " CG iterations (" << n_free << " unknowns, tolerance " << options.tolerance
                                    << ")");
  }

  std::vector<double> u(static_cast<std::size_t>(n));
  for (std::int64_t m = 0; m < n; ++m) {
    const std::int32_t r = free_index[std::size_t(m)];
    u[std::size_t(m)] = r < 0 ? fixed[std::size_t(m)] : x[r];
  }
  if (stats) {
    stats->unknowns = n_free;
    stats->dirichlet = n - n_free;
    stats->iterations = iterations;
    stats->relative_residual = error;
    stats->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  return u;
}

Eigen::Matrix3Xd voxel_gradient(const VoxelDomain& domain, const std::vector<double>& values) {
  const std::int64_t n = domain.size();
  CARDIO_CHECK(std::int64_t(values.size()) == n, "field has " << values.size() << " values for " << n << " voxels");
  const Eigen::Matrix3d to_physical = domain.grid.direction * domain.grid.spacing.cwiseInverse().asDiagonal();
  Eigen::Matrix3Xd g(3, n);
  parallel_for(n, [&](std::int64_t m) {
    const auto& nb = domain.neighbours[std::size_t(m)];
    const double u = values[std::size_t(m)];
    Eigen::Vector3d gi;
    for (int a = 0; a < 3; ++a) {
      const std::int32_t lo = nb[2 * a], hi = nb[2 * a + 1];
      if (lo >= 0 && hi >= 0) {
        gi[a] = 0.5 * (values[std::size_t(hi)] - values[std::size_t(lo)]);
      } else if (hi >= 0) {
        gi[a] = values[std::size_t(hi)] - u;
      } else if (lo >= 0) {
        gi[a] = u - values[std::size_t(lo)];
      } else {
        gi[a] = 0.0;
      }
    }
    g.col(m) = to_physical * gi;
  });
  return g;
}

}  // namespace cardio::fibres
