#include "operators/lookahead_op_cuda.h"

#include "operators/lookahead_op.h"
#include "operators/op_util_cuda.h"

namespace crossbow {
namespace {

// Lookahead on the GPU: the CPU operator's step, arguments and checks, in place.
class LookaheadCudaOp final : public Operator<CUDAContext> {
 public:
  LookaheadCudaOp(const OperatorDef& def, Workspace* ws, CUDAContext* context)
      : Operator(def, ws, context), args_(ReadLookaheadArgs(def)) {}

  void Run() override {
    EnforceLookaheadInputs(def(), InputShapeOf{*this}, InputTypeOf{*this});
    cuda::LaunchLookahead(Output(0)->mutable_data<float>(), Output(1)->mutable_data<float>(),
                          Output(2)->mutable_data<float>(), Input(0).numel(), args_.k, args_.alpha,
                          context_->stream());
    cuda::CheckLaunch(def(), "the Lookahead kernel");
  }

 private:
  const LookaheadArgs args_;
};

}  // namespace

REGISTER_CUDA_OPERATOR(Lookahead, LookaheadCudaOp);

}  // namespace crossbow
