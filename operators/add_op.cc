#include "operators/add_op.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "crossbow/core/bfloat16.h"
#include "crossbow/core/fusion.h"
#include "operators/parallel_threshold.h"

#define CROSSBOW_PER_ISA_FILE "operators/add_loops.inc"
#include "crossbow/core/per_isa.h"

namespace crossbow {

using namespace dnnl_utils;

namespace {

std::vector<TensorShape> SameShapes(const OperatorDef& def, const std::vector<TensorShape>& in) {
  for (size_t i = 1; i < in.size(); ++i) {
    CROSSBOW_ENFORCE_VALUE(in[i].dims == in[0].dims, def.Label(), ": input ", i, " '",
                           def.inputs[i], "' has shape ", ShapeString(in[i].dims),
                           ", expected the shape of '", def.inputs[0], "' ",
                           ShapeString(in[0].dims), "; ", def.type, " needs equal shapes");
  }
  return {in[0]};
}

std::vector<OperatorDef> CopyToEachInputGradient(const GradientHelper& g) {
  std::vector<OperatorDef> ops;
  for (int i = 0; i < static_cast<int>(g.def().inputs.size()); ++i) {
    if (!g.GI(i).empty()) ops.push_back(g.Op("Copy", {g.GO(0)}, {g.GI(i)}));
  }
  return ops;
}

}  // namespace

template <bool kRelu>
SumOp<kRelu>::SumOp(const OperatorDef& def, Workspace* ws, CPUContext* context)
    : Operator(def, ws, context),
      reorders_(InputSize()),
      scratch_(InputSize()),
      addends_(InputSize()) {}

template <bool kRelu>
void SumOp<kRelu>::Run() {
  const Tensor& first = Input(0);
  const memory::desc md = DescOf(first);
  // Every addend is brought to X1's layout before Y (which may alias an input) is written.
  for (int i = 1; i < InputSize(); ++i) {
    EnforceInputShape(i, first.shape());
    addends_[i] = &reorders_[i].As(Input(i), md, &scratch_[i], context_);
  }
  Tensor* y = Output(0);
  y->ResizeLike(first);
  if (InputSize() == 1) {
    if (y->raw_data() != first.raw_data())
      std::memcpy(y->raw_data(), first.raw_data(), y->nbytes());
    return;
  }
  addends_[0] = &first;
  switch (first.dtype()) {
    case DataType::kFloat32:
      return CROSSBOW_PER_ISA(AddAll<kRelu, float>)(addends_, y);
    case DataType::kBFloat16:
      return CROSSBOW_PER_ISA(AddAll<kRelu, uint16_t>)(addends_, y);
    default:
      CROSSBOW_FAIL(def().Label(), ": adds float32 or bfloat16 tensors; input 0 '", def().inputs[0],
                    "' holds ", DataTypeName(first.dtype()));
  }
}

template class SumOp<false>;
template class SumOp<true>;

void CopyOp::Run() {
  const Tensor& x = Input(0);
  Tensor* y = Output(0);
  y->ResizeLike(x);
  if (y->raw_data() != x.raw_data()) std::memcpy(y->raw_data(), x.raw_data(), x.nbytes());
}

// Add's and AddRelu's: two addends of one shape, C in place of either.
void TwoAddends(OpSchema& schema) {
  schema.NumInputs(2)
      .NumOutputs(1)
      .AllowInplace({{0, 0}, {1, 0}})
      .ShapeInference(SameShapes)
      .Input(0, "A", "float tensor")
      .Input(1, "B", "float tensor of A's shape");
}

OPERATOR_SCHEMA(Add)
    .With(TwoAddends)
    .Doc(
        "C = A + B element-wise. A and B have the same shape but may differ in layout; C takes "
        "A's layout.")
    .Output(0, "C", "A + B");
REGISTER_CPU_OPERATOR(Add, SumOp<false>);
REGISTER_GRADIENT(Add, CopyToEachInputGradient);

OPERATOR_SCHEMA(AddRelu)
    .With(TwoAddends)
    .Doc(
        "C = max(A + B, 0) element-wise in one pass: Add then Relu, as the learner's net "
        "compilation fuses them (the residual add of a ResNet block). C takes A's layout.")
    .Output(0, "C", "max(A + B, 0)");
REGISTER_CPU_OPERATOR(AddRelu, SumOp<true>);
// dA = dB = dY where C > 0: one ReluGradient, copied for the second input.
REGISTER_GRADIENT(AddRelu, [](const GradientHelper& g) {
  const std::string first = g.GI(0).empty() ? g.GI(1) : g.GI(0);
  std::vector<OperatorDef> ops = {g.Op("ReluGradient", {g.O(0), g.GO(0)}, {first})};
  if (!g.GI(0).empty() && !g.GI(1).empty()) ops.push_back(g.Op("Copy", {first}, {g.GI(1)}));
  return ops;
});
REGISTER_FUSION(Add, Relu, [](const OperatorDef& add, const OperatorDef& relu) {
  OperatorDef fused = add;
  fused.type = "AddRelu";
  fused.outputs[0] = relu.outputs[0];
  return fused;
});

OPERATOR_SCHEMA(Sum)
    .NumInputs(1, std::numeric_limits<int>::max())
    .NumOutputs(1)
    .AllowInplace({{0, 0}})
    .ShapeInference(SameShapes)
    .Doc(
        "Y = X1 + ... + Xn element-wise (n >= 1), in X1's layout; inputs laid out otherwise are "
        "reordered to it. Autodiff uses it to add up gradient contributions.")
    .Input(0, "X1", "float tensor")
    .Input(1, "X2..Xn", "float tensors of X1's shape, any layout")
    .Output(0, "Y", "the sum");
REGISTER_CPU_OPERATOR(Sum, SumOp<false>);
REGISTER_GRADIENT(Sum, CopyToEachInputGradient);

OPERATOR_SCHEMA(Copy)
    .NumInputs(1)
    .NumOutputs(1)
    .IdenticalShape()
    .Doc("Y = X, copied in X's layout (and dtype).")
    .Input(0, "X", "any tensor")
    .Output(0, "Y", "a copy of X");
REGISTER_CPU_OPERATOR(Copy, CopyOp);
REGISTER_GRADIENT(Copy, [](const GradientHelper& g) {
  return std::vector<OperatorDef>{g.Op("Copy", {g.GO(0)}, {g.GI(0)})};
});

}  // namespace crossbow
