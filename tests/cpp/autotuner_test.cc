#include "crossbow/engine/autotuner.h"

#include <gtest/gtest.h>

#include <map>

#include "crossbow/core/enforce.h"
#include "tests/cpp/expect_error.h"

namespace crossbow {
namespace {

// Replays a scripted throughput trace (images/s per learner count) and records what was asked.
struct Trace {
  std::map<int, double> rate;
  std::vector<int> measured;
  Autotuner::Measure measure() {
    return [this](int k) {
      measured.push_back(k);
      return rate.at(k);
    };
  }
};

Autotuner::Memory PerLearner(size_t bytes) {
  return [bytes](int k) { return bytes * k; };
}

std::vector<std::string> Actions(const AutotuneResult& r) {
  std::vector<std::string> out;
  for (const auto& d : r.decisions) out.push_back(d.action);
  return out;
}

TEST(Autotuner, AddsWhileThroughputGrowsThenStepsBack) {
  Trace trace{{{1, 100}, {2, 150}, {3, 170}, {4, 180}, {5, 400}}};
  AutotunerOptions o;
  o.memory_limit_bytes = 1 << 30;
  AutotuneResult r = Autotuner(o).Run(trace.measure(), PerLearner(1 << 20));
  // 150 > 110: add; 170 > 165: add; 180 < 187: step back to 3, never trying 5.
  EXPECT_EQ(r.learners_per_device, 3);
  EXPECT_EQ(trace.measured, (std::vector<int>{1, 2, 3, 4}));
  EXPECT_EQ(Actions(r), (std::vector<std::string>{"start", "add", "add", "step back"}));
  EXPECT_EQ(r.decisions.back().learners_per_device, 4);
  EXPECT_DOUBLE_EQ(r.decisions.back().images_per_second, 180);
}

TEST(Autotuner, ThresholdIsConfigurable) {
  Trace trace{{{1, 100}, {2, 104}, {3, 108}}};
  AutotunerOptions o;
  o.memory_limit_bytes = 1 << 30;
  o.max_learners = 3;
  o.threshold = 0.03;
  EXPECT_EQ(Autotuner(o).Run(trace.measure(), PerLearner(1)).learners_per_device, 3);
  o.threshold = 0.05;
  EXPECT_EQ(Autotuner(o).Run(trace.measure(), PerLearner(1)).learners_per_device, 1);
}

TEST(Autotuner, StopsWhereMemoryEnds) {
  Trace trace{{{1, 100}, {2, 200}, {3, 300}, {4, 400}}};
  AutotunerOptions o;
  o.memory_limit_bytes = 3 * 1000 + 999;  // three learners of 1000 bytes fit, four do not
  AutotuneResult r = Autotuner(o).Run(trace.measure(), PerLearner(1000));
  EXPECT_EQ(r.learners_per_device, 3);
  EXPECT_EQ(trace.measured, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(r.decisions.back().action, "stop: memory");
}

TEST(Autotuner, BacksOffWhenALearnerDoesNotFit) {
  Trace trace{{{1, 100}, {2, 200}, {3, 300}}};
  AutotunerOptions o;
  o.memory_limit_bytes = 1 << 30;
  auto measure = [&](int k) -> double {
    if (k == 3) throw OutOfMemoryError("out of memory on cuda:0 allocating 1 bytes");
    return trace.measure()(k);
  };
  AutotuneResult r = Autotuner(o).Run(measure, PerLearner(1));
  EXPECT_EQ(r.learners_per_device, 2);
  EXPECT_EQ(trace.measured, (std::vector<int>{1, 2}));
  EXPECT_EQ(Actions(r), (std::vector<std::string>{"start", "add", "stop: out of memory"}));
  EXPECT_EQ(r.decisions.back().learners_per_device, 2);
  // Other failures are not a back-off.
  auto broken = [](int k) -> double {
    if (k == 2) throw Error("cuDNN error");
    return 100;
  };
  EXPECT_ERROR(Autotuner(o).Run(broken, PerLearner(1)), Error, "cuDNN error");
}

TEST(Autotuner, StopsAtMaxLearners) {
  Trace trace{{{1, 100}, {2, 200}}};
  AutotunerOptions o;
  o.memory_limit_bytes = 1 << 30;
  o.max_learners = 2;
  AutotuneResult r = Autotuner(o).Run(trace.measure(), PerLearner(1));
  EXPECT_EQ(r.learners_per_device, 2);
  EXPECT_EQ(r.decisions.back().action, "stop: max learners");
}

TEST(Autotuner, RejectsBadOptions) {
  AutotunerOptions o;
  o.threshold = -1;
  EXPECT_ERROR(Autotuner{o}, ValueError, "autotuner threshold must be >= 0, got -1");
  o = {};
  o.window_iterations = 0;
  EXPECT_ERROR(Autotuner{o}, ValueError, "autotuner needs window_iterations >= 1");
}

}  // namespace
}  // namespace crossbow
