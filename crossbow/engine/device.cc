#include "crossbow/engine/device.h"

#include <glog/logging.h>
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <set>
#include <sstream>
#include <string>

#include "crossbow/comm/process_group.h"
#include "crossbow/engine/engine.h"

namespace crossbow {
namespace {

int ParseCore(const std::string& text, const std::string& item) {
  size_t used = 0;
  int core = -1;
  try {
    core = std::stoi(text, &used);
  } catch (const std::exception&) {
  }
  CROSSBOW_ENFORCE_VALUE(used == text.size() && core >= 0, "device '", item,
                         "': expected a core number, got '", text, "'");
  return core;
}

// "cpu:0-3" -> {0, 1, 2, 3}; "cpu:5" -> {5}.
std::vector<int> ParseCoreRange(const std::string& item) {
  const std::string range = item.substr(4);
  const size_t dash = range.find('-');
  const int first = ParseCore(range.substr(0, dash), item);
  const int last = dash == std::string::npos ? first : ParseCore(range.substr(dash + 1), item);
  CROSSBOW_ENFORCE_VALUE(first <= last, "device '", item, "': the range ", first, "-", last,
                         " is empty");
  std::vector<int> cores;
  for (int c = first; c <= last; ++c) cores.push_back(c);
  return cores;
}

std::string CoreList(const std::vector<int>& cores) {
  std::ostringstream out;
  for (size_t i = 0; i < cores.size(); ++i) {
    size_t j = i;
    while (j + 1 < cores.size() && cores[j + 1] == cores[j] + 1) ++j;
    out << (i ? "," : "") << cores[i];
    if (j > i) out << "-" << cores[j];
    i = j;
  }
  return out.str();
}

void CheckCoresExist(const std::vector<int>& cores) {
  const std::vector<int> available = AvailableCores();
  for (int c : cores) {
    CROSSBOW_ENFORCE_VALUE(std::find(available.begin(), available.end(), c) != available.end(),
                           "--devices names core ", c, ", but this process may run on cores ",
                           CoreList(available), " only (", available.size(), " cores)");
  }
}

}  // namespace

std::vector<int> AvailableCores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cores;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    for (int c = 0; c < CPU_SETSIZE; ++c) {
      if (CPU_ISSET(c, &set)) cores.push_back(c);
    }
  }
  if (cores.empty()) cores.push_back(0);
  return cores;
}

void PinCurrentThread(const std::vector<int>& cores) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cores) {
    if (c < CPU_SETSIZE) CPU_SET(c, &set);
  }
  const int rc = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
  if (rc == 0) return;
  static std::once_flag logged;
  std::call_once(logged, [&] {
    LOG(WARNING) << "cannot pin learner threads to their cores (" << std::strerror(rc)
                 << "); they run unpinned";
  });
}

void CheckDevices(const std::vector<DeviceLayout>& devices) {
  CROSSBOW_ENFORCE_VALUE(!devices.empty(), "the engine needs at least one device");
  const DeviceType type = devices[0].device.type;
  for (const auto& d : devices) {
    const std::string name = d.device.ToString();
    CROSSBOW_ENFORCE_VALUE(d.device.type == type, "devices ", devices[0].device.ToString(), " and ",
                           name, ": CPU and GPU devices cannot be mixed in one engine");
    if (d.device.type != DeviceType::kCUDA) {
      CheckCoresExist(d.cores);
      continue;
    }
    CROSSBOW_ENFORCE_VALUE(HasDeviceBackend(DeviceType::kCUDA), "device ", name, " was asked ",
                           "for but this Crossbow was built without CUDA (configure with ",
                           "-DCROSSBOW_CUDA=ON on a machine with the CUDA toolkit and cuDNN)");
    const int count = CudaDeviceCount();
    CROSSBOW_ENFORCE_VALUE(count > 0, "device ", name, " was asked for but no GPU is usable ",
                           "here (no NVIDIA driver or GPU); use --devices cpu");
    CROSSBOW_ENFORCE_VALUE(d.device.index < count, "device ", name, " does not exist; this ",
                           "machine has ", count, " GPU(s), cuda:0 to cuda:", count - 1);
  }
}

std::vector<DeviceLayout> ParseDevices(const std::string& spec) {
  std::vector<DeviceLayout> devices;
  std::set<int> used;
  size_t begin = 0;
  while (begin <= spec.size()) {
    const size_t end = std::min(spec.find(',', begin), spec.size());
    const std::string item = spec.substr(begin, end - begin);
    begin = end + 1;
    if (item == "cpu") {
      CROSSBOW_ENFORCE_VALUE(spec == "cpu", "devices '", spec,
                             "': 'cpu' (all cores) cannot be combined with other devices");
      devices.push_back({Device{}, AvailableCores()});
      break;
    }
    if (item == "cuda:local") {  // one rank per GPU: the rank's place on its machine
      devices.push_back({Device{DeviceType::kCUDA, LaunchedLocalRank()}, AvailableCores()});
      continue;
    }
    if (item.rfind("cuda", 0) == 0) {
      // A GPU's learner threads only issue work: they share the process's cores.
      devices.push_back({ParseDevice(item), AvailableCores()});
      continue;
    }
    CROSSBOW_ENFORCE_VALUE(item.rfind("cpu:", 0) == 0, "devices '", spec, "': unknown device '",
                           item, "'; expected 'cpu', 'cpu:FIRST-LAST' groups such as ",
                           "'cpu:0-1,cpu:2-3', or GPUs such as 'cuda:0,cuda:1'");
    DeviceLayout device{Device{}, ParseCoreRange(item)};
    for (int c : device.cores) {
      CROSSBOW_ENFORCE_VALUE(used.insert(c).second, "devices '", spec, "': core ", c,
                             " belongs to more than one device");
    }
    devices.push_back(std::move(device));
  }
  return devices;
}

}  // namespace crossbow
