#include "operators/channel_pad_op.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <functional>
#include <numeric>
#include <utility>

namespace crossbow {

using namespace dnnl_utils;
using Tag = memory::format_tag;

namespace {

void EnforceChannels(const OperatorDef& def, const Shape& s) {
  CROSSBOW_ENFORCE_VALUE(s.size() >= 2, def.Label(), ": input '", def.inputs[0], "' has shape ",
                         ShapeString(s), "; expected [N, C, ...]");
}

}  // namespace

ChannelPadding ChannelPaddingOf(const OperatorDef& def) {
  ChannelPadding pad{def.Arg<int64_t>("before", 0), def.Arg<int64_t>("after", 0)};
  CROSSBOW_ENFORCE_VALUE(pad.before >= 0 && pad.after >= 0, def.Label(),
                         ": before and after must be >= 0, got ", pad.before, " and ", pad.after);
  return pad;
}

Shape PaddedShape(const OperatorDef& def, const Shape& x) {
  EnforceChannels(def, x);
  const ChannelPadding pad = ChannelPaddingOf(def);
  Shape y = x;
  y[1] += pad.before + pad.after;
  return y;
}

Shape UnpaddedShape(const OperatorDef& def, const Shape& dy) {
  EnforceChannels(def, dy);
  const ChannelPadding pad = ChannelPaddingOf(def);
  Shape dx = dy;
  dx[1] -= pad.before + pad.after;
  CROSSBOW_ENFORCE_VALUE(dx[1] > 0, def.Label(), ": input '", def.inputs[0], "' of shape ",
                         ShapeString(dy), " has no channels left after removing ", pad.before,
                         " + ", pad.after, " padded ones");
  return dx;
}

namespace {

// A layout that keeps channels in blocks of `block`, with everything else row-major.
struct ChannelBlocking {
  Tag tag;
  int64_t block;
};
constexpr std::array<ChannelBlocking, 2> kBlockings{{{Tag::nChw16c, 16}, {Tag::nChw8c, 8}}};

// The blocking of `t`'s layout when it is exactly nChw16c or nChw8c, of any type.
const ChannelBlocking* BlockingOf(const Tensor& t) {
  if (t.is_plain() || t.ndim() != 4) return nullptr;
  for (const ChannelBlocking& b : kBlockings) {
    if (t.layout() == memory::desc(Dims(t.shape()), t.layout().data_type(), b.tag)) return &b;
  }
  return nullptr;
}

int64_t RoundUp(int64_t n, int64_t block) { return (n + block - 1) / block * block; }

// Elements of one channel of one image.
int64_t ChannelSize(const Shape& s) {
  return std::accumulate(s.begin() + 2, s.end(), int64_t{1}, std::multiplies<>());
}

// Elements one image takes in a layout with channels in blocks of `block` (1 = plain).
int64_t ImageSize(const Shape& s, int64_t block) { return RoundUp(s[1], block) * ChannelSize(s); }

// In both plain and channel-blocked layouts an image is its channels (or channel blocks) one
// after another, so padding by whole blocks is: zeros, X's image (its block padding is zero,
// as oneDNN keeps it), zeros. Sizes count elements of `bytes` bytes each; zero is all-zero
// bits in float32 and bfloat16 alike.
void PadImages(const Tensor& x, Tensor* y, int64_t x_size, int64_t y_size, int64_t front) {
  const size_t bytes = DataTypeSize(x.dtype());
  const auto* in = static_cast<const uint8_t*>(x.raw_data());
  auto* out = static_cast<uint8_t*>(y->raw_data());
  for (int64_t n = 0; n < x.dim(0); ++n, in += x_size * bytes, out += y_size * bytes) {
    std::memset(out, 0, front * bytes);
    std::memcpy(out + front * bytes, in, x_size * bytes);
    std::memset(out + (front + x_size) * bytes, 0, (y_size - front - x_size) * bytes);
  }
}

void SliceImages(const Tensor& dy, Tensor* dx, int64_t dy_size, int64_t dx_size, int64_t front) {
  const size_t bytes = DataTypeSize(dy.dtype());
  const auto* in = static_cast<const uint8_t*>(dy.raw_data());
  auto* out = static_cast<uint8_t*>(dx->raw_data());
  for (int64_t n = 0; n < dy.dim(0); ++n, in += dy_size * bytes, out += dx_size * bytes) {
    std::memcpy(out, in + front * bytes, dx_size * bytes);
  }
}

// How ChannelPad and its gradient copy `in` into `out` (of `out_shape`): channel blocks as they
// are, `out` blocked as `in` (nChw16c or nChw8c), where the padding is whole blocks (and, with
// `whole_out_blocks`, `out`'s channels too); else `in` as a plain copy in `plain` and `out`
// plain. Returns `in` as the copy reads it and the block (1: plain).
std::pair<const Tensor*, int64_t> LayOutCopy(const OperatorDef& def, const Tensor& in,
                                             const Shape& out_shape, bool whole_out_blocks,
                                             ReorderCache* to_plain, Tensor* plain, Tensor* out,
                                             CPUContext* ctx) {
  const ChannelPadding pad = ChannelPaddingOf(def);
  const ChannelBlocking* blocking = BlockingOf(in);
  const bool blocked = blocking && pad.before % blocking->block == 0 &&
                       pad.after % blocking->block == 0 &&
                       (!whole_out_blocks || out_shape[1] % blocking->block == 0);
  const memory::data_type type = DescOf(in).data_type();
  if (!blocked) {
    const Tensor& src = to_plain->As(in, PlainDesc(in.shape(), type), plain, ctx);
    out->Resize(out_shape, in.dtype());
    return {&src, 1};
  }
  out->ResizeBlocked(out_shape, memory::desc(Dims(out_shape), type, blocking->tag));
  return {&in, blocking->block};
}

}  // namespace

void ChannelPadOp::Run() {
  const Tensor& x = Input(0);
  const Shape y_shape = PaddedShape(def(), x.shape());
  Tensor* y = Output(0);
  const auto [src, block] =
      LayOutCopy(def(), x, y_shape, /*whole_out_blocks=*/false, &to_plain_, &plain_x_, y, context_);
  const int64_t front = ChannelPaddingOf(def()).before * ChannelSize(x.shape());
  PadImages(*src, y, ImageSize(x.shape(), block), ImageSize(y_shape, block), front);
}

void ChannelPadGradientOp::Run() {
  const Tensor& dy = Input(0);
  const Shape dx_shape = UnpaddedShape(def(), dy.shape());
  Tensor* dx = Output(0);
  // X's channels must fill whole blocks too, or dX's block padding would get dY's values.
  const auto [src, block] = LayOutCopy(def(), dy, dx_shape, /*whole_out_blocks=*/true, &to_plain_,
                                       &plain_dy_, dx, context_);
  const int64_t front = ChannelPaddingOf(def()).before * ChannelSize(dy.shape());
  SliceImages(*src, dx, ImageSize(dy.shape(), block), ImageSize(dx_shape, block), front);
}

OPERATOR_SCHEMA(ChannelPad)
    .NumInputs(1)
    .NumOutputs(1)
    .ShapeInference([](const OperatorDef& def, const std::vector<TensorShape>& in) {
      return std::vector<TensorShape>{{PaddedShape(def, in[0].dims), in[0].dtype}};
    })
    .Doc(
        "Y = X with `before` zero channels in front and `after` behind (axis 1), the "
        "parameter-free shortcut of CIFAR ResNets. nChw16c/nChw8c X padded by whole blocks "
        "keeps its layout; otherwise Y is plain.")
    .Input(0, "X", "float [N, C, ...]")
    .Output(0, "Y", "[N, before + C + after, ...]")
    .Arg("before", "int, default 0: zero channels in front")
    .Arg("after", "int, default 0: zero channels behind");
REGISTER_CPU_OPERATOR(ChannelPad, ChannelPadOp);
REGISTER_GRADIENT(ChannelPad, [](const GradientHelper& g) {
  return std::vector<OperatorDef>{g.Op("ChannelPadGradient", {g.GO(0)}, {g.GI(0)})};
});

OPERATOR_SCHEMA(ChannelPadGradient)
    .NumInputs(1)
    .NumOutputs(1)
    .ShapeInference([](const OperatorDef& def, const std::vector<TensorShape>& in) {
      return std::vector<TensorShape>{{UnpaddedShape(def, in[0].dims), in[0].dtype}};
    })
    .Doc("Gradient of ChannelPad: dX = dY without its padded channels.")
    .Input(0, "dY", "gradient of ChannelPad's output")
    .Output(0, "dX", "[N, C, ...], the channels that came from X")
    .Arg("before", "as given to ChannelPad")
    .Arg("after", "as given to ChannelPad");
REGISTER_CPU_OPERATOR(ChannelPadGradient, ChannelPadGradientOp);
NO_GRADIENT(ChannelPadGradient);

}  // namespace crossbow
