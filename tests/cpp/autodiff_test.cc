// Whole-net gradients: autodiff over real operators against central differences of the loss.
#include "crossbow/core/autodiff.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "crossbow/core/net.h"
#include "operators/dnnl_utils.h"
#include "tests/cpp/expect_error.h"
#include "tests/cpp/op_test_util.h"

namespace crossbow::testing {
namespace {

// conv -> bn -> relu -> (residual add of a second conv branch) -> maxpool -> fc -> softmax loss
NetDef ResidualNet() {
  NetDef net;
  net.name = "tiny_resnet";
  auto conv = [](const std::string& x, const std::string& w, const std::string& y) {
    return MakeOperator("Conv", {x, w}, {y}, {{"kernel", int64_t{3}}, {"pad", int64_t{1}}});
  };
  net.ops = {conv("data", "w1", "c1"),
             MakeOperator("SpatialBN", {"c1", "s1", "b1", "rm1", "rv1"},
                          {"n1", "rm1", "rv1", "sm1", "sv1"}),
             MakeOperator("Relu", {"n1"}, {"r1"}),
             conv("r1", "w2", "c2"),
             MakeOperator("Add", {"c2", "r1"}, {"sum"}),
             MakeOperator("MaxPool", {"sum"}, {"p", "p_ws"},
                          {{"kernel", int64_t{2}}, {"stride", int64_t{2}}}),
             MakeOperator("FC", {"p", "fw", "fb"}, {"logits"}),
             MakeOperator("SoftmaxWithLoss", {"logits", "label"}, {"prob", "loss"})};
  return net;
}

const std::vector<std::string> kParams = {"w1", "s1", "b1", "w2", "fw", "fb"};
// Float rounding of the loss, over a step of 1e-3: well below the gradients checked (most are
// above 1e-2).
constexpr double kAbsTol = 5e-4;

void FeedAll(OpHarness& h) {
  h.Feed("data", {2, 3, 6, 6});
  h.FeedInt("label", {2}, {1, 3});
  h.Feed("w1", {16, 3, 3, 3}, {}, -0.4f, 0.4f);
  h.Feed("s1", {16}, {}, 0.5f, 1.5f);
  h.Feed("b1", {16}, {}, -0.2f, 0.2f);
  h.Feed("rm1", {16}, std::vector<float>(16, 0.f));
  h.Feed("rv1", {16}, std::vector<float>(16, 1.f));
  h.Feed("w2", {16, 16, 3, 3}, {}, -0.1f, 0.1f);
  h.Feed("fw", {5, 16 * 3 * 3}, {}, -0.2f, 0.2f);
  h.Feed("fb", {5}, {}, -0.1f, 0.1f);
}

TEST(Autodiff, ResidualNetGradientsMatchNumeric) {
  OpHarness h;
  FeedAll(h);
  NetDef forward = ResidualNet();
  GradientNet backward = AddGradientOps(forward, "loss", kParams);
  NetDef train = forward;
  train.ops.insert(train.ops.end(), backward.ops.begin(), backward.ops.end());
  // r1 feeds both the second conv and the residual add: its gradient must be summed.
  int sums = 0;
  for (const auto& op : backward.ops) sums += op.type == "Sum";
  EXPECT_EQ(sums, 1);
  for (const auto& op : backward.ops) {
    if (op.type == "ConvGradient" && op.inputs[0] == "data") {
      EXPECT_TRUE(op.outputs[2].empty()) << "the input image needs no gradient";
    }
  }

  // With the memory plan on, as a learner runs it: the first run plans, the second runs on
  // the shared buffers, and its gradients are the ones checked. The gradients are kept (a
  // learner's update reads them), every other blob may share a buffer.
  std::set<std::string> keep = {"loss"};
  for (const auto& param : kParams) keep.insert(backward.gradients.at(param));
  Net net(train, &h.ws(), &h.context(), keep);
  net.Run();
  net.Run();
  ASSERT_LT(net.memory_stats().planned_bytes, net.memory_stats().unplanned_bytes);
  Net fwd(forward, &h.ws(), &h.context(), {"loss"});
  auto loss_now = [&] {
    fwd.Run();
    return static_cast<double>(*fwd.Blob("loss")->data<float>());
  };
  loss_now();  // plans the forward net's memory too
  for (const auto& param : kParams) {
    Tensor* grad_tensor = net.Blob(backward.gradients.at(param));
    std::vector<float> grad(grad_tensor->numel());
    dnnl_utils::CopyToPlain(*grad_tensor, grad.data(), &h.context());
    float* p = h.ws().GetTensor(param)->mutable_data<float>();
    const int64_t n = h.ws().GetTensor(param)->numel();
    double magnitude = 0;
    int checked = 0;
    for (int64_t e = 0; e < n; e += std::max<int64_t>(1, n / 12), ++checked) {
      const float saved = p[e], step = 1e-3f;
      p[e] = saved + step;
      double plus = loss_now();
      p[e] = saved - step;
      double minus = loss_now();
      p[e] = saved;
      double numeric = (plus - minus) / (2 * step);
      EXPECT_NEAR(grad[e], numeric, kAbsTol + 5e-2 * std::fabs(numeric))
          << param << "[" << e << "]";
      magnitude += std::fabs(numeric);
    }
    EXPECT_LE(20 * kAbsTol, magnitude / checked) << "the gradients of " << param << " are too "
                                                 << "small for the floor to mean anything";
  }
}

TEST(Autodiff, LossThatIgnoresParametersIsAnError) {
  NetDef net;
  net.name = "constant";
  net.ops = {MakeOperator("SoftmaxWithLoss", {"data", "label"}, {"prob", "loss"})};
  EXPECT_ERROR(AddGradientOps(net, "loss", {"w"}), ValueError,
               "loss 'loss' does not depend on any parameter of net 'constant'");
}

TEST(Autodiff, UnusedParameterIsAnError) {
  NetDef net = ResidualNet();
  std::vector<std::string> params = kParams;
  params.push_back("unused_w");
  EXPECT_ERROR(AddGradientOps(net, "loss", params), ValueError,
               "parameter 'unused_w' does not affect loss 'loss'");
}

}  // namespace
}  // namespace crossbow::testing
