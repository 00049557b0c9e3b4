#include "operators/filler_op_cuda.h"

#include <cmath>

#include "operators/filler_op.h"
#include "operators/op_util_cuda.h"

namespace crossbow {
namespace {

// What a filler draws for an output of a given shape.
struct Distribution {
  enum Kind { kConstant, kUniform, kNormal } kind;
  float a, b;  // the value; min and max; mean and std
};

// The fillers on the GPU: one plain float output shaped like the CPU operator's, filled by a
// kernel; random values come from the context's counter-based generator (same distributions as
// on the CPU, other numbers). `Rule` reads the arguments and gives the distribution of a shape.
template <typename Rule>
class FillerCudaOp final : public Operator<CUDAContext> {
 public:
  FillerCudaOp(const OperatorDef& def, Workspace* ws, CUDAContext* context)
      : Operator(def, ws, context), rule_(def) {
    if (InputSize() == 0) shape_ = FillerShapeArg(def);
  }

  void Run() override {
    Tensor* out = Output(0);
    out->Resize(InputSize() == 0 ? shape_ : Input(0).shape());
    // A zero fan implies no elements, so the fan-based rules never divide by zero.
    if (out->numel() == 0) return;
    const Distribution d = rule_(out->shape());
    float* data = out->mutable_data<float>();
    const int64_t n = out->numel();
    switch (d.kind) {
      case Distribution::kConstant:
        cuda::LaunchFillConstant(data, n, d.a, context_->stream());
        break;
      case Distribution::kUniform:
        cuda::LaunchFillUniform(data, n, d.a, d.b, context_->seed(), context_->random_offset(),
                                context_->stream());
        break;
      case Distribution::kNormal:
        cuda::LaunchFillNormal(data, n, d.a, d.b, context_->seed(), context_->random_offset(),
                               context_->stream());
        break;
    }
    cuda::CheckLaunch(def(), "the fill kernel");
  }

 private:
  Rule rule_;
  Shape shape_;
};

struct ConstantRule {
  explicit ConstantRule(const OperatorDef& def) : value(def.Arg<float>("value", 0.f)) {}
  Distribution operator()(const Shape&) const { return {Distribution::kConstant, value, 0.f}; }
  float value;
};

struct UniformRule {
  explicit UniformRule(const OperatorDef& def) : range(UniformFillArgs(def)) {}
  Distribution operator()(const Shape&) const {
    return {Distribution::kUniform, range.min, range.max};
  }
  UniformRange range;
};

struct GaussianRule {
  explicit GaussianRule(const OperatorDef& def) : normal(GaussianFillArgs(def)) {}
  Distribution operator()(const Shape&) const {
    return {Distribution::kNormal, normal.mean, normal.std};
  }
  NormalParams normal;
};

struct XavierRule {
  explicit XavierRule(const OperatorDef&) {}
  Distribution operator()(const Shape& shape) const {
    const float scale = std::sqrt(3.f / static_cast<float>(FanIn(shape)));
    return {Distribution::kUniform, -scale, scale};
  }
};

struct MSRARule {
  explicit MSRARule(const OperatorDef& def) : fan_out(MSRAFanOut(def)) {}
  Distribution operator()(const Shape& shape) const {
    const int64_t fan = fan_out ? FanOut(shape) : FanIn(shape);
    return {Distribution::kNormal, 0.f, std::sqrt(2.f / static_cast<float>(fan))};
  }
  bool fan_out;
};

}  // namespace

REGISTER_CUDA_OPERATOR(ConstantFill, FillerCudaOp<ConstantRule>);
REGISTER_CUDA_OPERATOR(UniformFill, FillerCudaOp<UniformRule>);
REGISTER_CUDA_OPERATOR(GaussianFill, FillerCudaOp<GaussianRule>);
REGISTER_CUDA_OPERATOR(XavierFill, FillerCudaOp<XavierRule>);
REGISTER_CUDA_OPERATOR(MSRAFill, FillerCudaOp<MSRARule>);

}  // namespace crossbow
