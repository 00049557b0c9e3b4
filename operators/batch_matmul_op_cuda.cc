// BatchMatMul on CUDA: one cublasSgemmStridedBatched on the context's handle (pedantic math:
// no TF32), through the CPU's shape rule (BatchMatMulShape).
#include "crossbow/core/context_cuda.h"
#include "operators/batch_matmul_op.h"
#include "operators/op_util_cuda.h"

namespace crossbow {
namespace {

class BatchMatMulCudaOp final : public Operator<CUDAContext> {
 public:
  using Operator::Operator;

  // cuBLAS is column-major, and a row-major matrix read column-major is its transpose, so
  // Y[n] = op(A[n]) op(B[n]) is issued as Y[n]^T = op(B[n])^T op(A[n])^T.
  void Run() override {
    const BatchMatMulDims d = BatchMatMulShape(def(), Input(0).shape(), Input(1).shape());
    Tensor* y = Output(0);
    y->Resize({d.batch, d.m, d.p});
    if (y->numel() == 0) return;
    if (d.k == 0) {
      CUDA_CHECK(cudaMemsetAsync(y->raw_data(), 0, y->nbytes(), context_->stream()), def().Label());
      return;
    }
    const int m = cuda::ToBlasInt(def(), d.m, "rows"), p = cuda::ToBlasInt(def(), d.p, "columns"),
              k = cuda::ToBlasInt(def(), d.k, "inner dimension"),
              batch = cuda::ToBlasInt(def(), d.batch, "batch");
    const float alpha = 1.f, beta = 0.f;
    CUBLAS_CHECK(cublasSgemmStridedBatched(
                     context_->cublas(), d.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N,
                     d.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, p, m, k, &alpha, Input(1).data<float>(),
                     d.trans_b ? k : p, d.k * d.p, Input(0).data<float>(), d.trans_a ? m : k,
                     d.m * d.k, &beta, y->mutable_data<float>(), p, d.m * d.p, batch),
                 def().Label(), ": ", d.batch, " x [", d.m, ", ", d.k, "] x [", d.k, ", ", d.p,
                 "]");
  }
};

}  // namespace

REGISTER_CUDA_OPERATOR(BatchMatMul, BatchMatMulCudaOp);

}  // namespace crossbow
