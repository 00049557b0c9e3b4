#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "crossbow/core/precision.h"
#include "operators/dnnl_utils.h"
#include "tests/cpp/expect_error.h"
#include "tests/cpp/op_test_util.h"

// In precision bf16 activations travel between CPU operators in bfloat16. Each operator that
// passes them on must give, from bfloat16 inputs, the bfloat16 rounding of what it gives in
// fp32 from the same values, and write each output in the type its documentation states.
namespace crossbow::testing {
namespace {

using dnnl::memory;

struct Input {
  std::string name;
  Shape shape;
  bool activation;   // fed as bfloat16 in precision bf16, in `layout` when 4-D; else plain fp32
  float low = -1.f;  // values uniform in [low, 1), rounded to bfloat16 for both runs
  // As convolutions leave 4-D activations: blocked, or channels-last (acdb) where AMX runs them.
  memory::format_tag layout = memory::format_tag::nChw16c;
};

struct Bf16Case {
  std::string what;
  std::vector<Input> inputs;
  std::vector<OperatorDef> ops;
  std::map<std::string, DataType> outputs;  // each checked output and its type in bf16
};

// How activations arrive: in the input's layout when 4-D, plain otherwise.
memory::desc ActivationLayout(const Input& in, memory::data_type type) {
  const memory::desc layout =
      in.shape.size() == 4 ? BlockedDesc(in.shape, in.layout) : dnnl_utils::PlainDesc(in.shape);
  return dnnl_utils::WithType(layout, type);
}

void Feed(OpHarness& h, const Input& in, const std::vector<float>& values, memory::data_type type) {
  if (!in.activation) {
    h.Feed(in.name, in.shape, values);
    return;
  }
  const Tensor* plain = h.Feed(in.name + "_plain", in.shape, values);
  dnnl_utils::ReorderTo(*plain, ActivationLayout(in, type), h.ws().CreateTensor(in.name),
                        &h.context());
}

void Check(const Bf16Case& c) {
  SCOPED_TRACE(c.what);
  OpHarness values_source, bf16, fp32;  // the two runs' generators start alike (Dropout's mask)
  bf16.context().set_precision(Precision::kBF16);
  for (const Input& in : c.inputs) {
    values_source.Feed(in.name, in.shape, {}, in.low, 1.f);
    std::vector<float> values = values_source.Fetch(in.name);
    for (float& v : values) v = RoundToBf16(v);
    Feed(fp32, in, values, memory::data_type::f32);
    Feed(bf16, in, values, memory::data_type::bf16);
  }
  bf16.Run(c.ops);
  fp32.Run(c.ops);
  for (const auto& [name, type] : c.outputs) {
    EXPECT_EQ(DataTypeName(bf16.ws().GetTensor(name)->dtype()), std::string(DataTypeName(type)))
        << name;
    if (type == DataType::kBFloat16) {
      ExpectBf16RoundingOf(bf16.Fetch(name), fp32.Fetch(name), c.what + " " + name);
    } else {
      const std::vector<float> got = bf16.Fetch(name), want = fp32.Fetch(name);
      for (size_t i = 0; i < want.size(); ++i) {
        ASSERT_NEAR(got[i], want[i], 1e-4f + 1e-4f * std::fabs(want[i])) << name << "[" << i << "]";
      }
    }
  }
}

const Shape kX = {4, 32, 6, 6};

TEST(Bf16Activations, EachOperatorHandsOnBfloat16AsItsFp32Rounded) {
  if (!CpuHasBf16()) GTEST_SKIP() << "this CPU has " << CpuIsaName() << ", not AVX512-BF16 or AMX";
  const Shape pooled = {4, 32, 3, 3}, c = {32};
  const memory::format_tag nhwc = memory::format_tag::acdb;
  const std::map<std::string, Argument> pool = {{"kernel", int64_t{2}}, {"stride", int64_t{2}}};
  const std::map<std::string, Argument> pad = {{"before", int64_t{16}}, {"after", int64_t{0}}};
  const std::vector<Bf16Case> cases = {
      {"Relu",
       {{"X", kX, true}, {"dY", kX, true}},
       {MakeOperator("Relu", {"X"}, {"Y"}), MakeOperator("ReluGradient", {"Y", "dY"}, {"dX"})},
       {{"Y", DataType::kBFloat16}, {"dX", DataType::kBFloat16}}},
      {"SpatialBNRelu",
       {{"X", kX, true},
        {"scale", c, false},
        {"bias", c, false},
        {"rm", c, false},
        {"rv", c, false, 0.5f},
        {"dY", kX, true}},
       {MakeOperator("SpatialBNRelu", {"X", "scale", "bias", "rm", "rv"},
                     {"Y", "rm", "rv", "sm", "sv", "mask"}),
        MakeOperator("SpatialBNReluGradient", {"X", "scale", "sm", "sv", "dY", "mask"},
                     {"dX", "dscale", "dbias"})},
       {{"Y", DataType::kBFloat16},
        {"sm", DataType::kFloat32},
        {"sv", DataType::kFloat32},
        {"dX", DataType::kBFloat16},
        {"dscale", DataType::kFloat32},
        {"dbias", DataType::kFloat32}}},
      {"SpatialBN and SpatialBNRelu on channels-last X (ChannelsLastBN)",
       {{"X", kX, true, -1.f, nhwc},
        {"scale", c, false},
        {"bias", c, false},
        {"rm", c, false},
        {"rv", c, false, 0.5f},
        {"dY", kX, true, -1.f, nhwc}},
       {MakeOperator("SpatialBNRelu", {"X", "scale", "bias", "rm", "rv"},
                     {"Y", "rm", "rv", "sm", "sv", "mask"}),
        MakeOperator("SpatialBNReluGradient", {"X", "scale", "sm", "sv", "dY", "mask"},
                     {"dX", "dscale", "dbias"}),
        MakeOperator("SpatialBN", {"X", "scale", "bias", "rm", "rv"},
                     {"Y2", "rm", "rv", "sm2", "sv2"}),
        MakeOperator("SpatialBNGradient", {"X", "scale", "sm2", "sv2", "dY"},
                     {"dX2", "dscale2", "dbias2"})},
       {{"Y", DataType::kBFloat16},
        {"sv", DataType::kFloat32},
        {"dX", DataType::kBFloat16},
        {"dscale", DataType::kFloat32},
        {"Y2", DataType::kBFloat16},
        {"dX2", DataType::kBFloat16},
        {"dbias2", DataType::kFloat32}}},
      {"AddRelu and Sum, an fp32 addend brought to the first's type",
       {{"A", kX, true}, {"B", kX, true}, {"F", kX, false}},
       {MakeOperator("AddRelu", {"A", "B"}, {"C"}), MakeOperator("Sum", {"A", "B", "F"}, {"S"})},
       {{"C", DataType::kBFloat16}, {"S", DataType::kBFloat16}}},
      {"MaxPool",
       {{"X", kX, true}, {"dY", pooled, true}},
       {MakeOperator("MaxPool", {"X"}, {"Y", "ws"}, pool),
        MakeOperator("MaxPoolGradient", {"X", "Y", "dY", "ws"}, {"dX"}, pool)},
       {{"Y", DataType::kBFloat16}, {"dX", DataType::kBFloat16}}},
      {"MaxPool of channels-last X",
       {{"X", kX, true, -1.f, nhwc}, {"dY", pooled, true, -1.f, nhwc}},
       {MakeOperator("MaxPool", {"X"}, {"Y", "ws"}, pool),
        MakeOperator("MaxPoolGradient", {"X", "Y", "dY", "ws"}, {"dX"}, pool)},
       {{"Y", DataType::kBFloat16}, {"dX", DataType::kBFloat16}}},
      {"AveragePool, fp32 dY",
       {{"X", kX, true}, {"dY", pooled, false}},
       {MakeOperator("AveragePool", {"X"}, {"Y"}, pool),
        MakeOperator("AveragePoolGradient", {"X", "dY"}, {"dX"}, pool)},
       {{"Y", DataType::kBFloat16}, {"dX", DataType::kBFloat16}}},
      {"GlobalAveragePool",
       {{"X", kX, true}, {"dY", {4, 32, 1, 1}, true}},
       {MakeOperator("GlobalAveragePool", {"X"}, {"Y"}),
        MakeOperator("GlobalAveragePoolGradient", {"X", "dY"}, {"dX"})},
       {{"Y", DataType::kBFloat16}, {"dX", DataType::kBFloat16}}},
      {"GlobalAveragePool of channels-last X, fp32 dY",
       {{"X", kX, true, -1.f, nhwc}, {"dY", {4, 32, 1, 1}, false}},
       {MakeOperator("GlobalAveragePool", {"X"}, {"Y"}),
        MakeOperator("GlobalAveragePoolGradient", {"X", "dY"}, {"dX"})},
       {{"Y", DataType::kBFloat16}, {"dX", DataType::kBFloat16}}},
      {"FC on pooled bfloat16",
       {{"X", {4, 32, 1, 1}, true},
        {"W", {10, 32}, false},
        {"b", {10}, false},
        {"dY", {4, 10}, false}},
       {MakeOperator("FC", {"X", "W", "b"}, {"Y"}),
        MakeOperator("FCGradient", {"X", "W", "dY"}, {"dW", "db", "dX"})},
       {{"Y", DataType::kFloat32},
        {"dW", DataType::kFloat32},
        {"db", DataType::kFloat32},
        {"dX", DataType::kBFloat16}}},
      {"ChannelPad by a whole block",
       {{"X", {4, 16, 6, 6}, true}, {"dY", kX, true}},
       {MakeOperator("ChannelPad", {"X"}, {"Y"}, pad),
        MakeOperator("ChannelPadGradient", {"dY"}, {"dX"}, pad)},
       {{"Y", DataType::kBFloat16}, {"dX", DataType::kBFloat16}}},
      {"Flatten",
       {{"X", kX, true}},
       {MakeOperator("Flatten", {"X"}, {"Y"})},
       {{"Y", DataType::kBFloat16}}},
      {"Dropout computes in fp32",
       {{"X", kX, true}},
       {MakeOperator("Dropout", {"X"}, {"Y", "mask"}, {{"ratio", 0.3f}})},
       {{"Y", DataType::kFloat32}}},
  };
  for (const Bf16Case& c : cases) Check(c);
}

TEST(Bf16Activations, PaddingBlockedBfloat16KeepsItsLayout) {
  if (!CpuHasBf16()) GTEST_SKIP() << "this CPU has " << CpuIsaName() << ", not AVX512-BF16 or AMX";
  OpHarness h;
  Feed(h, {"X", {2, 16, 4, 4}, true}, std::vector<float>(2 * 16 * 16, 1.f),
       memory::data_type::bf16);
  h.Run(MakeOperator("ChannelPad", {"X"}, {"Y"}, {{"before", int64_t{16}}}));
  EXPECT_EQ(h.ws().GetTensor("Y")->layout(),
            ActivationLayout({"Y", {2, 32, 4, 4}, true}, memory::data_type::bf16));
}

TEST(Bf16Activations, ConcatOfMixedTypesSaysWhich) {
  if (!CpuHasBf16()) GTEST_SKIP() << "this CPU has " << CpuIsaName() << ", not AVX512-BF16 or AMX";
  OpHarness h;
  Feed(h, {"A", kX, true}, std::vector<float>(NumElements(kX), 1.f), memory::data_type::bf16);
  h.Feed("B", kX);
  EXPECT_ERROR(h.Run(MakeOperator("Concat", {"A", "B"}, {"C"})), ValueError,
               "input 1 'B' holds float32, input 0 'A' bfloat16; concatenated inputs share a type");
}

}  // namespace
}  // namespace crossbow::testing
