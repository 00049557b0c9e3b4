#pragma once

// Helpers shared by the CUDA operators of several families.
#include <cstdint>
#include <string>

#include "crossbow/core/check_cuda.h"
#include "crossbow/core/context_cuda.h"
#include "crossbow/core/operator.h"

namespace crossbow::cuda {

// dst = src's bytes in row-major order under `shape` (src's element count and dtype), copied on
// the context's stream; nothing is copied when dst shares src's storage (in place).
void CopyOnStream(const OperatorDef& def, const Tensor& src, const Shape& shape, Tensor* dst,
                  CUDAContext* context);

// Copies `rows` rows of `row_bytes` bytes from `src` (rows `src_pitch` bytes apart) to `dst`
// (rows `dst_pitch` apart) on the context's stream: a slice of a row-major tensor in one call.
void CopyRowsOnStream(const OperatorDef& def, void* dst, size_t dst_pitch, const void* src,
                      size_t src_pitch, size_t row_bytes, size_t rows, CUDAContext* context);

// Throws, naming the operator and `kernel`, when the last kernel launch failed.
inline void CheckLaunch(const OperatorDef& def, const char* kernel) {
  CUDA_CHECK(cudaGetLastError(), def.Label(), ": launching ", kernel);
}

// `n` as the int that cuBLAS takes; a ValueError naming the operator when it does not fit.
int ToBlasInt(const OperatorDef& def, int64_t n, const char* what);

}  // namespace crossbow::cuda
