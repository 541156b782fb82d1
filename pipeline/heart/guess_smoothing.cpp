#include "heart/guess_smoothing.hpp"

#include <vector>

namespace cardio::pipeline {

void unfold_inverted_elements(const mechanics::HexMesh& mesh, Eigen::Matrix3Xd& u, int sweeps) {
  for (int s = 0; s < sweeps; ++s) {
    const Eigen::Matrix3Xd x = mesh.rest + u;
    std::vector<char> bad(std::size_t(mesh.n_nodes()), 0);
    bool any = false;
    for (std::int64_t e = 0; e < mesh.n_elements(); ++e) {
      const auto& hex = mesh.hexes[std::size_t(e)];
      mechanics::NodeMatrix corners;
      for (int c = 0; c < 8; ++c) corners.col(c) = x.col(hex[std::size_t(c)]);
      if (mechanics::min_corner_jacobian(corners) > 0) continue;
      any = true;
      for (auto n : hex) bad[std::size_t(n)] = 1;
    }
    if (!any) return;
    Eigen::Matrix3Xd sum = Eigen::Matrix3Xd::Zero(3, mesh.n_nodes());
    Eigen::VectorXd count = Eigen::VectorXd::Zero(mesh.n_nodes());
    for (const auto& hex : mesh.hexes)
      for (auto n : hex)
        if (bad[std::size_t(n)]) {
          for (auto m : hex) sum.col(n) += u.col(m);
          count[n] += 8;
        }
    for (std::int64_t n = 0; n < mesh.n_nodes(); ++n)
      if (bad[std::size_t(n)]) u.col(n) = sum.col(n) / count[n];
  }
}

mechanics::QuasiStaticResult smooth_guess(const mechanics::MassSpringSystem& sys, const mechanics::HexMesh& mesh,
                                          mechanics::NodeState& state, const mechanics::LoadPath& path,
                                          std::ostream* log, long max_iterations) {
  mechanics::QuasiStaticOptions qs;
  qs.residual_tol = 1.0;
  qs.max_iterations = max_iterations;
  const mechanics::QuasiStaticResult r = mechanics::solve_quasi_static(sys, mesh, state, qs, path, 1.0, 1.0);
  if (log)
    *log << "start smoothed by " << r.iterations << " relaxation iterations (relative residual " << r.residual << ")"
         << std::endl;
  return r;
}

}  // namespace cardio::pipeline
