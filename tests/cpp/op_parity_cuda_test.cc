#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>

#include "crossbow/core/device_backend.h"
#include "operators/filler_op.h"
#include "tests/cpp/device_op_harness.h"
#include "tests/cpp/op_parity_cases.h"

// Every operator of tests/cpp/op_parity_cases.cc on CUDA against its CPU kernel, forward and
// backward, on the same random inputs. The error of a blob is
//   max_i |cpu_i - cuda_i| / max(1, max_i |cpu_i|)
// (relative to the largest CPU value, absolute below 1) and must stay under 1e-4 with TF32 off.
// Random operators get statistical checks instead (see CheckDropout, CheckFill).
namespace crossbow::testing {
namespace {

constexpr double kTolerance = 1e-4;
const Device kGpu{DeviceType::kCUDA, 0};

// The worst error seen per operator type, printed when the run ends.
std::map<std::string, double>& WorstErrors() {
  static std::map<std::string, double> worst;
  return worst;
}

class ParitySummary : public ::testing::Environment {
 public:
  void TearDown() override {
    if (WorstErrors().empty()) return;
    std::cout << "[ parity ] worst relative error per operator, max|cpu - cuda| / max(1, "
                 "max|cpu|):\n";
    for (const auto& [type, error] : WorstErrors()) {
      std::cout << "[ parity ]   " << type << " " << error << "\n";
    }
  }
};
::testing::Environment* const kSummary = ::testing::AddGlobalTestEnvironment(new ParitySummary);

double RelativeError(const std::vector<float>& expected, const std::vector<float>& actual) {
  if (expected.size() != actual.size()) return INFINITY;
  double diff = 0, scale = 1;
  for (size_t i = 0; i < expected.size(); ++i) {
    if (std::isnan(expected[i]) && std::isnan(actual[i])) continue;
    diff = std::max(diff, std::fabs(double{expected[i]} - actual[i]));
    scale = std::max(scale, std::fabs(double{expected[i]}));
  }
  return std::isnan(diff) ? INFINITY : diff / scale;
}

double FractionDiffering(const std::vector<float>& a, const std::vector<float>& b) {
  size_t differ = 0;
  for (size_t i = 0; i < a.size(); ++i) differ += a[i] != b[i];
  return a.empty() ? 0 : static_cast<double>(differ) / a.size();
}

// One case on both devices: the same inputs, and the worst error per operator type.
struct Devices {
  OpHarness cpu;
  DeviceOpHarness gpu{kGpu};
  std::map<std::string, double> errors;

  void Mirror(const std::string& name) { gpu.Feed(name, *cpu.ws().GetTensor(name)); }

  // Blob `name` on both devices; its error is charged to operator `type`.
  void Compare(const std::string& name, const std::string& type, const char* when) {
    ASSERT_EQ(cpu.ShapeOf(name), gpu.ShapeOf(name)) << type << ": blob '" << name << "'";
    Record(type, RelativeError(cpu.Fetch(name), gpu.Fetch(name)), name, when);
  }

