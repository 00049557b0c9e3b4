#include "operators/sgd_op_cuda.h"

#include "operators/op_util_cuda.h"
#include "operators/sgd_op.h"

namespace crossbow {
namespace {

// MomentumSGD on the GPU: the same step and arguments as the CPU operator, in place (output 0
// is input 0, output 1 is input 2). The learning rate stays on the device: the learner
// rewrites that tensor between replays of a recorded graph.
class MomentumSGDCudaOp final : public Operator<CUDAContext> {
 public:
  MomentumSGDCudaOp(const OperatorDef& def, Workspace* ws, CUDAContext* context)
      : Operator(def, ws, context),
        momentum_(def.Arg<float>("momentum", 0.9f)),
        weight_decay_(def.Arg<float>("weight_decay", 0.f)),
        nesterov_(def.Arg<bool>("nesterov", false)),
        pytorch_(IsPyTorchConvention(def)) {}

  void Run() override {
    EnforceSGDInputs(def(), InputShapeOf{*this}, InputTypeOf{*this});
    cuda::LaunchMomentumSGD(Output(0)->mutable_data<float>(), Output(1)->mutable_data<float>(),
                            Input(1).data<float>(), Input(3).data<float>(), Input(0).numel(),
                            momentum_, weight_decay_, nesterov_, pytorch_, context_->stream());
    cuda::CheckLaunch(def(), "the momentum SGD kernel");
  }

 private:
  const float momentum_, weight_decay_;
  const bool nesterov_, pytorch_;
};

}  // namespace

REGISTER_CUDA_OPERATOR(MomentumSGD, MomentumSGDCudaOp);

}  // namespace crossbow
