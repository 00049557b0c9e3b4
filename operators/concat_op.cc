#include "operators/concat_op.h"

#include <limits>

namespace crossbow {

using namespace dnnl_utils;

int ConcatAxis(const OperatorDef& def, int ndim) {
  const auto axis = def.Arg<int64_t>("axis", 1);
  CROSSBOW_ENFORCE_VALUE(axis >= -ndim && axis < ndim, def.Label(), ": axis ", axis,
                         " is out of range for ", ndim, "-D inputs");
  return static_cast<int>(axis < 0 ? axis + ndim : axis);
}

Shape ConcatShape(const OperatorDef& def, const std::vector<const Shape*>& parts, int first) {
  const Shape& base = *parts[0];
  const int axis = ConcatAxis(def, static_cast<int>(base.size()));
  Shape out = base;
  out[axis] = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    const Shape& s = *parts[i];
    bool fits = s.size() == base.size();
    for (size_t d = 0; fits && d < s.size(); ++d) fits = d == size_t(axis) || s[d] == base[d];
    CROSSBOW_ENFORCE_VALUE(fits, def.Label(), ": input ", i + first, " '", def.inputs[i + first],
                           "' has shape ", ShapeString(s), ", which cannot be joined along axis ",
                           axis, " with '", def.inputs[first], "' of shape ", ShapeString(base));
    out[axis] += s[axis];
  }
  return out;
}

namespace {

std::vector<const Shape*> ShapesOf(const std::vector<TensorShape>& in, size_t first) {
  std::vector<const Shape*> shapes;
  for (size_t i = first; i < in.size(); ++i) shapes.push_back(&in[i].dims);
  return shapes;
}

std::vector<OperatorDef> ConcatGradientDefs(const GradientHelper& g) {
  std::vector<std::string> inputs{g.GO(0)};
  std::vector<std::string> outputs;
  for (int i = 0; i < static_cast<int>(g.def().inputs.size()); ++i) {
    inputs.push_back(g.I(i));
    outputs.push_back(g.GI(i));
  }
  return {g.Op("ConcatGradient", inputs, outputs)};
}

}  // namespace

void ConcatOp::Run() {
  const int n = InputSize();
  bool changed = static_cast<int>(src_mds_.size()) != n;
  for (int i = 0; i < n && !changed; ++i) changed = DescOf(Input(i)) != src_mds_[i];
  if (changed) {
    std::vector<const Shape*> shapes;
    src_mds_.clear();
    for (int i = 0; i < n; ++i) {
      shapes.push_back(&Input(i).shape());
      src_mds_.push_back(DescOf(Input(i)));
      CROSSBOW_ENFORCE_VALUE(Input(i).dtype() == Input(0).dtype(), def().Label(), ": input ", i,
                             " '", def().inputs[i], "' holds ", DataTypeName(Input(i).dtype()),
                             ", input 0 '", def().inputs[0], "' ", DataTypeName(Input(0).dtype()),
                             "; concatenated inputs share a type");
    }
    y_shape_ = ConcatShape(def(), shapes, 0);
    const int axis = ConcatAxis(def(), Input(0).ndim());
    dnnl::concat::primitive_desc pd(axis, src_mds_, context_->engine(), Attributes());
    dst_md_ = pd.dst_desc();
    primitive_ = dnnl::concat(pd);
  }
  Tensor* y = Output(0);
  ResizeTo(y, y_shape_, dst_md_);
  std::unordered_map<int, memory> args{{DNNL_ARG_DST, Wrap(*y, dst_md_, context_)}};
  for (int i = 0; i < n; ++i) {
    args.emplace(DNNL_ARG_MULTIPLE_SRC + i, Wrap(Input(i), src_mds_[i], context_));
  }
  Execute(primitive_, std::move(args), context_);
}

