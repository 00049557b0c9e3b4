#include "crossbow/core/context.h"

#include <omp.h>

namespace crossbow {

const char* DeviceName(DeviceType type) { return type == DeviceType::kCPU ? "CPU" : "CUDA"; }

CPUContext::CPUContext(uint64_t seed, int num_threads)
    : engine_(dnnl::engine::kind::cpu, 0),
      stream_(engine_),
      rng_(seed),
      num_threads_(num_threads < 1 ? 1 : num_threads) {}

void CPUContext::BindThread() const { omp_set_num_threads(num_threads_); }

}  // namespace crossbow
