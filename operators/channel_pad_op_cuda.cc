#include "operators/channel_pad_op.h"
#include "operators/op_util_cuda.h"

namespace crossbow {
namespace {

// Bytes of one image of a row-major [N, C, ...] float tensor, and of one of its channels.
struct ImageBytes {
  explicit ImageBytes(const Shape& s)
      : channel(NumElements(Shape(s.begin() + 2, s.end())) * sizeof(float)),
        image(s[1] * channel) {}
  size_t channel, image;
};

// Y = X with zero channels before and after, per image: two pitched memsets for the padding
// and one pitched copy for X.
class ChannelPadCudaOp final : public Operator<CUDAContext> {
 public:
  using Operator::Operator;

  void Run() override {
    const Tensor& x = Input(0);
    const Shape y_shape = PaddedShape(def(), x.shape());
    const ChannelPadding pad = ChannelPaddingOf(def());
    Tensor* y = Output(0);
    y->Resize(y_shape);
    const ImageBytes in(x.shape()), out(y_shape);
    const size_t images = x.dim(0), front = pad.before * in.channel;
    auto* dst = static_cast<uint8_t*>(y->raw_data());
    Zero(dst, out.image, front, images);
    Zero(dst + front + in.image, out.image, pad.after * in.channel, images);
    cuda::CopyRowsOnStream(def(), dst + front, out.image, x.raw_data(), in.image, in.image, images,
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
    const ChannelPadding pad = ChannelPaddingOf(def());
    Tensor* dx = Output(0);
    dx->Resize(dx_shape);
    const ImageBytes in(dy.shape()), out(dx_shape);
    const auto* src = static_cast<const uint8_t*>(dy.raw_data()) + pad.before * in.channel;
    cuda::CopyRowsOnStream(def(), dx->raw_data(), out.image, src, in.image, out.image, dy.dim(0),
                           context_);
  }
};

}  // namespace

REGISTER_CUDA_OPERATOR(ChannelPad, ChannelPadCudaOp);
REGISTER_CUDA_OPERATOR(ChannelPadGradient, ChannelPadGradientCudaOp);

}  // namespace crossbow
