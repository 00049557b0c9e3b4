#pragma once

#include <oneapi/dnnl/dnnl.hpp>
#include <unordered_map>

#include "crossbow/core/context.h"
#include "crossbow/core/tensor.h"

// Glue between Tensor and oneDNN, shared by every oneDNN-backed CPU operator.
namespace crossbow::dnnl_utils {

using dnnl::memory;

memory::dims Dims(const Shape& shape);
// Row-major descriptor of this shape (nchw for 4-D, nc for 2-D, x for 1-D).
memory::desc PlainDesc(const Shape& shape, memory::data_type type = memory::data_type::f32);
// The tensor's own layout and type: its blocked descriptor, or the plain one.
memory::desc DescOf(const Tensor& t);
// Format "any": lets a primitive pick the layout (blocked for convolutions).
memory::desc AnyDesc(const Shape& shape, memory::data_type type = memory::data_type::f32);
// `md` with its type replaced by `type` (same dimensions and layout).
memory::desc WithType(const memory::desc& md, memory::data_type type);
// Gives `t` this shape with layout and type `md`, recording it as plain when md is row-major.
void ResizeTo(Tensor* t, const Shape& shape, const memory::desc& md);
bool IsPlain(const memory::desc& md, const Shape& shape);
// The channels-last (nhwc) layout of 4-D dims, and whether `md` is it: some operators run
// channels-last tensors in their own loops.
memory::desc ChannelsLastDesc(const memory::dims& dims, memory::data_type type);
bool IsChannelsLast(const memory::desc& md);

// A oneDNN memory over the tensor's bytes (no copy).
memory Wrap(const Tensor& t, const memory::desc& md, CPUContext* ctx);
inline memory Wrap(const Tensor& t, CPUContext* ctx) { return Wrap(t, DescOf(t), ctx); }

// Copies `src` into `dst` laid out as `md` (dst is resized to src's shape).
// Builds its reorder on every call: for one-off copies; operators use ReorderCache.
void ReorderTo(const Tensor& src, const memory::desc& md, Tensor* dst, CPUContext* ctx);
// Row-major float32 copy of any float tensor (plain float32 bytes are copied as they are), into
// numel() floats.
void CopyToPlain(const Tensor& src, float* out, CPUContext* ctx);

// The attributes every primitive that Execute runs is created with: its scratchpad is the
// context's (user mode). oneDNN's own scratchpad of some kernels (Winograd convolutions) is a
// buffer local to the thread that created the primitive, which the thread that runs it may
// lack: a learner's primitives run on a new thread whenever the engine restarts its threads
// (the autotuner, a resume), and the Winograd ones crashed there.
dnnl::primitive_attr Attributes();

// Runs `primitive` with `args` and the context's scratchpad on the context's stream, and waits
// for it. The primitive must have been created with Attributes().
void Execute(const dnnl::primitive& primitive, std::unordered_map<int, memory> args,
             CPUContext* ctx);

}  // namespace crossbow::dnnl_utils
