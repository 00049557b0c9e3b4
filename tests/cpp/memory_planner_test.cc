#include "crossbow/core/memory_planner.h"

#include <gtest/gtest.h>

namespace crossbow {
namespace {

std::vector<OperatorDef> Chain(int length) {
  std::vector<OperatorDef> ops;
  for (int i = 0; i < length; ++i) {
    ops.push_back(MakeOperator("Relu", {"b" + std::to_string(i)}, {"b" + std::to_string(i + 1)}));
  }
  return ops;
}

TEST(MemoryPlanner, ChainNeedsTwoBuffers) {
  std::map<std::string, size_t> bytes;
  for (int i = 1; i <= 6; ++i) bytes["b" + std::to_string(i)] = 100;
  MemoryPlan plan = PlanMemory(Chain(6), bytes);
  EXPECT_EQ(plan.unplanned_bytes, 600u);
  EXPECT_EQ(plan.buffer_bytes.size(), 2u);
  EXPECT_EQ(plan.planned_bytes, 200u);
  // An operator's input and output never share a buffer.
  for (int i = 1; i < 6; ++i) {
    EXPECT_NE(plan.buffer_of["b" + std::to_string(i)], plan.buffer_of["b" + std::to_string(i + 1)]);
  }
}

TEST(MemoryPlanner, OverlappingLifetimesNeverShare) {
  // a is read again at the end (like an activation kept for the backward pass).
  std::vector<OperatorDef> ops = {
      MakeOperator("Relu", {"x"}, {"a"}), MakeOperator("Relu", {"a"}, {"b"}),
      MakeOperator("Relu", {"b"}, {"c"}), MakeOperator("Sum", {"a", "c"}, {"d"})};
  MemoryPlan plan = PlanMemory(ops, {{"a", 10}, {"b", 10}, {"c", 10}, {"d", 10}});
  EXPECT_NE(plan.buffer_of["a"], plan.buffer_of["b"]);
  EXPECT_NE(plan.buffer_of["a"], plan.buffer_of["c"]);
  EXPECT_NE(plan.buffer_of["a"], plan.buffer_of["d"]);
  EXPECT_EQ(plan.buffer_of["b"], plan.buffer_of["d"]);  // b is dead once c exists
  EXPECT_EQ(plan.buffer_bytes.size(), 3u);
}

TEST(MemoryPlanner, GrowsAReusedBufferToTheLargestBlob) {
  std::map<std::string, size_t> bytes = {{"b1", 10}, {"b2", 10}, {"b3", 50}, {"b4", 10}};
  MemoryPlan plan = PlanMemory(Chain(4), bytes);
  size_t b3 = plan.buffer_of["b3"];
  EXPECT_EQ(plan.buffer_bytes[b3], 50u);
  EXPECT_LE(plan.planned_bytes, 60u);
}

TEST(MemoryPlanner, LeavesUnlistedBlobsAlone) {
  MemoryPlan plan = PlanMemory(Chain(3), {{"b2", 8}});
  EXPECT_EQ(plan.buffer_of.size(), 1u);
  EXPECT_EQ(plan.buffer_of.count("b1"), 0u);
}

}  // namespace
}  // namespace crossbow
