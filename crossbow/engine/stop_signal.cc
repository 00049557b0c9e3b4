#include "crossbow/engine/stop_signal.h"

#include <signal.h>

#include <atomic>

namespace crossbow {
namespace {

std::atomic<int> g_received{0};
struct sigaction g_previous_int, g_previous_term;

extern "C" void OnStopSignal(int signal) { g_received.store(signal); }

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

}  // namespace crossbow
