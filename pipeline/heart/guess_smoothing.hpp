#pragma once
/// @file guess_smoothing.hpp
/// Making a start for Newton out of an approximate solution (a coarse mesh's: coarse_start.hpp): unfold the elements it
/// inverts, then smooth it by explicit relaxation. An approximate solution is right in its long waves and wrong in
/// short ones (local volume mismatches that the stiff volume penalty turns into forces many times the load); explicit
/// dynamic relaxation removes short waves quickly, as a multigrid smoother does, and Newton then converges from there.
#include <Eigen/Core>
#include <ostream>

#include "cardio/mechanics/integrators.hpp"
#include "cardio/mechanics/mesh.hpp"
#include "cardio/mechanics/system.hpp"

namespace cardio::pipeline {

/// Replace the displacement u of every node of an element that rest + u inverts (a corner Jacobian
/// <= 0) by the mean over its elements' nodes, repeated until none is inverted, at most `sweeps`
/// times. Deterministic (Jacobi sweeps in node order).
void unfold_inverted_elements(const mechanics::HexMesh& mesh, Eigen::Matrix3Xd& u, int sweeps = 20);

/// Explicit dynamic relaxation of `state` at load fraction 1 of `path` until its relative residual is
/// no larger than the rest state's (1: the load itself), at most `max_iterations`. Returns the
/// iterations and the residual reached; a line in `log`.
mechanics::QuasiStaticResult smooth_guess(const mechanics::MassSpringSystem& sys, const mechanics::HexMesh& mesh,
                                          mechanics::NodeState& state, const mechanics::LoadPath& path,
                                          std::ostream* log, long max_iterations = 5000);

}  // namespace cardio::pipeline
