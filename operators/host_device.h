#pragma once

// Marks inline functions that both the CPU kernels and nvcc's device code call.
#ifdef __CUDACC__
#define CROSSBOW_HOST_DEVICE __host__ __device__
#else
#define CROSSBOW_HOST_DEVICE
#endif
