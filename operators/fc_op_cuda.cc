#include "operators/fc_op_cuda.h"

#include "operators/fc_op.h"
#include "operators/op_util_cuda.h"

namespace crossbow {
namespace {

// C[m, n] = op(A) op(B) + beta C for row-major matrices (op = transpose where asked), on the
// context's cuBLAS handle, whose pedantic math mode keeps TF32 out. cuBLAS is column-major and
// a row-major matrix read column-major is its transpose, so it computes C^T = op(B)^T op(A)^T.
void RowMajorGemm(const OperatorDef& def, CUDAContext* context, bool trans_a, bool trans_b,
                  int64_t m, int64_t n, int64_t k, const float* a, const float* b, float beta,
                  float* c) {
  const int mi = cuda::ToBlasInt(def, m, "rows"), ni = cuda::ToBlasInt(def, n, "columns"),
            ki = cuda::ToBlasInt(def, k, "inner dimension");
  const float alpha = 1.f;
  CUBLAS_CHECK(cublasSgemm(context->cublas(), trans_b ? CUBLAS_OP_T : CUBLAS_OP_N,
                           trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, ni, mi, ki, &alpha, b,
                           trans_b ? ki : ni, a, trans_a ? mi : ki, &beta, c, ni),
               def.Label(), ": [", m, ", ", k, "] x [", k, ", ", n, "]");
}

// Y = X W^T + b with X [N, ...] read as [N, K] (CUDA tensors are row-major).
class FCCudaOp final : public Operator<CUDAContext> {
 public:
  using Operator::Operator;

  void Run() override {
    const Tensor& x = Input(0);
    const Tensor& w = Input(1);
    const bool bias = InputSize() == 3;
    const Shape y_shape =
        FCOutputShape(def(), x.shape(), w.shape(), bias ? &Input(2).shape() : nullptr);
    const int64_t n = y_shape[0], m = y_shape[1], k = w.dim(1);
    Tensor* y = Output(0);
    y->Resize(y_shape);
    if (y->numel() == 0) return;
    float* out = y->mutable_data<float>();
    if (bias) {
      cuda::LaunchBroadcastRows(Input(2).data<float>(), out, n, m, context_->stream());
      cuda::CheckLaunch(def(), "the bias kernel");
    } else if (k == 0) {
      CUDA_CHECK(cudaMemsetAsync(out, 0, y->nbytes(), context_->stream()), def().Label());
    }
    if (k > 0) {
      RowMajorGemm(def(), context_, false, true, n, m, k, x.data<float>(), w.data<float>(),
                   bias ? 1.f : 0.f, out);
    }
  }
};

// (X, W, dY) -> (dW = dY^T X, db = column sums of dY, dX = dY W); unnamed outputs are skipped.
class FCGradientCudaOp final : public Operator<CUDAContext> {
 public:
  using Operator::Operator;

  void Run() override {
    const Tensor& x = Input(0);
    const Tensor& w = Input(1);
    const Tensor& dy = Input(2);
    const Shape y_shape = FCOutputShape(def(), x.shape(), w.shape(), nullptr);
    EnforceInputShape(2, y_shape);
    const int64_t n = y_shape[0], m = y_shape[1], k = w.dim(1);
    if (HasOutput(0)) {
      Tensor* dw = Output(0);
      dw->Resize(w.shape());
      Gemm(dw, true, false, m, k, n, dy.data<float>(), x.data<float>());
    }
    if (HasOutput(1)) {
      Tensor* db = Output(1);
      db->Resize({m});
      cuda::LaunchColumnSums(dy.data<float>(), db->mutable_data<float>(), n, m, context_->stream());
      cuda::CheckLaunch(def(), "the bias gradient kernel");
    }
    if (HasOutput(2)) {
      Tensor* dx = Output(2);
      dx->Resize(x.shape());
      Gemm(dx, false, false, n, k, m, dy.data<float>(), w.data<float>());
    }
  }

 private:
  // out = op(A) op(B); zeros when the sum is empty (no examples), where cuBLAS would not write.
  void Gemm(Tensor* out, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
            const float* a, const float* b) {
    if (out->numel() == 0) return;
    if (k == 0) {
      CUDA_CHECK(cudaMemsetAsync(out->raw_data(), 0, out->nbytes(), context_->stream()),
                 def().Label());
      return;
    }
    RowMajorGemm(def(), context_, trans_a, trans_b, m, n, k, a, b, 0.f, out->mutable_data<float>());
  }
};

}  // namespace

REGISTER_CUDA_OPERATOR(FC, FCCudaOp);
REGISTER_CUDA_OPERATOR(FCGradient, FCGradientCudaOp);

}  // namespace crossbow
