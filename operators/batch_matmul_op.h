#pragma once

#include "crossbow/core/operator.h"
#include "operators/dnnl_utils.h"
#include "operators/reorder_cache.h"

namespace crossbow {

// The dimensions of one BatchMatMul: Y[n] [m, p] = op(A[n]) [m, k] op(B[n]) [k, p].
struct BatchMatMulDims {
  int64_t batch, m, k, p;
  bool trans_a, trans_b;
};

// Reads `trans_a` and `trans_b` and checks A and B: rank 3, the same batch, the inner
// dimensions equal; a ValueError naming the operator, the inputs and their shapes otherwise.
BatchMatMulDims BatchMatMulShape(const OperatorDef& def, const Shape& a, const Shape& b);

// Y[n] = op(A[n]) op(B[n]) for each n of the batch, op = transpose where `trans_a`/`trans_b`:
// SimpleSelfAttention's X X^T and (X X^T) conv(X). oneDNN's matmul; A and B in any layout
// (read as plain fp32), Y plain fp32. Its gradient is two more BatchMatMuls.
class BatchMatMulOp final : public Operator<CPUContext> {
 public:
  using Operator::Operator;
  void Run() override;

 private:
  dnnl::memory::desc a_md_, b_md_;
  dnnl::matmul primitive_;
  ReorderCache a_plain_, b_plain_;
};

}  // namespace crossbow
