#pragma once

#include <cstdint>

namespace crossbow {

// S-SGD's kernel (ssgd.cc on the CPU, ssgd.cu on a GPU; sync_kernel.h): the summed gradients
// divided by the summed image count, x *= 1 / *count (0 where the count is 0), the count read
// where it lives (on a GPU, on the device: the host never waits for it).
struct DivideByCount {
  static constexpr const char* kName = "DivideByCount";
  const float* count;
  float* x;
  int64_t n;
};

}  // namespace crossbow
