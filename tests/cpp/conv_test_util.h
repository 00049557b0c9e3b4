#pragma once

#include <string>
#include <utility>
#include <vector>

#include "operators/conv_op.h"
#include "tests/cpp/op_test_util.h"

// The convolution cases and helpers that conv_op_test.cc (oneDNN's paths) and
// conv_own_paths_test.cc (MatmulConv and the AMX weight gradient) share.
namespace crossbow::testing {

struct ConvCase {
  int64_t n, c, h, w, m, kernel, stride, pad, dilation, group;
  bool bias;
};

inline const ConvCase kCases[] = {
    {1, 3, 5, 5, 8, 3, 1, 1, 1, 1, true},       // batch 1, first-layer channel count
    {3, 20, 7, 6, 6, 3, 2, 1, 1, 2, false},     // stride 2, pad 1, groups, C not a multiple of 16
    {3, 20, 6, 6, 32, 3, 2, 1, 1, 1, true},     // blocked weights on both sides
    {2, 4, 7, 7, 4, 3, 1, 2, 2, 1, true},       // dilation
    {3, 3, 4, 5, 5, 1, 1, 0, 1, 1, false},      // 1x1
    {2, 32, 16, 15, 32, 3, 1, 1, 1, 1, true},   // Winograd (PrefersWinograd), a partial tile
    {1, 1024, 2, 2, 16, 1, 1, 0, 1, 1, false},  // dW's rows 4 KiB apart (BlockedToPlainCopy)
    {2, 16, 7, 6, 24, 1, 2, 0, 1, 1, false},    // 1x1 stride 2 (PrefersMatmul)
    {2, 16, 16, 15, 16, 3, 1, 1, 1, 1, true},   // Winograd for dW only, direct forward and dX
};

inline OperatorDef ConvDef(const ConvCase& c, const std::string& x = "X") {
  std::vector<std::string> inputs = {x, "W"};
  if (c.bias) inputs.push_back("b");
  OperatorDef def = MakeOperator("Conv", inputs, {"Y"},
                                 {{"kernel", c.kernel},
                                  {"stride", c.stride},
                                  {"pad", c.pad},
                                  {"dilation", c.dilation},
                                  {"group", c.group}});
  def.name = "conv1";
  return def;
}

inline void FeedConv(OpHarness& h, const ConvCase& c) {
  h.Feed("X", {c.n, c.c, c.h, c.w});
  h.Feed("W", {c.m, c.c / c.group, c.kernel, c.kernel});
  if (c.bias) h.Feed("b", {c.m});
}

// oneDNN's (or our) name for what each pass of Conv and ConvGradient ran on, for case `c` with
// X, W (and b) and dY fed to `h`.
inline std::vector<std::pair<ConvPass, std::string>> PassImplementations(OpHarness& h,
                                                                         const ConvCase& c) {
  const OperatorDef def = ConvDef(c);
  ConvOp forward(def, &h.ws(), &h.context());
  forward.Run();
  ConvGradientOp backward(
      MakeOperator("ConvGradient", {"X", "W", "dY"}, {"dW", c.bias ? "db" : "", "dX"}, def.args),
      &h.ws(), &h.context());
  backward.Run();
  return {{ConvPass::kForward, forward.implementation()},
          {ConvPass::kBackwardData, backward.data_implementation()},
          {ConvPass::kBackwardWeights, backward.weights_implementation()}};
}

}  // namespace crossbow::testing
