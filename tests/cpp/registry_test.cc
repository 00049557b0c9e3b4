#include <gtest/gtest.h>

#include "crossbow/core/net.h"
#include "tests/cpp/op_test_util.h"

namespace crossbow {
namespace {

TEST(Registry, UnknownOperatorSuggestsTheNearestName) {
  Workspace ws;
  CPUContext context;
  ws.CreateTensor("x")->Resize({2});
  try {
    OperatorRegistry::Create(MakeOperator("Rleu", {"x"}, {"y"}), &ws, &context);
    FAIL() << "no exception";
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(), "unknown operator 'Rleu'; did you mean 'Relu'?");
  }
}

TEST(Registry, WrongNumberOfInputsNamesTheOperator) {
  Workspace ws;
  CPUContext context;
  ws.CreateTensor("x")->Resize({2});
  OperatorDef op = MakeOperator("Relu", {"x", "x"}, {"y"});
  op.name = "relu7";
  try {
    OperatorRegistry::Create(op, &ws, &context);
    FAIL() << "no exception";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("Relu 'relu7' takes 1 inputs but was given 2"),
              std::string::npos)
        << e.what();
  }
}

TEST(Registry, EveryOperatorHasDocAndCpuKernel) {
  for (const auto& type : SchemaRegistry::Types()) {
    EXPECT_FALSE(SchemaRegistry::Find(type)->doc().empty()) << type << " has no doc";
    EXPECT_TRUE(OperatorRegistry::Has(DeviceType::kCPU, type)) << type << " has no CPU kernel";
  }
}

TEST(Net, BlobThatNothingProducesIsACompileError) {
  Workspace root;
  CPUContext context;
  root.CreateTensor("x")->Resize({4});
  NetDef net;
  net.name = "broken";
  net.ops = {MakeOperator("Relu", {"x"}, {"y"}), MakeOperator("Relu", {"z"}, {"w"})};
  try {
    Net compiled(net, &root, &context);
    FAIL() << "no exception";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("reads blob 'z'"), std::string::npos) << e.what();
  }
}

TEST(Net, PlansMemoryAfterTheFirstRunAndKeepsResults) {
  Workspace root;
  CPUContext context;
  Tensor* x = root.CreateTensor("x");
  x->Resize({64, 16});
  for (int i = 0; i < x->numel(); ++i) x->mutable_data<float>()[i] = (i % 7) - 3.f;
  NetDef net;
  net.name = "chain";
  for (int i = 0; i < 6; ++i) {
    net.ops.push_back(
        MakeOperator("Relu", {i ? "h" + std::to_string(i) : "x"}, {"h" + std::to_string(i + 1)}));
  }
  Net compiled(net, &root, &context, {"h6"});
  compiled.Run();
  compiled.Run();  // now on planned buffers
  const MemoryStats& stats = compiled.memory_stats();
  EXPECT_EQ(stats.unplanned_bytes, 5u * 64 * 16 * 4);
  EXPECT_EQ(stats.planned_bytes, 2u * 64 * 16 * 4);
  EXPECT_FALSE(root.HasTensor("h3")) << "intermediate blobs belong to the net, not its parent";
  const float* y = compiled.Blob("h6")->data<float>();
  for (int i = 0; i < x->numel(); ++i) ASSERT_EQ(y[i], std::max(0.f, (i % 7) - 3.f));
}

}  // namespace
}  // namespace crossbow
