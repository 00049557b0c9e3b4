#include "crossbow/core/host_memory.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

namespace crossbow {
namespace {

// The first number of a file, or `fallback` where it is missing or not a number ("max").
size_t ReadBytes(const char* path, size_t fallback) {
  std::ifstream in(path);
  size_t value = 0;
  return in >> value ? value : fallback;
}

size_t MemAvailableBytes() {
  std::ifstream in("/proc/meminfo");
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string key;
    size_t kib = 0;
    if (fields >> key >> kib && key == "MemAvailable:") return kib << 10;
  }
  return static_cast<size_t>(sysconf(_SC_AVPHYS_PAGES)) *
         static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

}  // namespace

size_t AvailableHostMemoryBytes() {
  size_t available = MemAvailableBytes();
  constexpr size_t kUnlimited = ~size_t{0};
  const size_t limit = ReadBytes("/sys/fs/cgroup/memory.max", kUnlimited);
  if (limit != kUnlimited) {
    const size_t used = ReadBytes("/sys/fs/cgroup/memory.current", 0);
    available = std::min(available, limit > used ? limit - used : 0);
  }
  return available;
}

}  // namespace crossbow
