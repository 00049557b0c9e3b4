#include "operators/concat_op.h"
#include "operators/op_util_cuda.h"

namespace crossbow {
namespace {

// A row-major tensor split at `axis`: `outer` rows (the dimensions before it), each holding the
// parts' slices one after another; a part's slice is dim(axis) * inner elements.
struct ConcatRows {
  ConcatRows(const Shape& whole, int axis, DataType dtype) {
    outer = NumElements(Shape(whole.begin(), whole.begin() + axis));
    inner_bytes = NumElements(Shape(whole.begin() + axis + 1, whole.end())) * DataTypeSize(dtype);
    row_bytes = whole[axis] * inner_bytes;
  }
  size_t SliceBytes(const Tensor& part, int axis) const { return part.dim(axis) * inner_bytes; }
  size_t outer, inner_bytes, row_bytes;
};

std::vector<const Shape*> ShapesFrom(const OperatorBase& op, int first) {
  std::vector<const Shape*> shapes;
  for (int i = first; i < op.InputSize(); ++i) shapes.push_back(&op.Input(i).shape());
  return shapes;
}

// Y = the inputs joined along `axis`: one pitched copy per input.
class ConcatCudaOp final : public Operator<CUDAContext> {
 public:
  using Operator::Operator;

  void Run() override {
    const Shape y_shape = ConcatShape(def(), ShapesFrom(*this, 0), 0);
    const int axis = ConcatAxis(def(), Input(0).ndim());
    Tensor* y = Output(0);
    y->Resize(y_shape, Input(0).dtype());
    const ConcatRows rows(y_shape, axis, y->dtype());
    auto* dst = static_cast<uint8_t*>(y->raw_data());
    for (int i = 0; i < InputSize(); ++i) {
      const size_t slice = rows.SliceBytes(Input(i), axis);
      cuda::CopyRowsOnStream(def(), dst, rows.row_bytes, Input(i).raw_data(), slice, slice,
                             rows.outer, context_);
      dst += slice;
    }
  }
};

// dXi = the slice of dY that Xi filled; unnamed outputs are skipped.
class ConcatGradientCudaOp final : public Operator<CUDAContext> {
 public:
  ConcatGradientCudaOp(const OperatorDef& def, Workspace* ws, CUDAContext* context)
      : Operator(def, ws, context) {
    CROSSBOW_ENFORCE_VALUE(InputSize() == OutputSize() + 1, def.Label(), ": takes dY and ",
                           OutputSize(), " forward inputs but was given ", InputSize() - 1);
  }

  void Run() override {
    const Tensor& dy = Input(0);
    EnforceInputShape(0, ConcatShape(def(), ShapesFrom(*this, 1), 1));
    const int axis = ConcatAxis(def(), dy.ndim());
    const ConcatRows rows(dy.shape(), axis, dy.dtype());
    const auto* src = static_cast<const uint8_t*>(dy.raw_data());
    for (int i = 0; i < OutputSize(); ++i) {
      const Tensor& x = Input(i + 1);
      const size_t slice = rows.SliceBytes(x, axis);
      if (HasOutput(i)) {
        Output(i)->Resize(x.shape(), dy.dtype());
        cuda::CopyRowsOnStream(def(), Output(i)->raw_data(), slice, src, rows.row_bytes, slice,
                               rows.outer, context_);
      }
      src += slice;
    }
  }
};

}  // namespace

REGISTER_CUDA_OPERATOR(Concat, ConcatCudaOp);
REGISTER_CUDA_OPERATOR(ConcatGradient, ConcatGradientCudaOp);

}  // namespace crossbow
