// When a Net records its slices for replay (CUDA graphs), checked on the CPU with a context that
// counts recordings and replays instead of making graphs.
#include <gtest/gtest.h>

#include "crossbow/core/net.h"

namespace crossbow {
namespace {

class RecordingContext final : public CPUContext {
 public:
  class Work final : public CapturedWork {
   public:
    explicit Work(int* replays) : replays_(replays) {}
    void Replay() override { ++*replays_; }

   private:
    int* replays_;
  };

  std::unique_ptr<CapturedWork> Capture(const std::function<void()>& body) override {
    ++captures;
    body();  // what a graph would record; here it simply runs
    return std::make_unique<Work>(&replays);
  }

  int captures = 0, replays = 0;
};

NetDef Chain(int length) {
  NetDef net;
  net.name = "chain";
  for (int i = 0; i < length; ++i) {
    net.ops.push_back(
        MakeOperator("Relu", {i ? "h" + std::to_string(i) : "x"}, {"h" + std::to_string(i + 1)}));
  }
  return net;
}

TEST(NetCapture, RecordsTheSecondRunOnPlannedBuffersThenReplays) {
  Workspace root;
  root.CreateTensor("x")->Resize({8});
  RecordingContext context;
  Net net(Chain(3), &root, &context, {"h3"});
  net.Run();  // allocates, then plans memory
  net.Run();  // the first run on the final buffers
  EXPECT_EQ(context.captures, 0);
  net.Run();
  EXPECT_EQ(context.captures, 1);
  EXPECT_EQ(context.replays, 1);
  EXPECT_TRUE(net.replaying(0, 3));
  net.Run();
  EXPECT_EQ(context.captures, 1);
  EXPECT_EQ(context.replays, 2);
}

TEST(NetCapture, SlicesAreRecordedSeparately) {
  Workspace root;
  root.CreateTensor("x")->Resize({8});
  RecordingContext context;
  Net net(Chain(4), &root, &context, {"h4"});
  for (int i = 0; i < 3; ++i) {
    net.Run(0, 2);
    net.Run(2);
  }
  EXPECT_EQ(context.captures, 2);
  EXPECT_TRUE(net.replaying(0, 2));
  EXPECT_TRUE(net.replaying(2, 4));
}

TEST(NetCapture, AnUnplannedNetIsRecordedOnItsSecondRun) {
  Workspace root;
  root.CreateTensor("x")->Resize({8});
  RecordingContext context;
  Net net(Chain(2), &root, &context, {}, /*plan_memory=*/false);
  net.Run();  // operators allocate their outputs: never inside a recording
  EXPECT_EQ(context.captures, 0);
  net.Run();
  EXPECT_EQ(context.captures, 1);
}

TEST(NetCapture, DisabledCaptureRunsOperatorByOperator) {
  Workspace root;
  root.CreateTensor("x")->Resize({8});
  RecordingContext context;
  Net net(Chain(2), &root, &context, {"h2"});
  for (int i = 0; i < 3; ++i) net.Run();
  net.DisableCapture();
  for (int i = 0; i < 3; ++i) net.Run();
  EXPECT_EQ(context.captures, 1);
  EXPECT_EQ(context.replays, 1);
  EXPECT_FALSE(net.replaying(0, 2));
}

}  // namespace
}  // namespace crossbow
