#include "operators/reshape_op.h"

#include <cstring>
#include <functional>
#include <numeric>

namespace crossbow {

using namespace dnnl_utils;

Shape FlattenedShape(const OperatorDef& def, const Shape& x) {
  CROSSBOW_ENFORCE_VALUE(!x.empty(), def.Label(), ": input '", def.inputs[0],
                         "' is a scalar; Flatten needs at least one dimension");
  return {x[0], std::accumulate(x.begin() + 1, x.end(), int64_t{1}, std::multiplies<>())};
}

Shape ReshapedShape(const OperatorDef& def, const Shape& x) {
  const auto spec = def.RequiredArg<std::vector<int64_t>>("shape");
  const std::string where = def.Label() + ": cannot reshape input '" + def.inputs[0] +
                            "' of shape " + ShapeString(x) + " to shape " + ShapeString(spec);
  Shape y(spec.size());
  int inferred = -1;
  int64_t known = 1;
  for (size_t i = 0; i < spec.size(); ++i) {
    if (spec[i] == -1) {
      CROSSBOW_ENFORCE_VALUE(inferred < 0, where, ": at most one dimension may be -1");
      inferred = static_cast<int>(i);
      continue;
    }
    CROSSBOW_ENFORCE_VALUE(spec[i] >= 0, where, ": dimensions must be positive, 0 or -1");
    CROSSBOW_ENFORCE_VALUE(spec[i] > 0 || i < x.size(), where, ": 0 keeps dimension ", i,
                           ", which the input lacks");
    y[i] = spec[i] == 0 ? x[i] : spec[i];
    known *= y[i];
  }
  if (inferred >= 0) {
    CROSSBOW_ENFORCE_VALUE(known > 0 && NumElements(x) % known == 0, where,
                           ": the -1 dimension cannot be inferred");
    y[inferred] = NumElements(x) / known;
  }
  const bool keeps_batch = !spec.empty() && (spec[0] == 0 || spec[0] == -1);
  CROSSBOW_ENFORCE_VALUE(NumElements(y) == NumElements(x), where, ": element counts differ",
                         keeps_batch ? "" : " (a first dimension of 0 or -1 would keep the batch)");
  return y;
}

void EnforceSameSize(const OperatorDef& def, const Shape& dy, const Shape& x) {
  CROSSBOW_ENFORCE_VALUE(NumElements(dy) == NumElements(x), def.Label(), ": input '", def.inputs[0],
                         "' of shape ", ShapeString(dy), " cannot take the shape of '",
                         def.inputs[1], "' ", ShapeString(x), ": element counts differ");
}

namespace {

// Y = X's elements in row-major order under `shape`, plain, in X's type.
void CopyReshaped(const Tensor& x, const Shape& shape, Tensor* y, ReorderCache* to_plain,
                  CPUContext* ctx) {
  if (x.is_plain()) {
    y->Resize(shape, x.dtype());
    std::memcpy(y->raw_data(), x.raw_data(), x.nbytes());
  } else {
    y->Resize(shape, x.dtype());
    to_plain->Run(x, DescOf(x), y, PlainDesc(x.shape(), DescOf(x).data_type()), ctx);
  }
}

std::vector<OperatorDef> ReshapeBack(const GradientHelper& g) {
  return {g.Op("ReshapeLike", {g.GO(0), g.I(0)}, {g.GI(0)})};
}

}  // namespace

void FlattenOp::Run() {
  const Tensor& x = Input(0);
  CopyReshaped(x, FlattenedShape(def(), x.shape()), Output(0), &to_plain_, context_);
}

void ReshapeOp::Run() {
  const Tensor& x = Input(0);
  if (x.shape() != x_shape_) {
    y_shape_ = ReshapedShape(def(), x.shape());
    x_shape_ = x.shape();
  }
  CopyReshaped(x, y_shape_, Output(0), &to_plain_, context_);
}

void ReshapeLikeOp::Run() {
  const Tensor& dy = Input(0);
  const Tensor& x = Input(1);
  EnforceSameSize(def(), dy.shape(), x.shape());
  CopyReshaped(dy, x.shape(), Output(0), &to_plain_, context_);
}

OPERATOR_SCHEMA(Flatten)
    .NumInputs(1)
    .NumOutputs(1)
    .ShapeInference([](const OperatorDef& def, const std::vector<TensorShape>& in) {
      return std::vector<TensorShape>{{FlattenedShape(def, in[0].dims), in[0].dtype}};
    })
    .Doc("Y = X as a 2-D [N, prod(other dims)] matrix, row-major (plain) whatever X's layout.")
    .Input(0, "X", "tensor of at least one dimension")
    .Output(0, "Y", "plain [N, prod(other dims)]");
REGISTER_CPU_OPERATOR(Flatten, FlattenOp);
REGISTER_GRADIENT(Flatten, ReshapeBack);

OPERATOR_SCHEMA(Reshape)
    .NumInputs(1)
    .NumOutputs(1)
    .ShapeInference([](const OperatorDef& def, const std::vector<TensorShape>& in) {
      return std::vector<TensorShape>{{ReshapedShape(def, in[0].dims), in[0].dtype}};
    })
    .Doc("Y = X's elements in row-major order under a new shape of the same size (plain).")
    .Input(0, "X", "any tensor")
    .Output(0, "Y", "plain, of the requested shape")
    .Arg("shape", "list of ints (required): 0 keeps X's dimension there, one -1 is inferred");
REGISTER_CPU_OPERATOR(Reshape, ReshapeOp);
REGISTER_GRADIENT(Reshape, ReshapeBack);

OPERATOR_SCHEMA(ReshapeLike)
    .NumInputs(2)
    .NumOutputs(1)
    .ShapeInference([](const OperatorDef& def, const std::vector<TensorShape>& in) {
      EnforceSameSize(def, in[0].dims, in[1].dims);
      return std::vector<TensorShape>{{in[1].dims, in[0].dtype}};
    })
    .Doc(
        "dX = dY's elements in row-major order under X's shape (plain): the gradient of "
        "Flatten and Reshape.")
    .Input(0, "dY", "tensor with as many elements as X")
    .Input(1, "X", "gives the shape (its values are not read)")
    .Output(0, "dX", "plain, of X's shape");
REGISTER_CPU_OPERATOR(ReshapeLike, ReshapeLikeOp);
REGISTER_GRADIENT(ReshapeLike, ReshapeBack);

}  // namespace crossbow
