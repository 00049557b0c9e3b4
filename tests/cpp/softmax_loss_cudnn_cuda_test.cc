// Where the CUDA SoftmaxWithLoss departs from the CPU's on purpose: a label outside [0, C)
// cannot raise a ValueError without reading the labels on the host, so it makes the loss and
// its row of the gradient NaN; the other rows are unaffected.
#include <cmath>

#include "tests/cpp/cudnn_op_test_util.h"

namespace crossbow::testing {
namespace {

TEST_F(CudnnOpTest, SoftmaxWithLossOutOfRangeLabelMakesTheLossNaN) {
  cpu_.Feed("logits", {3, 5}, {}, -4.f, 4.f);
  cpu_.Feed("dloss", {}, {2.f});
  cpu_.FeedInt("label", {3}, {1, 0, 4});
  gpu_->CopyFrom(cpu_, "logits");
  gpu_->CopyFrom(cpu_, "dloss");
  const OperatorDef loss = MakeOperator("SoftmaxWithLoss", {"logits", "label"}, {"prob", "loss"});
  const OperatorDef grad =
      MakeOperator("SoftmaxWithLossGradient", {"prob", "label", "dloss"}, {"dlogits"});
  cpu_.Run({loss, grad});

  gpu_->CopyFrom(cpu_, "label");
  gpu_->Create(loss)->Run();
  gpu_->Create(grad)->Run();
  for (const char* name : {"prob", "loss", "dlogits"}) ExpectMatchesCpu(name);

  cpu_.FeedInt("label", {3}, {1, 5, 4});
  gpu_->CopyFrom(cpu_, "label");
  gpu_->Create(loss)->Run();
  gpu_->Create(grad)->Run();
  ExpectMatchesCpu("prob");
  EXPECT_TRUE(std::isnan(gpu_->Fetch("loss")[0]));
  const std::vector<float> want = cpu_.Fetch("dlogits"), got = gpu_->Fetch("dlogits");
  for (int j = 0; j < 5; ++j) {
    EXPECT_NEAR(got[j], want[j], 1e-5f) << "row 0";
    EXPECT_TRUE(std::isnan(got[5 + j])) << "row 1";
    EXPECT_NEAR(got[10 + j], want[10 + j], 1e-5f) << "row 2";
  }
}

}  // namespace
}  // namespace crossbow::testing
