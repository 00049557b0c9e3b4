#pragma once

#include <vector>

namespace crossbow {

// The cores this process may run on (its affinity mask), in increasing order.
std::vector<int> AvailableCores();

// Pins the calling thread to `cores`. Where the system does not allow it (a core outside the
// process's mask, no permission) the thread stays unpinned; the first such failure is logged.
void PinCurrentThread(const std::vector<int>& cores);

}  // namespace crossbow
