#include "operators/accuracy_op_cuda.h"

#include "operators/accuracy_op.h"
#include "operators/op_util_cuda.h"
#include "operators/softmax_loss_op.h"

namespace crossbow {
namespace {

// Top-k accuracy written on the device, so that the host never waits for it. Labels outside
// [0, C), which the CPU operator reports as an error, give NaN here.
class AccuracyCudaOp final : public Operator<CUDAContext> {
 public:
  AccuracyCudaOp(const OperatorDef& def, Workspace* ws, CUDAContext* context)
      : Operator(def, ws, context), top_k_(TopK(def)) {}

  void Run() override {
    const Tensor& scores = Input(0);
    const Tensor& label = Input(1);
    EnforceScoresAndLabels(def(), scores.shape(), label.shape(), label.dtype());
    Tensor* accuracy = Output(0);
    accuracy->Resize({});
    cuda::LaunchTopKAccuracy(scores.data<float>(), label.data<int32_t>(), scores.dim(0),
                             scores.dim(1), top_k_, accuracy->mutable_data<float>(),
                             context_->stream());
    cuda::CheckLaunch(def(), "the accuracy kernel");
  }

 private:
  const int64_t top_k_;
};

}  // namespace

REGISTER_CUDA_OPERATOR(Accuracy, AccuracyCudaOp);

}  // namespace crossbow
