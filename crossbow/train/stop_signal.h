#pragma once

namespace crossbow {

// While alive, SIGINT and SIGTERM set a flag instead of ending the process, so that the
// training loop can write a checkpoint and stop between iterations; a second signal ends the
// process at once with 128 + its number. (The watchdog ends it too when the loop does not stop
// in time.) The previous handlers (Python's, for example) come back on destruction.
class StopSignalScope {
 public:
  StopSignalScope();
  ~StopSignalScope();
  StopSignalScope(const StopSignalScope&) = delete;
  StopSignalScope& operator=(const StopSignalScope&) = delete;

  // The signal received since construction, or 0.
  static int received();
};

// "SIGINT" or "SIGTERM", the two signals a StopSignalScope takes. Async-signal-safe.
const char* StopSignalName(int signal);

}  // namespace crossbow
