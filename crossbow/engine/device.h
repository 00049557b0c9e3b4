#pragma once

#include <vector>

namespace crossbow {

struct DeviceLayout;

// The cores this process may run on (its affinity mask), in increasing order.
std::vector<int> AvailableCores();

// Pins the calling thread to `cores`. Where the system does not allow it (a core outside the
// process's mask, no permission) the thread stays unpinned; the first such failure is logged.
void PinCurrentThread(const std::vector<int>& cores);

// Throws a ValueError, before any work, when the devices cannot be used together here: a GPU
// in a build without CUDA or on a machine without a usable GPU, a GPU that does not exist, CPU
// and GPU devices mixed.
void CheckDevices(const std::vector<DeviceLayout>& devices);

}  // namespace crossbow
