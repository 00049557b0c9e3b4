// Adding an operator touches one file: this one. "Square" is Y = X * X element-wise, with its
// gradient operator, both schemas (shape inference and doc) and the gradient maker that links
// them. Registering them is all it takes for `crossbow ops` to list it, for ModelBuilder.op to
// add it and infer its shapes, and for autodiff to differentiate it. It is built apart, as
// libcrossbow_example_op.so, which tests/python/test_added_operator.py loads as a plugin, so
// that the test binaries' operator registry stays as it is. It runs on the CPU; a GPU kernel
// is registered beside it with REGISTER_CUDA_OPERATOR (operators/eltwise_op_cuda.{h,cc} and .cu).
#include "crossbow/core/operator.h"
#include "operators/reorder_cache.h"

namespace crossbow {

namespace {

// Float32 in X's layout: an element-wise kernel may run over the raw buffer, block padding
// (zeros) included, and Y takes X's layout.
class SquareOp final : public Operator<CPUContext> {
 public:
  using Operator::Operator;
  void Run() override {
    const Tensor& x = Input(0);
    Tensor* y = Output(0);
    y->ResizeLike(x);
    const float* in = x.data<float>();
    float* out = y->mutable_data<float>();
    const auto n = static_cast<int64_t>(x.nbytes() / sizeof(float));
    for (int64_t i = 0; i < n; ++i) out[i] = in[i] * in[i];
  }
};

// dX = 2 X dY, in X's layout; a dY laid out otherwise is reordered to it first.
class SquareGradientOp final : public Operator<CPUContext> {
 public:
  using Operator::Operator;
  void Run() override {
    const Tensor& x = Input(0);
    EnforceInputShape(1, x.shape());
    const Tensor& dy = dy_in_x_layout_.As(Input(1), dnnl_utils::DescOf(x), context_);
    Tensor* dx = Output(0);
    dx->ResizeLike(x);
    const float* in = x.data<float>();
    const float* grad = dy.data<float>();
    float* out = dx->mutable_data<float>();
    const auto n = static_cast<int64_t>(x.nbytes() / sizeof(float));
    for (int64_t i = 0; i < n; ++i) out[i] = 2.f * in[i] * grad[i];
  }

 private:
  ReorderCache dy_in_x_layout_;
};

}  // namespace

OPERATOR_SCHEMA(Square)
    .NumInputs(1)
    .NumOutputs(1)
    .IdenticalShape()
    .Doc("Y = X * X, element-wise (an operator added in one file: tests/example_op).")
    .Input(0, "X", "any float32 tensor")
    .Output(0, "Y", "same shape as X");
REGISTER_CPU_OPERATOR(Square, SquareOp);

OPERATOR_SCHEMA(SquareGradient)
    .NumInputs(2)
    .NumOutputs(1)
    .ShapeInference([](const OperatorDef&, const std::vector<TensorShape>& in) {
      return std::vector<TensorShape>{in[0]};
    })
    .Doc("Gradient of Square: dX = 2 X dY.")
    .Input(0, "X", "Square's input")
    .Input(1, "dY", "gradient of Y")
    .Output(0, "dX", "gradient of X");
REGISTER_CPU_OPERATOR(SquareGradient, SquareGradientOp);

REGISTER_GRADIENT(Square, [](const GradientHelper& g) {
  return std::vector<OperatorDef>{g.Op("SquareGradient", {g.I(0), g.GO(0)}, {g.GI(0)})};
});
NO_GRADIENT(SquareGradient);

}  // namespace crossbow
