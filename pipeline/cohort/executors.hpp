#pragma once
/// @file executors.hpp
/// The executors of `cardiac batch`, given a checked manifest and BATCH_DIR created and locked
/// (batch.cpp). They return the batch's exit code and throw on what keeps the batch from going on
/// (a file that cannot be written, a process that cannot be started). Internal to cohort/.
#include <iosfwd>

#include "cohort/batch.hpp"
#include "cohort/manifest.hpp"

namespace cardio::pipeline::batch {

/// Runs the cases here, o.jobs `cardiac run` children at a time (local_executor.cpp).
int run_local(const Manifest& m, const BatchOptions& o, std::ostream& out, std::ostream& err);

/// Writes the Slurm job array, and submits it and waits for it when asked (slurm_executor.cpp).
int run_slurm(const Manifest& m, const BatchOptions& o, std::ostream& out, std::ostream& err);

}  // namespace cardio::pipeline::batch
