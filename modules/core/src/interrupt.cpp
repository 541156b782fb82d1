#include "cardio/core/interrupt.hpp"

#include <csignal>

namespace cardio {
namespace {
volatile std::sig_atomic_t g_signal = 0;     // async-signal-safe: written by the handler only
void on_signal(int sig) { g_signal = sig; }  // internal linkage: no clash with other handlers
}  // namespace

void install_interrupt_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
}

int interrupt_signal() { return g_signal; }

void request_interrupt(int signal) { g_signal = signal; }

}  // namespace cardio