ConcatGradientOp::ConcatGradientOp(const OperatorDef& def, Workspace* ws, CPUContext* context)
    : Operator(def, ws, context), slices_(OutputSize()) {
  CROSSBOW_ENFORCE_VALUE(InputSize() == OutputSize() + 1, def.Label(), ": takes dY and ",
                         OutputSize(), " forward inputs but was given ", InputSize() - 1);
}

void ConcatGradientOp::Run() {
  const Tensor& dy = Input(0);
  std::vector<const Shape*> shapes;
  for (int i = 1; i < InputSize(); ++i) shapes.push_back(&Input(i).shape());
  EnforceInputShape(0, ConcatShape(def(), shapes, 1));
  const int axis = ConcatAxis(def(), dy.ndim());
  const Tensor* source = &dy;
  memory::desc source_md = DescOf(dy);
  memory::dims offsets(dy.ndim(), 0);
  for (int i = 0; i < OutputSize(); ++i) {
    const Tensor& x = Input(i + 1);
    if (HasOutput(i)) {
      memory::desc slice_md = source_md.submemory_desc(Dims(x.shape()), offsets, true);
      if (slice_md.is_zero()) {  // a slice that cuts through dY's blocks
        source = &to_plain_.As(dy, PlainDesc(dy.shape()), &plain_dy_, context_);
        source_md = PlainDesc(dy.shape());
        slice_md = source_md.submemory_desc(Dims(x.shape()), offsets);
      }
      const memory::desc dx_md = DescOf(x);
      ResizeTo(Output(i), x.shape(), dx_md);
      slices_[i].Run(*source, slice_md, Output(i), dx_md, context_);
    }
    offsets[axis] += x.dim(axis);
  }
}

OPERATOR_SCHEMA(Concat)
    .NumInputs(1, std::numeric_limits<int>::max())
    .NumOutputs(1)
    .ShapeInference([](const OperatorDef& def, const std::vector<TensorShape>& in) {
      return std::vector<TensorShape>{{ConcatShape(def, ShapesOf(in, 0), 0), in[0].dtype}};
    })
    .Doc(
        "Joins the inputs along `axis`; all other dimensions must agree. Inputs may have any "
        "layouts; Y takes the layout oneDNN's concat picks (blocked for blocked inputs).")
    .Input(0, "X1..Xn", "float tensors of equal rank")
    .Output(0, "Y", "the concatenation")
    .Arg("axis", "int, default 1 (channels); negative counts from the end");
REGISTER_CPU_OPERATOR(Concat, ConcatOp);
REGISTER_GRADIENT(Concat, ConcatGradientDefs);

OPERATOR_SCHEMA(ConcatGradient)
    .NumInputs(2, std::numeric_limits<int>::max())
    .NumOutputs(1, std::numeric_limits<int>::max())
    .ShapeInference([](const OperatorDef& def, const std::vector<TensorShape>& in) {
      CROSSBOW_ENFORCE_VALUE(in.size() == def.outputs.size() + 1, def.Label(), ": takes dY and ",
                             def.outputs.size(), " forward inputs but was given ", in.size() - 1);
      CROSSBOW_ENFORCE_VALUE(in[0].dims == ConcatShape(def, ShapesOf(in, 1), 1), def.Label(),
                             ": dY has shape ", ShapeString(in[0].dims),
                             ", expected the concatenation's ",
                             ShapeString(ConcatShape(def, ShapesOf(in, 1), 1)));
      return std::vector<TensorShape>(in.begin() + 1, in.end());
    })
    .Doc(
        "Gradient of Concat: splits dY along `axis` into slices shaped like the Xs. Each dXi "
        "has Xi's layout.")
    .Input(0, "dY", "gradient of Concat's output")
    .Input(1, "X1..Xn", "Concat's inputs (for their shapes and layouts)")
    .Output(0, "dX1..dXn", "gradients of the Xs; unnamed ones are skipped")
    .Arg("axis", "as given to Concat");
REGISTER_CPU_OPERATOR(ConcatGradient, ConcatGradientOp);
NO_GRADIENT(ConcatGradient);

}  // namespace crossbow
