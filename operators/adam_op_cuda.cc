#include "operators/adam_op_cuda.h"

#include "operators/adam_op.h"
#include "operators/op_util_cuda.h"

namespace crossbow {
namespace {

// AdamW on the GPU: the CPU operator's step, arguments and checks, in place. The rate and the
// step count stay on the device (the learner rewrites the rate between graph replays).
class AdamWCudaOp final : public Operator<CUDAContext> {
 public:
  AdamWCudaOp(const OperatorDef& def, Workspace* ws, CUDAContext* context)
      : Operator(def, ws, context), args_(ReadAdamArgs(def)) {}

  void Run() override {
    EnforceAdamInputs(def(), InputShapeOf{*this}, InputTypeOf{*this});
    cuda::LaunchAdamW(Output(0)->mutable_data<float>(), Output(1)->mutable_data<float>(),
                      Output(2)->mutable_data<float>(), Output(3)->mutable_data<float>(),
                      Input(1).data<float>(), Input(5).data<float>(),
                      InputSize() == 7 ? Input(6).data<float>() : nullptr, Input(0).numel(),
                      args_.beta1, args_.beta2, args_.eps, args_.weight_decay, args_.rectify,
                      args_.corrected_eps, context_->stream());
    cuda::CheckLaunch(def(), "the AdamW kernel");
  }

 private:
  const AdamArgs args_;
};

}  // namespace

REGISTER_CUDA_OPERATOR(AdamW, AdamWCudaOp);

}  // namespace crossbow
