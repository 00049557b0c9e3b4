#include "tests/cpp/op_parity_cases.h"

#include <gtest/gtest.h>

#include <regex>

#include "crossbow/core/operator.h"

// The parity table checked without a GPU: it covers every CPU operator, and each case runs on
// the CPU forward and backward (so a broken case shows up here, not first on a GPU machine).
namespace crossbow::testing {
namespace {

TEST(OpParityTable, EveryCpuOperatorHasAParityCase) {
  const std::set<std::string> covered = ParityCoveredTypes();
  for (const std::string& type : OperatorRegistry::Types(DeviceType::kCPU)) {
    EXPECT_TRUE(covered.count(type))
        << type << " has no case in tests/cpp/op_parity_cases.cc (as an operator of its own "
        << "or in a case's backward pass): add one so that its CUDA kernel is checked";
  }
}

TEST(OpParityTable, CasesAreNamedUniquelyAndRunOnTheCpu) {
  std::set<std::string> names;
  for (const ParityCase& c : ParityCases()) {
    SCOPED_TRACE(c.name);
    EXPECT_TRUE(std::regex_match(c.name, std::regex("[A-Za-z0-9_]+")));
    EXPECT_TRUE(names.insert(c.name).second) << "duplicate case name";
    OpHarness h;
    FeedParityInputs(c, h);
    ASSERT_NO_THROW(h.Run(c.op));
    if (c.grad_inputs.empty()) continue;
    FeedParityOutputGradients(c, h);
    ASSERT_NO_THROW(h.Run(ParityGradientOps(c)));
    for (int i : c.grad_inputs) {
      EXPECT_EQ(h.ShapeOf(c.op.inputs[i] + "_grad"), h.ShapeOf(c.op.inputs[i]));
    }
  }
}

}  // namespace
}  // namespace crossbow::testing
