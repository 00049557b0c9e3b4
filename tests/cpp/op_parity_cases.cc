#include "tests/cpp/op_parity_cases.h"

#include <random>

#include "crossbow/core/operator.h"

namespace crossbow::testing {
namespace {

using Args = std::map<std::string, Argument>;

ParityInput In(Shape shape, float low = -1.f, float high = 1.f) { return {shape, low, high}; }
ParityInput Labels(int64_t n, int32_t classes) { return {{n}, 0.f, 0.f, classes}; }

ParityCase Case(std::string name, std::string type, std::vector<std::string> inputs,
                std::vector<std::string> outputs, Args args, std::vector<ParityInput> shapes,
                std::vector<int> grad_inputs = {}) {
  ParityCase c;
  c.name = std::move(name);
  c.op = MakeOperator(type, std::move(inputs), std::move(outputs), std::move(args));
  c.inputs = std::move(shapes);
  c.grad_inputs = std::move(grad_inputs);
  return c;
}

ParityCase With(ParityCase c, ParityCheck check) {
  c.check = check;
  return c;
}

std::vector<ParityCase> MakeCases() {
  const Args none;
  const Args k3p1{{"kernel", int64_t{3}}, {"pad", int64_t{1}}};
  std::vector<ParityCase> cases = {
      // conv (cuDNN; TF32 off)
      Case("Conv_3x3_pad1_bias", "Conv", {"x", "w", "b"}, {"y"}, k3p1,
           {In({2, 4, 8, 8}), In({6, 4, 3, 3}), In({6})}, {0, 1, 2}),
      Case("Conv_stride2_nobias", "Conv", {"x", "w"}, {"y"},
           {{"kernel", int64_t{3}}, {"stride", int64_t{2}}}, {In({2, 3, 9, 9}), In({4, 3, 3, 3})},
           {0, 1}),
      Case("Conv_group2_dilation2", "Conv", {"x", "w", "b"}, {"y"},
           {{"kernel", int64_t{3}},
            {"pad", int64_t{2}},
            {"dilation", int64_t{2}},
            {"group", int64_t{2}}},
           {In({2, 4, 9, 9}), In({6, 2, 3, 3}), In({6})}, {0, 1, 2}),
      Case("Conv_1x1_weights_only", "Conv", {"x", "w", "b"}, {"y"}, {{"kernel", int64_t{1}}},
           {In({4, 8, 4, 4}), In({16, 8, 1, 1}), In({16})}, {1, 2}),
      // fc (cuBLAS; TF32 off)
      Case("FC_2d_bias", "FC", {"x", "w", "b"}, {"y"}, none,
           {In({16, 100}), In({64, 100}), In({64})}, {0, 1, 2}),
      Case("FC_4d_nobias", "FC", {"x", "w"}, {"y"}, none, {In({8, 3, 4, 4}), In({10, 48})}, {0, 1}),
      Case("FC_large_k", "FC", {"x", "w", "b"}, {"y"}, none,
           {In({32, 1024}), In({100, 1024}), In({100})}, {0, 1, 2}),
      Case("FC_bias_gradient_only", "FC", {"x", "w", "b"}, {"y"}, none,
           {In({4, 20}), In({5, 20}), In({5})}, {2}),
      // relu
      Case("Relu", "Relu", {"x"}, {"y"}, none, {In({4, 3, 5, 5})}, {0}),
      Case("Relu_in_place", "Relu", {"x"}, {"x"}, none, {In({6, 7})}, {0}),
      // eltwise
      Case("Mish", "Mish", {"x"}, {"y"}, none, {In({4, 3, 5, 5}, -6.f, 6.f)}, {0}),
      Case("Sigmoid", "Sigmoid", {"x"}, {"y"}, none, {In({4, 3, 5, 5}, -6.f, 6.f)}, {0}),
      Case("Sigmoid_in_place", "Sigmoid", {"x"}, {"x"}, none, {In({6, 7})}, {0}),
      // mul
      Case("Mul_channel_scale", "Mul", {"a", "b"}, {"y"}, none,
           {In({2, 5, 4, 3}), In({2, 5, 1, 1})}, {0, 1}),
      Case("Mul_scalar", "Mul", {"a", "g"}, {"y"}, none, {In({2, 3, 40}), In({1})}, {0, 1}),
      // batch_matmul (cuBLAS; TF32 off)
      Case("BatchMatMul", "BatchMatMul", {"a", "b"}, {"y"}, none, {In({3, 4, 6}), In({3, 6, 5})},
           {0, 1}),
      Case("BatchMatMul_trans_b", "BatchMatMul", {"a", "b"}, {"y"}, {{"trans_b", int64_t{1}}},
           {In({2, 8, 20}), In({2, 8, 20})}, {0, 1}),
      Case("BatchMatMul_trans_a", "BatchMatMul", {"a", "b"}, {"y"}, {{"trans_a", int64_t{1}}},
           {In({2, 7, 4}), In({2, 7, 3})}, {0, 1}),
      // spectral_norm
      Case("SpectralNorm_training", "SpectralNorm", {"w", "u", "v"}, {"y", "u", "v"},
           {{"power_iterations", int64_t{2}}}, {In({24, 20, 1, 1}), In({24}), In({20})}, {0}),
      Case("SpectralNorm_is_test", "SpectralNorm", {"w", "u", "v"}, {"y"},
           {{"is_test", int64_t{1}}}, {In({8, 3, 3, 3}), In({8}), In({27})}, {0}),
      // pool
      Case("MaxPool_k3_s2_p1", "MaxPool", {"x"}, {"y", "ws"},
           {{"kernel", int64_t{3}}, {"stride", int64_t{2}}, {"pad", int64_t{1}}},
           {In({2, 3, 9, 9})}, {0}),
      Case("MaxPool_k2_s2", "MaxPool", {"x"}, {"y", "ws"},
           {{"kernel", int64_t{2}}, {"stride", int64_t{2}}}, {In({2, 4, 8, 8})}, {0}),
      Case("MaxPool_inference", "MaxPool", {"x"}, {"y"}, {{"kernel", int64_t{2}}},
           {In({2, 3, 5, 5})}),
      Case("AveragePool_k3_s1_p1", "AveragePool", {"x"}, {"y"}, k3p1, {In({2, 3, 7, 7})}, {0}),
      Case("AveragePool_count_include_pad", "AveragePool", {"x"}, {"y"},
           {{"kernel", int64_t{3}},
            {"stride", int64_t{2}},
            {"pad", int64_t{1}},
            {"count_include_pad", int64_t{1}}},
           {In({2, 3, 8, 8})}, {0}),
      Case("GlobalAveragePool", "GlobalAveragePool", {"x"}, {"y"}, none, {In({2, 8, 5, 5})}, {0}),
      // blur_pool
      Case("BlurPool_s2_odd", "BlurPool", {"x"}, {"y"}, none, {In({2, 5, 9, 7})}, {0}),
      Case("BlurPool_s1_edges", "BlurPool", {"x"}, {"y"}, {{"stride", int64_t{1}}},
           {In({3, 2, 2, 3})}, {0}),
      Case("BlurPool_s3", "BlurPool", {"x"}, {"y"}, {{"stride", int64_t{3}}}, {In({1, 4, 10, 8})},
           {0}),
      // spatial_bn
      Case("SpatialBN_training", "SpatialBN", {"x", "scale", "bias", "rm", "rv"},
           {"y", "rm", "rv", "sm", "sv"}, {{"epsilon", 1e-5}, {"momentum", 0.9}},
           {In({4, 3, 5, 5}), In({3}), In({3}), In({3}), In({3}, 0.5f, 1.5f)}, {0, 1, 2}),
      Case("SpatialBN_is_test", "SpatialBN", {"x", "scale", "bias", "rm", "rv"}, {"y"},
           {{"is_test", int64_t{1}}},
           {In({2, 4, 3, 3}), In({4}), In({4}), In({4}), In({4}, 0.5f, 1.5f)}),
      Case("SpatialBNRelu_training", "SpatialBNRelu", {"x", "scale", "bias", "rm", "rv"},
           {"y", "rm", "rv", "sm", "sv", "mask"}, {{"epsilon", 1e-5}, {"momentum", 0.9}},
           {In({4, 3, 5, 5}), In({3}), In({3}), In({3}), In({3}, 0.5f, 1.5f)}, {0, 1, 2}),
      Case("SpatialBNRelu_is_test", "SpatialBNRelu", {"x", "scale", "bias", "rm", "rv"}, {"y"},
           {{"is_test", int64_t{1}}},
           {In({2, 4, 3, 3}), In({4}), In({4}), In({4}), In({4}, 0.5f, 1.5f)}),
      // dropout
      Case("Dropout_is_test", "Dropout", {"x"}, {"y"}, {{"ratio", 0.3}, {"is_test", int64_t{1}}},
           {In({4, 100})}, {0}),
      With(Case("Dropout_training", "Dropout", {"x"}, {"y", "mask"}, {{"ratio", 0.3}},
                {In({64, 1024})}, {0}),
           ParityCheck::kDropout),
      // add
      Case("Add", "Add", {"a", "b"}, {"c"}, none, {In({4, 5, 6}), In({4, 5, 6})}, {0, 1}),
      Case("Add_in_place", "Add", {"a", "b"}, {"b"}, none, {In({3, 8}), In({3, 8})}),
      Case("AddRelu", "AddRelu", {"a", "b"}, {"c"}, none, {In({4, 5, 6}), In({4, 5, 6})}, {0, 1}),
      Case("AddRelu_in_place", "AddRelu", {"a", "b"}, {"a"}, none, {In({3, 8}), In({3, 8})}),
      Case("Sum_three", "Sum", {"a", "b", "c"}, {"s"}, none, {In({7, 9}), In({7, 9}), In({7, 9})},
           {0, 1, 2}),
      Case("Sum_one", "Sum", {"a"}, {"s"}, none, {In({5, 3})}, {0}),
      Case("Copy", "Copy", {"x"}, {"y"}, none, {In({3, 7})}, {0}),
      // concat
      Case("Concat_channels", "Concat", {"x1", "x2", "x3"}, {"y"}, none,
           {In({2, 3, 4, 4}), In({2, 5, 4, 4}), In({2, 1, 4, 4})}, {0, 1, 2}),
      Case("Concat_axis0_one_gradient", "Concat", {"x1", "x2"}, {"y"}, {{"axis", int64_t{0}}},
           {In({2, 6}), In({3, 6})}, {1}),
      Case("Concat_last_axis", "Concat", {"x1", "x2"}, {"y"}, {{"axis", int64_t{-1}}},
           {In({3, 4, 2}), In({3, 4, 5})}, {0, 1}),
      // reshape
      Case("Flatten", "Flatten", {"x"}, {"y"}, none, {In({2, 3, 4, 5})}, {0}),
      Case("Reshape", "Reshape", {"x"}, {"y"}, {{"shape", std::vector<int64_t>{0, -1, 5}}},
           {In({2, 3, 4, 5})}, {0}),
      Case("ReshapeLike", "ReshapeLike", {"dy", "x"}, {"dx"}, none, {In({6, 20}), In({2, 3, 4, 5})},
           {0}),
      // channel_pad
      Case("ChannelPad", "ChannelPad", {"x"}, {"y"},
           {{"before", int64_t{2}}, {"after", int64_t{3}}}, {In({2, 4, 3, 3})}, {0}),
      Case("ChannelPad_after_only", "ChannelPad", {"x"}, {"y"}, {{"after", int64_t{4}}},
           {In({2, 3, 2, 2})}, {0}),
      // softmax_loss
      Case("Softmax", "Softmax", {"x"}, {"y"}, none, {In({8, 10}, -3.f, 3.f)}, {0}),
      Case("SoftmaxWithLoss", "SoftmaxWithLoss", {"logits", "label"}, {"prob", "loss"}, none,
           {In({16, 10}, -3.f, 3.f), Labels(16, 10)}, {0}),
      Case("SoftmaxWithLoss_smoothed", "SoftmaxWithLoss", {"logits", "label"}, {"prob", "loss"},
           {{"label_smoothing", 0.1f}}, {In({16, 10}, -3.f, 3.f), Labels(16, 10)}, {0}),
      Case("SoftmaxWithLoss_mixed_smoothed", "SoftmaxWithLoss",
           {"logits", "label", "label_b", "lam"}, {"prob", "loss"}, {{"label_smoothing", 0.1f}},
           {In({16, 10}, -3.f, 3.f), Labels(16, 10), Labels(16, 10), In({16}, 0.f, 1.f)}, {0}),
      // accuracy
      Case("Accuracy_top1", "Accuracy", {"scores", "label"}, {"accuracy"}, none,
           {In({64, 10}), Labels(64, 10)}),
      Case("Accuracy_top3", "Accuracy", {"scores", "label"}, {"accuracy"}, {{"top_k", int64_t{3}}},
           {In({64, 10}), Labels(64, 10)}),
      // filler
      Case("ConstantFill", "ConstantFill", {}, {"y"},
           {{"shape", std::vector<int64_t>{3, 4}}, {"value", 2.5}}, {}),
      Case("ConstantFill_like_input", "ConstantFill", {"x"}, {"y"}, {{"value", -1.0}},
           {In({2, 5})}),
      With(Case("UniformFill", "UniformFill", {}, {"y"},
                {{"shape", std::vector<int64_t>{256, 512}}, {"min", -2.0}, {"max", 3.0}}, {}),
           ParityCheck::kFill),
      With(Case("GaussianFill", "GaussianFill", {}, {"y"},
                {{"shape", std::vector<int64_t>{256, 512}}, {"mean", 1.0}, {"std", 0.5}}, {}),
           ParityCheck::kFill),
      With(Case("XavierFill", "XavierFill", {}, {"y"},
                {{"shape", std::vector<int64_t>{128, 64, 3, 3}}}, {}),
           ParityCheck::kFill),
      With(Case("MSRAFill_fan_in", "MSRAFill", {}, {"y"},
                {{"shape", std::vector<int64_t>{128, 64, 3, 3}}}, {}),
           ParityCheck::kFill),
      With(Case("MSRAFill_fan_out", "MSRAFill", {}, {"y"},
                {{"shape", std::vector<int64_t>{128, 64, 3, 3}}, {"mode", std::string("fan_out")}},
                {}),
           ParityCheck::kFill),
      // sgd (in place)
      Case("MomentumSGD", "MomentumSGD", {"p", "g", "v", "lr"}, {"p", "v"},
           {{"momentum", 0.9}, {"weight_decay", 1e-4}},
           {In({1000}), In({1000}), In({1000}), In({1}, 0.05f, 0.1f)}),
      Case("MomentumSGD_nesterov", "MomentumSGD", {"p", "g", "v", "lr"}, {"p", "v"},
           {{"momentum", 0.8}, {"weight_decay", 5e-4}, {"nesterov", int64_t{1}}},
           {In({3, 50}), In({3, 50}), In({3, 50}), In({}, 0.05f, 0.1f)}),
      Case("MomentumSGD_pytorch_nesterov", "MomentumSGD", {"p", "g", "v", "lr"}, {"p", "v"},
           {{"momentum", 0.9},
            {"weight_decay", 5e-4},
            {"nesterov", int64_t{1}},
            {"convention", std::string("pytorch")}},
           {In({3, 50}), In({3, 50}), In({3, 50}), In({}, 0.05f, 0.1f)}),
      // adam, lookahead (in place; step counts of 0 to 7, where RAdam's rectification starts)
      Case("AdamW", "AdamW", {"p", "g", "m", "v", "t", "lr"}, {"p", "m", "v", "t"},
           {{"weight_decay", 1e-2}},
           {In({1000}), In({1000}), In({1000}), In({1000}, 0.f, 1.f), In({1}, 0.f, 8.f),
            In({}, 1e-3f, 1e-2f)}),
      Case("AdamW_radam", "AdamW", {"p", "g", "m", "v", "t", "lr"}, {"p", "m", "v", "t"},
           {{"weight_decay", 1e-2}, {"rectify", int64_t{1}}},
           {In({3, 50}), In({3, 50}), In({3, 50}), In({3, 50}, 0.f, 1.f), In({1}, 5.f, 8.f),
            In({}, 1e-3f, 1e-2f)}),
      // fastai's RAdam: eps after the bias correction, beta1 from a scheduled blob.
      Case("AdamW_radam_corrected_eps_beta1_input", "AdamW", {"p", "g", "m", "v", "t", "lr", "b1"},
           {"p", "m", "v", "t"},
           {{"weight_decay", 1e-2},
            {"rectify", int64_t{1}},
            {"corrected_eps", int64_t{1}},
            {"eps", 1e-2}},
           {In({3, 50}), In({3, 50}), In({3, 50}), In({3, 50}, 0.f, 1.f), In({1}, 0.f, 8.f),
            In({}, 1e-3f, 1e-2f), In({1}, 0.85f, 0.95f)}),
      Case("Lookahead", "Lookahead", {"p", "s", "t"}, {"p", "s", "t"},
           {{"k", int64_t{1}}, {"alpha", 0.5}}, {In({1000}), In({1000}), In({1}, 0.f, 4.f)}),
  };
  // MaxPool's workspace says which input won a window, SpatialBNRelu's mask where Y > 0, each
  // in the device's own encoding.
  for (ParityCase& c : cases) {
    if (c.op.type == "MaxPool" && c.op.outputs.size() > 1) c.device_specific_outputs = {1};
    if (c.op.type == "SpatialBNRelu" && c.op.outputs.size() > 5) c.device_specific_outputs = {5};
    if (c.op.type == "SoftmaxWithLoss") c.grad_outputs = {1};  // no gradient flows into prob
  }
  return cases;
}

}  // namespace

const std::vector<ParityCase>& ParityCases() {
  static const std::vector<ParityCase> cases = MakeCases();
  return cases;
}

void PrintTo(const ParityCase& c, std::ostream* out) { *out << c.name; }

std::vector<OperatorDef> ParityGradientOps(const ParityCase& c) {
  if (c.grad_inputs.empty()) return {};
  const GradientMaker* maker = GradientRegistry::Find(c.op.type);
  CROSSBOW_ENFORCE(maker != nullptr, "parity case ", c.name, " asks for gradients but ", c.op.type,
                   " declares none");
  std::vector<std::string> output_grads(c.op.outputs.size()), input_grads(c.op.inputs.size());
  for (int o : c.grad_outputs) output_grads[o] = c.op.outputs[o] + "_outgrad";
  for (int i : c.grad_inputs) input_grads[i] = c.op.inputs[i] + "_grad";
  return (*maker)(GradientHelper(c.op, output_grads, input_grads));
}

void FeedParityInputs(const ParityCase& c, OpHarness& h) {
  CROSSBOW_ENFORCE(c.inputs.size() == c.op.inputs.size(), "parity case ", c.name, " describes ",
                   c.inputs.size(), " inputs for ", c.op.inputs.size());
  std::mt19937 labels_rng(13);
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const ParityInput& in = c.inputs[i];
    if (in.classes > 0) {
      std::uniform_int_distribution<int32_t> label(0, in.classes - 1);
      std::vector<int32_t> values(NumElements(in.shape));
      for (int32_t& v : values) v = label(labels_rng);
      h.FeedInt(c.op.inputs[i], in.shape, values);
    } else {
      h.Feed(c.op.inputs[i], in.shape, {}, in.low, in.high);
    }
  }
}

void FeedParityOutputGradients(const ParityCase& c, OpHarness& h) {
  for (int o : c.grad_outputs) h.Feed(c.op.outputs[o] + "_outgrad", h.ShapeOf(c.op.outputs[o]));
}

std::set<std::string> ParityCoveredTypes() {
  std::set<std::string> types;
  for (const ParityCase& c : ParityCases()) {
    types.insert(c.op.type);
    for (const OperatorDef& op : ParityGradientOps(c)) types.insert(op.type);
  }
  return types;
}

}  // namespace crossbow::testing
