#include "operators/op_util_cuda.h"

#include <limits>

namespace crossbow::cuda {

void CopyOnStream(const OperatorDef& def, const Tensor& src, const Shape& shape, Tensor* dst,
                  CUDAContext* context) {
  CROSSBOW_ENFORCE_VALUE(NumElements(shape) == src.numel(), def.Label(), ": cannot copy ",
                         src.DebugString(), " into shape ", ShapeString(shape));
  dst->Resize(shape, src.dtype());
  if (dst->raw_data() == src.raw_data() || src.nbytes() == 0) return;
  CUDA_CHECK(cudaMemcpyAsync(dst->raw_data(), src.raw_data(), src.nbytes(),
                             cudaMemcpyDeviceToDevice, context->stream()),
             def.Label(), ": copying ", src.DebugString());
}

void CopyRowsOnStream(const OperatorDef& def, void* dst, size_t dst_pitch, const void* src,
                      size_t src_pitch, size_t row_bytes, size_t rows, CUDAContext* context) {
  if (row_bytes == 0 || rows == 0) return;
  CUDA_CHECK(cudaMemcpy2DAsync(dst, dst_pitch, src, src_pitch, row_bytes, rows,
                               cudaMemcpyDeviceToDevice, context->stream()),
             def.Label(), ": copying ", rows, " rows of ", row_bytes, " bytes");
}

int ToBlasInt(const OperatorDef& def, int64_t n, const char* what) {
  CROSSBOW_ENFORCE_VALUE(n <= std::numeric_limits<int>::max(), def.Label(), ": ", what, " = ", n,
                         " is too large for cuBLAS (at most 2^31 - 1)");
  return static_cast<int>(n);
}

}  // namespace crossbow::cuda
