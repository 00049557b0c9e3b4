#include "crossbow/train/stop_signal.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

namespace crossbow {
namespace {

std::atomic<int> g_received{0};
struct sigaction g_previous_int, g_previous_term;

// Only async-signal-safe calls here: write(2) and _exit(2).
extern "C" void OnStopSignal(int signal) {
  if (g_received.exchange(signal) == 0) return;
  const char* message = signal == SIGINT
                            ? "\ncrossbow: second SIGINT, exiting at once (no checkpoint)\n"
                            : "\ncrossbow: second SIGTERM, exiting at once (no checkpoint)\n";
  if (write(STDERR_FILENO, message, std::strlen(message)) < 0) {
  }
  _exit(128 + signal);
}

}  // namespace

StopSignalScope::StopSignalScope() {
  g_received.store(0);
  struct sigaction action = {};
  action.sa_handler = OnStopSignal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, &g_previous_int);
  sigaction(SIGTERM, &action, &g_previous_term);
}

StopSignalScope::~StopSignalScope() {
  sigaction(SIGINT, &g_previous_int, nullptr);
  sigaction(SIGTERM, &g_previous_term, nullptr);
}

int StopSignalScope::received() { return g_received.load(); }

const char* StopSignalName(int signal) { return signal == SIGINT ? "SIGINT" : "SIGTERM"; }

}  // namespace crossbow
