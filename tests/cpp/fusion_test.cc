// FuseOperators with the registered rules, SpatialBN + Relu and Add + Relu: where they fuse,
// where they must not, and that a fused training net computes what the unfused one does.
#include "crossbow/core/fusion.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "crossbow/core/autodiff.h"
#include "crossbow/core/net.h"
#include "operators/dnnl_utils.h"
#include "tests/cpp/op_test_util.h"

namespace crossbow::testing {
namespace {

OperatorDef BN(const std::string& x, const std::string& y, const std::string& p) {
  return MakeOperator("SpatialBN", {x, p + "_s", p + "_b", p + "_rm", p + "_rv"},
                      {y, p + "_rm", p + "_rv", p + "_sm", p + "_sv"});
}
OperatorDef Relu(const std::string& x, const std::string& y) {
  return MakeOperator("Relu", {x}, {y});
}
OperatorDef Conv(const std::string& x, const std::string& w, const std::string& y) {
  return MakeOperator("Conv", {x, w}, {y}, {{"kernel", int64_t{3}}, {"pad", int64_t{1}}});
}

std::vector<std::string> Types(const NetDef& net) {
  std::vector<std::string> types;
  for (const auto& op : net.ops) types.push_back(op.type);
  return types;
}

NetDef Of(std::vector<OperatorDef> ops) {
  NetDef net;
  net.name = "n";
  net.ops = std::move(ops);
  return net;
}

TEST(FuseOperators, FusesSpatialBNWithTheReluThatAloneReadsIt) {
  NetDef fused = FuseOperators(
      Of({BN("x", "n1", "bn1"), Relu("n1", "r1"), BN("r1", "n2", "bn2"), Relu("n2", "n2")}), {});
  ASSERT_EQ(Types(fused), (std::vector<std::string>{"SpatialBNRelu", "SpatialBNRelu"}));
  EXPECT_EQ(fused.ops[0].inputs, BN("x", "n1", "bn1").inputs);
  EXPECT_EQ(fused.ops[0].outputs, (std::vector<std::string>{"r1", "bn1_rm", "bn1_rv", "bn1_sm",
                                                            "bn1_sv", "n1_relu_mask"}));
  EXPECT_EQ(fused.ops[1].outputs[0], "n2");  // in place
  const NetDef inference = FuseOperators(
      Of({MakeOperator("SpatialBN", {"x", "s", "b", "rm", "rv"}, {"n"}, {{"is_test", 1}}),
          Relu("n", "r")}),
      {});
  ASSERT_EQ(Types(inference), std::vector<std::string>{"SpatialBNRelu"});
  EXPECT_EQ(inference.ops[0].outputs, std::vector<std::string>{"r"});
}

TEST(FuseOperators, FusesTheResidualAddWithItsRelu) {
  const NetDef fused = FuseOperators(
      Of({BN("x", "n", "bn"), MakeOperator("Add", {"n", "s"}, {"sum"}), Relu("sum", "sum")}), {});
  ASSERT_EQ(Types(fused), (std::vector<std::string>{"SpatialBN", "AddRelu"}));
  EXPECT_EQ(fused.ops[1].inputs, (std::vector<std::string>{"n", "s"}));
  EXPECT_EQ(fused.ops[1].outputs, std::vector<std::string>{"sum"});
}

TEST(FuseOperators, LeavesAPairWhoseNormalisedValueIsNeededElsewhere) {
  const std::vector<NetDef> nets = {
      Of({BN("x", "n", "bn"), Relu("n", "r"), Conv("n", "w", "c")}),  // a second reader
      Of({BN("x", "n", "bn"), Conv("n", "w", "c"), Relu("n", "r")}),  // Relu is not the first
      Of({BN("x", "n", "bn"), Conv("x", "w", "r"), Relu("n", "r")}),  // r written in between
      Of({BN("x", "n", "bn"), Relu("n", "x")}),                       // Relu writes BN's input
      Of({BN("x", "n", "bn"), MakeOperator("Concat", {"n", "n"}, {"r"})}),  // no rule
  };
  for (const NetDef& net : nets) EXPECT_EQ(Types(FuseOperators(net, {})), Types(net));
  const NetDef kept = Of({BN("x", "n", "bn"), Relu("n", "r")});
  EXPECT_EQ(Types(FuseOperators(kept, {"n"})), Types(kept));
  // In place, the kept name holds the Relu's output either way.
  EXPECT_EQ(Types(FuseOperators(Of({BN("x", "n", "bn"), Relu("n", "n")}), {"n"})),
            std::vector<std::string>{"SpatialBNRelu"});
  // A second reader after the name is written again reads the new value, not BN's.
  const NetDef rewritten =
      Of({BN("x", "n", "bn"), Relu("n", "r"), Conv("r", "w", "n"), Relu("n", "out")});
  EXPECT_EQ(Types(FuseOperators(rewritten, {})),
            (std::vector<std::string>{"SpatialBNRelu", "Conv", "Relu"}));
}

// conv -> bn -> relu -> a residual block (conv -> bn -> relu in place -> conv -> bn, plus the
// block's input, -> relu) -> fc -> softmax loss.
NetDef TrainingNet(bool fuse) {
  NetDef net =
      Of({Conv("data", "w1", "c1"), BN("c1", "n1", "bn1"), Relu("n1", "r1"), Conv("r1", "w2", "c2"),
          BN("c2", "n2", "bn2"), Relu("n2", "n2"), Conv("n2", "w3", "c3"), BN("c3", "n3", "bn3"),
          MakeOperator("Add", {"n3", "r1"}, {"sum"}), Relu("sum", "sum"),
          MakeOperator("FC", {"sum", "fw"}, {"logits"}),
          MakeOperator("SoftmaxWithLoss", {"logits", "label"}, {"prob", "loss"})});
  if (fuse) net = FuseOperators(net, {"loss"});
  const std::vector<std::string> types = Types(net);
  EXPECT_EQ(std::count(types.begin(), types.end(), "SpatialBNRelu"), fuse ? 2 : 0);
  EXPECT_EQ(std::count(types.begin(), types.end(), "AddRelu"), fuse ? 1 : 0);
  GradientNet backward = AddGradientOps(
      net, "loss", {"w1", "bn1_s", "bn1_b", "w2", "bn2_s", "bn2_b", "w3", "bn3_s", "bn3_b", "fw"});
  net.ops.insert(net.ops.end(), backward.ops.begin(), backward.ops.end());
  return net;
}

TEST(FuseOperators, FusedNetComputesWhatTheUnfusedOneDoes) {
  std::map<std::string, std::vector<float>> results[2];
  for (bool fuse : {false, true}) {
    OpHarness h;
    h.Feed("data", {4, 3, 6, 6});
    h.FeedInt("label", {4}, {1, 3, 0, 4});
    h.Feed("w1", {8, 3, 3, 3}, {}, -0.4f, 0.4f);
    h.Feed("w2", {8, 8, 3, 3}, {}, -0.2f, 0.2f);
    h.Feed("w3", {8, 8, 3, 3}, {}, -0.2f, 0.2f);
    h.Feed("fw", {5, 8 * 6 * 6}, {}, -0.1f, 0.1f);
    for (const std::string bn : {"bn1", "bn2", "bn3"}) {
      h.Feed(bn + "_s", {8}, {}, 0.5f, 1.5f);
      h.Feed(bn + "_b", {8}, {}, -0.2f, 0.2f);
      h.Feed(bn + "_rm", {8}, std::vector<float>(8, 0.f));
      h.Feed(bn + "_rv", {8}, std::vector<float>(8, 1.f));
    }
    Net net(TrainingNet(fuse), &h.ws(), &h.context(), {}, /*plan_memory=*/false);
    net.Run();
    for (const std::string name :
         {"loss", "prob", "bn1_rm", "bn1_rv", "bn2_rv", "w1_grad", "bn1_s_grad", "bn1_b_grad",
          "w2_grad", "bn2_s_grad", "bn2_b_grad", "w3_grad", "bn3_s_grad", "bn3_b_grad",
          "fw_grad"}) {
      Tensor* t = net.Blob(name);
      std::vector<float> values(t->numel());
      dnnl_utils::CopyToPlain(*t, values.data(), &h.context());
      results[fuse][name] = values;
    }
  }
  for (const auto& [name, unfused] : results[0]) {
    EXPECT_LT(MaxAbsDiff(unfused, results[1][name]), 1e-5f) << name;
  }
  EXPECT_GT(std::fabs(results[0]["bn1_s_grad"][0]), 1e-4f) << "a gradient too small to compare";
}

}  // namespace
}  // namespace crossbow::testing
