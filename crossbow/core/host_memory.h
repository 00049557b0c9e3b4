#pragma once

#include <cstddef>

namespace crossbow {

// Bytes of host memory this process can still use: the kernel's MemAvailable (free memory plus
// the caches it can drop), less where a cgroup (v2) limit is nearer.
size_t AvailableHostMemoryBytes();

}  // namespace crossbow
