#include "data/mapped_read.h"

#include <setjmp.h>
#include <signal.h>

#include <mutex>

namespace crossbow::data {
namespace {

thread_local sigjmp_buf* t_jump = nullptr;  // set while this thread runs a guarded read
struct sigaction g_previous;

extern "C" void OnBusError(int signal, siginfo_t* info, void* context) {
  if (t_jump != nullptr) siglongjmp(*t_jump, 1);
  // Not a guarded read: what would have happened without this handler.
  sigaction(SIGBUS, &g_previous, nullptr);
  raise(signal);
}

void InstallHandler() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction action = {};
    action.sa_sigaction = OnBusError;
    action.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&action.sa_mask);
    sigaction(SIGBUS, &action, &g_previous);
  });
}

}  // namespace

bool ReadMappedPages(const std::function<void()>& read) {
  InstallHandler();
  sigjmp_buf jump;
  sigjmp_buf* const outer = t_jump;
  if (sigsetjmp(jump, 1) != 0) {
    t_jump = outer;
    return false;
  }
  t_jump = &jump;
  try {
    read();
  } catch (...) {
    t_jump = outer;
    throw;
  }
  t_jump = outer;
  return true;
}

}  // namespace crossbow::data
