// InferOpenBatchShapes: what a net builder asks before any batch size is chosen.
#include "crossbow/core/shape_inference.h"

#include <gtest/gtest.h>

#include "tests/cpp/expect_error.h"

namespace crossbow::testing {
namespace {

constexpr std::nullopt_t kBatch = std::nullopt;

NetDef NetOf(std::vector<OperatorDef> ops) { return NetDef{"net", std::move(ops), {}, {}}; }

TEST(InferOpenBatchShapes, TheBatchStaysOpenThroughEveryOperator) {
  const auto shapes = InferOpenBatchShapes(
      NetOf({MakeOperator("Conv", {"X", "W"}, {"Y"}, {{"kernel", int64_t{3}}}),
             MakeOperator("Flatten", {"Y"}, {"F"}),
             MakeOperator("SoftmaxWithLoss", {"F", "label"}, {"P", "L"})}),
      {{"X", {kBatch, 3, 8, 8}}, {"W", {4, 3, 3, 3}}, {"label", {kBatch}}}, {"label"});
  EXPECT_EQ(shapes.at("Y"), (OpenShape{kBatch, 4, 6, 6}));
  EXPECT_EQ(shapes.at("F"), (OpenShape{kBatch, 144}));
  EXPECT_EQ(shapes.at("W"), (OpenShape{4, 3, 3, 3}));
  EXPECT_EQ(shapes.at("L"), (OpenShape{}));
}

TEST(InferOpenBatchShapes, AShapeThatScalesWithTheBatchOtherwiseIsUnknown) {
  auto reshape = [](std::vector<int64_t> to) {
    return MakeOperator("Reshape", {"X"}, {"Y"}, {{"shape", to}});
  };
  const std::map<std::string, OpenShape> fed{{"X", {kBatch, 4, 6, 6}}};
  EXPECT_EQ(InferOpenBatchShapes(NetOf({reshape({-1, 36})}), fed, {}).at("Y"), std::nullopt);
  EXPECT_EQ(InferOpenBatchShapes(NetOf({reshape({2, -1})}), fed, {}).at("Y"), std::nullopt);
  EXPECT_EQ(InferOpenBatchShapes(NetOf({reshape({-1, 4, 36})}), fed, {}).at("Y"),
            (OpenShape{kBatch, 4, 36}));
}

TEST(InferOpenBatchShapes, FixedShapesAreInferredAsTheyAre) {
  const auto shapes =
      InferOpenBatchShapes(NetOf({MakeOperator("Relu", {"X"}, {"Y"})}), {{"X", {720720, 3}}}, {});
  EXPECT_EQ(shapes.at("Y"), (OpenShape{720720, 3}));  // the stand-in batch, fed
}

TEST(InferOpenBatchShapes, ErrorsNameTheOperatorAndPrintTheBatchAsN) {
  OperatorDef op = MakeOperator("Conv", {"X", "W"}, {"Y"}, {{"kernel", int64_t{5}}});
  op.name = "conv1";
  const NetDef conv = NetOf({op});
  EXPECT_ERROR(InferOpenBatchShapes(conv, {{"X", {kBatch, 1, 4, 4}}, {"W", {2, 1, 5, 5}}}, {}),
               ValueError,
               "Conv 'conv1': kernel 5 (dilation 1, 5 wide) with pad 0 does not fit "
               "input 0 'X' of shape [N, 1, 4, 4]");
  EXPECT_ERROR(InferOpenBatchShapes(conv, {{"X", {2, kBatch, 4, 4}}, {"W", {2, 1, 5, 5}}}, {}),
               ValueError, "blob 'X' fed to net 'net': only the first dimension");
  EXPECT_EQ(ShapeString({720720, 3}), "[720720, 3]");  // only while inferring
}

}  // namespace
}  // namespace crossbow::testing