  void Record(const std::string& type, double error, const std::string& name, const char* when) {
    EXPECT_LT(error, kTolerance) << type << ": blob '" << name << "' (" << when << ")";
    errors[type] = std::max(errors[type], error);
    WorstErrors()[type] = std::max(WorstErrors()[type], error);
  }
};

bool InPlace(const OperatorDef& op) {
  for (const std::string& out : op.outputs) {
    if (std::count(op.inputs.begin(), op.inputs.end(), out)) return true;
  }
  return false;
}

void CheckValues(const ParityCase& c, Devices& d) {
  d.cpu.Run(c.op);
  OperatorBase* op = d.gpu.Run(c.op);
  auto compare_outputs = [&](const char* when) {
    for (int o = 0; o < static_cast<int>(c.op.outputs.size()); ++o) {
      const bool skip =
          std::count(c.device_specific_outputs.begin(), c.device_specific_outputs.end(), o) > 0;
      if (!c.op.outputs[o].empty() && !skip) d.Compare(c.op.outputs[o], c.op.type, when);
    }
  };
  compare_outputs("forward");
  // Nets replay recorded graphs from their second run on; a replay must compute the same.
  if (op->Capturable() && !InPlace(c.op)) {
    std::unique_ptr<CapturedWork> work = d.gpu.Record(op);
    ASSERT_NE(work, nullptr) << c.op.type << " says it is capturable but was not recorded";
    work->Replay();
    compare_outputs("forward, replayed from a CUDA graph");
  }
  if (c.grad_inputs.empty()) return;
  FeedParityOutputGradients(c, d.cpu);
  for (int o : c.grad_outputs) d.Mirror(c.op.outputs[o] + "_outgrad");
  const std::vector<OperatorDef> backward = ParityGradientOps(c);
  d.cpu.Run(backward);
  d.gpu.Run(backward);
  std::map<std::string, std::string> writer;  // blob -> the type of the last op writing it
  for (const OperatorDef& op : backward) {
    for (const std::string& out : op.outputs) {
      if (!out.empty()) writer[out] = op.type;
    }
  }
  for (const auto& [blob, type] : writer) d.Compare(blob, type, "backward");
}

// Keep rate near 1 - ratio, mask in {0, 1}, Y = X * mask / (1 - ratio).
void ExpectDropout(const std::vector<float>& x, const std::vector<float>& y,
                   const std::vector<float>& mask, float ratio, const char* device) {
  SCOPED_TRACE(device);
  ASSERT_EQ(mask.size(), x.size());
  double kept = 0;
  std::vector<float> expected(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    ASSERT_TRUE(mask[i] == 0.f || mask[i] == 1.f) << "mask[" << i << "] = " << mask[i];
    kept += mask[i];
    expected[i] = mask[i] * x[i] / (1.f - ratio);
  }
  // 65,536 units: the keep rate's standard deviation is under 0.002.
  EXPECT_NEAR(kept / x.size(), 1.0 - ratio, 0.01);
  EXPECT_LT(RelativeError(expected, y), 1e-6);
}

void CheckDropout(const ParityCase& c, Devices& d) {
  const float ratio = c.op.Arg<float>("ratio", 0.5f);
  const std::string &x = c.op.inputs[0], &y = c.op.outputs[0], &mask = c.op.outputs[1];
  d.cpu.Run(c.op);
  ExpectDropout(d.cpu.Fetch(x), d.cpu.Fetch(y), d.cpu.Fetch(mask), ratio, "cpu");
  OperatorBase* op = d.gpu.Run(c.op);
  const std::vector<float> first = d.gpu.Fetch(mask);
  ExpectDropout(d.gpu.Fetch(x), d.gpu.Fetch(y), first, ratio, "cuda");

  // The gradient goes through the GPU's own mask.
  FeedParityOutputGradients(c, d.cpu);
  d.Mirror(y + "_outgrad");
  d.gpu.Run(ParityGradientOps(c));
  const std::vector<float> dy = d.gpu.Fetch(y + "_outgrad");
  std::vector<float> expected(dy.size());
  for (size_t i = 0; i < dy.size(); ++i) expected[i] = dy[i] * first[i] / (1.f - ratio);
  d.Record("DropoutGradient", RelativeError(expected, d.gpu.Fetch(x + "_grad")), x + "_grad",
           "backward, against the CUDA mask");

  // Each run, and each replay of one recorded graph, draws a new mask (two independent masks
  // differ in 2 p (1 - p) = 42% of the units for p = 0.7).
  d.gpu.Run(c.op);
  const std::vector<float> second = d.gpu.Fetch(mask);
  EXPECT_GT(FractionDiffering(first, second), 0.3) << "a second run drew the same mask";
  std::unique_ptr<CapturedWork> work = d.gpu.Record(op);
  ASSERT_NE(work, nullptr);
  work->Replay();
  const std::vector<float> third = d.gpu.Fetch(mask);
  work->Replay();
  const std::vector<float> fourth = d.gpu.Fetch(mask);
  ExpectDropout(d.gpu.Fetch(x), d.gpu.Fetch(y), fourth, ratio, "cuda, replayed");
  EXPECT_GT(FractionDiffering(third, fourth), 0.3) << "two replays drew the same mask";
}

// The distribution a filler draws from: mean, standard deviation and the range of its values.
struct FillStatistics {
  double mean, std, low = -INFINITY, high = INFINITY;
  bool normal;
};

FillStatistics ExpectedFill(const OperatorDef& op, const Shape& shape) {
  auto uniform = [](double a, double b) {
    return FillStatistics{(a + b) / 2, (b - a) / std::sqrt(12.0), a, b, false};
  };
  if (op.type == "UniformFill")
    return uniform(op.Arg<float>("min", -1.f), op.Arg<float>("max", 1.f));
  if (op.type == "XavierFill") {
    const double scale = std::sqrt(3.0 / FanIn(shape));
    return uniform(-scale, scale);
  }
  if (op.type == "GaussianFill") {
    return {op.Arg<float>("mean", 0.f), op.Arg<float>("std", 1.f), -INFINITY, INFINITY, true};
  }
  const bool fan_out = op.Arg<std::string>("mode", "fan_in") == "fan_out";
  return {0, std::sqrt(2.0 / (fan_out ? FanOut(shape) : FanIn(shape))), -INFINITY, INFINITY, true};
}

void ExpectFill(const std::vector<float>& values, const FillStatistics& expected,
                const char* device) {
  SCOPED_TRACE(device);
  const double n = values.size();
  double sum = 0, squares = 0, within_one_std = 0;
  // The devices compute a bound in float, the test in double.
  const double slack = 1e-5 * expected.std;
  for (float v : values) {
    ASSERT_TRUE(v >= expected.low - slack && v <= expected.high + slack)
        << v << " is outside [" << expected.low << ", " << expected.high << "]";
    sum += v;
    within_one_std += std::fabs(v - expected.mean) < expected.std;
  }
  const double mean = sum / n;
  for (float v : values) squares += (v - mean) * (v - mean);
  // Over 10^5 values: the mean is within 6 standard errors, the deviation within 2%.
  EXPECT_NEAR(mean, expected.mean, 6 * expected.std / std::sqrt(n));
  EXPECT_NEAR(std::sqrt(squares / (n - 1)) / expected.std, 1.0, 0.02);
  // A normal distribution puts 68.27% of its values within one standard deviation.
  if (expected.normal) EXPECT_NEAR(within_one_std / n, 0.6827, 0.01);
}

void CheckFill(const ParityCase& c, Devices& d) {
  const std::string& y = c.op.outputs[0];
  d.cpu.Run(c.op);
  const FillStatistics expected = ExpectedFill(c.op, d.cpu.ShapeOf(y));
  ExpectFill(d.cpu.Fetch(y), expected, "cpu");
  OperatorBase* op = d.gpu.Run(c.op);
  EXPECT_EQ(d.gpu.ShapeOf(y), d.cpu.ShapeOf(y));
  const std::vector<float> first = d.gpu.Fetch(y);
  ExpectFill(first, expected, "cuda");
  std::unique_ptr<CapturedWork> work = d.gpu.Record(op);
  ASSERT_NE(work, nullptr);
  work->Replay();
  const std::vector<float> replayed = d.gpu.Fetch(y);
  ExpectFill(replayed, expected, "cuda, replayed");
  EXPECT_GT(FractionDiffering(first, replayed), 0.99) << "a replay drew the same values";
}

class OpParityCuda : public ::testing::TestWithParam<ParityCase> {};

TEST_P(OpParityCuda, MatchesCpu) {
  const ParityCase& c = GetParam();
  if (CudaDeviceCount() == 0) GTEST_SKIP() << "no GPU: " << c.op.type << " is compared there";
  Devices d;
  FeedParityInputs(c, d.cpu);
  // Before the CPU runs: in-place operators overwrite their inputs.
  for (const std::string& name : c.op.inputs) d.Mirror(name);
  switch (c.check) {
    case ParityCheck::kValues:
      CheckValues(c, d);
      break;
    case ParityCheck::kDropout:
      CheckDropout(c, d);
      break;
    case ParityCheck::kFill:
      CheckFill(c, d);
      break;
  }
  std::cout << "[ parity ] " << c.name << ":";
  for (const auto& [type, error] : d.errors) std::cout << " " << type << " " << error;
  std::cout << "\n";
}

INSTANTIATE_TEST_SUITE_P(AllOperators, OpParityCuda, ::testing::ValuesIn(ParityCases()),
                         [](const ::testing::TestParamInfo<ParityCase>& info) {
                           return info.param.name;
                         });

// The learner rewrites the learning rate between replays of a recorded graph: the update
// must read it on the device.
TEST(OpParityCudaReplay, MomentumSGDReadsTheLearningRateOnTheDevice) {
  if (CudaDeviceCount() == 0) GTEST_SKIP() << "no GPU";
  const OperatorDef sgd = MakeOperator("MomentumSGD", {"p", "g", "v", "lr"}, {"p", "v"},
                                       {{"momentum", 0.9}, {"weight_decay", 1e-4}});
  Devices d;
  for (const char* name : {"p", "g", "v"}) d.cpu.Feed(name, {300});
  d.cpu.Feed("lr", {1}, {0.1f});
  for (const char* name : {"p", "g", "v", "lr"}) d.Mirror(name);
  d.cpu.Run(sgd);
  std::unique_ptr<CapturedWork> work = d.gpu.Record(d.gpu.Run(sgd));
  ASSERT_NE(work, nullptr);
  for (float lr : {0.05f, 0.2f, 0.01f}) {
    d.cpu.Feed("lr", {1}, {lr});
    d.Mirror("lr");
    d.cpu.Run(sgd);
    work->Replay();
    d.Compare("p", "MomentumSGD", "replayed with a new learning rate");
    d.Compare("v", "MomentumSGD", "replayed with a new learning rate");
  }
}

// Not a GPU test: the registry alone says whether a CPU operator lacks its CUDA kernel.
TEST(Registry, EveryCpuOperatorHasACudaKernel) {
  const std::vector<std::string> cuda = OperatorRegistry::Types(DeviceType::kCUDA);
  for (const std::string& type : OperatorRegistry::Types(DeviceType::kCPU)) {
    EXPECT_TRUE(std::binary_search(cuda.begin(), cuda.end(), type))
        << type << " has a CPU kernel but no CUDA kernel (REGISTER_CUDA_OPERATOR)";
  }
}

}  // namespace
}  // namespace crossbow::testing
