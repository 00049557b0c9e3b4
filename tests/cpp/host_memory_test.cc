#include "crossbow/core/host_memory.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "crossbow/core/device_backend.h"
#include "crossbow/core/enforce.h"

namespace crossbow {
namespace {

TEST(HostMemory, AvailableIsPositiveAndAtMostTheHostsMemory) {
  const size_t total =
      static_cast<size_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t available = AvailableHostMemoryBytes();
  EXPECT_GT(available, 0u);
  EXPECT_LE(available, total);
}

// Linux would grant it (overcommit) and kill the process as the pages are written.
TEST(HostMemory, AnAllocationLargerThanTheMemoryLeftIsAnError) {
  // More than is left, however the memory left moves by a GiB meanwhile (the reserve).
  const size_t bytes = AvailableHostMemoryBytes();
  try {
    AllocateAligned(bytes);
    FAIL() << "allocated " << bytes << " bytes";
  } catch (const OutOfMemoryError& e) {
    EXPECT_NE(std::string(e.what()).find("out of host memory allocating " +
                                         std::to_string(bytes >> 20) + " MiB"),
              std::string::npos)
        << e.what();
  }
  EXPECT_NE(AllocateAligned(size_t{64} << 20), nullptr);  // a large one that fits
}

}  // namespace
}  // namespace crossbow
