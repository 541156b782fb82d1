#pragma once
/// @file interrupt.hpp
/// Graceful interruption: SIGTERM (Slurm pre-emption, time limit, scancel) and SIGINT (Ctrl-C)
/// only raise a flag, which long loops poll at a safe point (where they can write a checkpoint
/// and stop). The flag is process-wide by nature: a signal has no other place to go.
namespace cardio {

/// Install the SIGTERM/SIGINT handlers (idempotent). A second SIGINT while a checkpoint is being
/// written is ignored until the loop polls again.
void install_interrupt_handlers();
/// The signal number received since the handlers were installed, or 0.
int interrupt_signal();
/// Raise the flag by hand (tests).
void request_interrupt(int signal);

}  // namespace cardio
