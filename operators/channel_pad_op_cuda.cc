#include "operators/channel_pad_op.h"
#include "operators/op_util_cuda.h"

namespace crossbow {
namespace {

// Bytes of a row-major [N, C, ...] float tensor's images before (`image`) and after
// (`padded`) its channels are padded, and of the padding before and after them.
struct PadBytes {
  PadBytes(const OperatorDef& def, const Shape& unpadded, const Shape& padded_shape) {
    const size_t channel = NumElements(Shape(unpadded.begin() + 2, unpadded.end())) * sizeof(float);
    const ChannelPadding pad = ChannelPaddingOf(def);
    images = unpadded[0];
    image = unpadded[1] * channel;
    padded = padded_shape[1] * channel;
    front = pad.before * channel;
    back = pad.after * channel;
  }
  size_t images, image, padded, front, back;
};

// Y = X with zero channels before and after, per image: two pitched memsets for the padding
// and one pitched copy for X.
class ChannelPadCudaOp final : public Operator<CUDAContext> {
 public:
  using Operator::Operator;

  void Run() override {
    const Tensor& x = Input(0);
    const Shape y_shape = PaddedShape(def(), x.shape());
    Tensor* y = Output(0);
    y->Resize(y_shape);
    const PadBytes b(def(), x.shape(), y_shape);
    auto* dst = static_cast<uint8_t*>(y->raw_data());
    Zero(dst, b.padded, b.front, b.images);
    Zero(dst + b.front + b.image, b.padded, b.back, b.images);
    cuda::CopyRowsOnStream(def(), dst + b.front, b.padded, x.raw_data(), b.image, b.image, b.images,
                           context_);
  }

 private:
  void Zero(void* dst, size_t pitch, size_t bytes, size_t rows) {
    if (bytes == 0 || rows == 0) return;
    CUDA_CHECK(cudaMemset2DAsync(dst, pitch, 0, bytes, rows, context_->stream()), def().Label(),
               ": zeroing the padded channels");
  }
};

// dX = the channels of dY that came from X: one pitched copy.
class ChannelPadGradientCudaOp final : public Operator<CUDAContext> {
 public:
  using Operator::Operator;

  void Run() override {
    const Tensor& dy = Input(0);
    const Shape dx_shape = UnpaddedShape(def(), dy.shape());
    Tensor* dx = Output(0);
    dx->Resize(dx_shape);
    const PadBytes b(def(), dx_shape, dy.shape());
    const auto* src = static_cast<const uint8_t*>(dy.raw_data()) + b.front;
    cuda::CopyRowsOnStream(def(), dx->raw_data(), b.image, src, b.padded, b.image, b.images,
                           context_);
  }
};

}  // namespace

REGISTER_CUDA_OPERATOR(ChannelPad, ChannelPadCudaOp);
REGISTER_CUDA_OPERATOR(ChannelPadGradient, ChannelPadGradientCudaOp);

}  // namespace crossbow
