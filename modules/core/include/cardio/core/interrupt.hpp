#pragma once
/// @file interrupt.hpp
/// Graceful interruption: SIGTERM (Slurm pre-emption, time limit, scancel) and SIGINT (Ctrl-C)
/// only raise a flag, which long loops poll at a safe point (where they can write a checkpoint
/// and stop). The flag is process-wide by nature: a signal has no other place to go.
#include <stdexcept>
#include <string>

namespace cardio {

/// Exit status of a run stopped by a signal after writing its checkpoint (EX_TEMPFAIL of
/// sysexits.h: "try again later"); `cardiac run --resume OUTDIR` continues it.
inline constexpr int kExitInterrupted = 75;

/// Thrown by a loop that stopped on a signal after saving its state.
struct Interrupted : std::runtime_error {
  Interrupted(int signal, const std::string& what) : std::runtime_error(what), signal(signal) {}
  int signal;
};

/// Install the SIGTERM/SIGINT handlers (idempotent). A second SIGINT while a checkpoint is being
/// written is ignored until the loop polls again.
void install_interrupt_handlers();
/// The signal number received since the handlers were installed, or 0.
int interrupt_signal();
/// Raise the flag by hand (tests).
void request_interrupt(int signal);

}  // namespace cardio
