#pragma once

#include <array>
#include <map>
#include <set>
#include <string>

#include "crossbow/core/context.h"
#include "crossbow/core/enforce.h"

namespace crossbow {

// Every registered synchronisation kernel by name, with the device types it runs on (a test
// checks that a CUDA build has a GPU function for each).
inline std::map<std::string, std::set<DeviceType>>& SyncKernelDevices() {
  static std::map<std::string, std::set<DeviceType>> devices;
  return devices;
}

// A synchroniser's element-wise kernel: one function per device type, keyed by the struct of
// its named arguments `Args` (whose `kName` names it in errors). The file that owns the
// arithmetic registers it: <name>.cc the CPU function, <name>.cu the CUDA one (compiled in the
// CUDA build only), as operators register theirs; SyncBackend, which moves and orders data,
// never hears of it. LearnerTurn::Run and DeviceTurn::Run pick the function for the device.
template <typename Args>
class SyncKernel {
 public:
  // `context` orders the work: the learner's context, or its device's sync context (nullptr
  // on the CPU, where the function runs on the calling thread).
  using Fn = void (*)(const Args& args, ContextBase* context);

  static bool Register(DeviceType type, Fn fn) {
    Functions()[static_cast<size_t>(type)] = fn;
    SyncKernelDevices()[Args::kName].insert(type);
    return true;
  }
  static void Run(DeviceType type, const Args& args, ContextBase* context) {
    const Fn fn = Functions()[static_cast<size_t>(type)];
    CROSSBOW_ENFORCE(fn != nullptr, "synchronisation kernel ", Args::kName, " has no ",
                     DeviceName(type), " implementation in this build");
    fn(args, context);
  }

 private:
  // A function-local static: registrations run during static initialisation, in any order.
  static std::array<Fn, 2>& Functions() {
    static std::array<Fn, 2> functions{};  // by DeviceType: kCPU, kCUDA
    return functions;
  }
};

}  // namespace crossbow
