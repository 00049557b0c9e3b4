#pragma once

// Inputs on which a convolution in a half precision is exact, lifted off that precision's grid
// by a known amount: what the engine tests use to tell a GPU that computes its convolutions on
// half-precision copies from one that computes in fp32 or TF32 (engine_cuda_test.cc), and to
// show on the CPU that the difference is large enough to see (engine_test.cc).
#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "tests/cpp/engine_test_util.h"

namespace crossbow {

// Pixels are integers 1..7, each lifted by `lift` units in the last place of a float type with
// `bits` significant bits (bfloat16 8, fp16 11): with lift < 0.5, rounding to that type gives the
// integer back. Labels as Source's.
inline std::unique_ptr<ArraySource> LiftedIntegerSource(int n, int batch, int bits, double lift) {
  std::vector<float> images(n * 192);
  std::vector<int32_t> labels(n);
  std::mt19937 rng(1);
  for (int i = 0; i < n; ++i) {
    labels[i] = static_cast<int32_t>(rng() % 4);
    for (int j = 0; j < 192; ++j) {
      const int value = 1 + static_cast<int>(rng() % 7);
      int exponent = 0;
      std::frexp(static_cast<double>(value), &exponent);  // value in [2^(e-1), 2^e)
      images[i * 192 + j] = static_cast<float>(value + lift * std::ldexp(1.0, exponent - bits));
    }
  }
  return std::make_unique<ArraySource>(std::move(images), std::move(labels), Shape{3, 8, 8}, batch);
}

// The first iteration's loss of each of 4 learners of Spec(false) on `devices` in `precision`,
// on LiftedIntegerSource(bits, lift), all starting from one model whose convolution weights are
// -1, 0 or 1: every convolution output is an integer of at most 7 x 27 = 189 in magnitude, which
// bfloat16 and fp16 hold exactly, so that in their precisions only the rounding of the inputs
// (the lift) changes the forward pass.
inline std::vector<double> FirstLossesOnLiftedIntegers(const std::string& devices,
                                                       const std::string& precision, int bits,
                                                       double lift) {
  auto unlifted = LiftedIntegerSource(64, 4, bits, 0.0);
  Engine start(Spec(false), Options("cpu:0", 4), unlifted.get());
  std::map<std::string, Tensor> state = Snapshot(start);
  std::mt19937 rng(3);
  std::vector<float> weights(state.at("z/w").numel());
  for (float& w : weights) w = static_cast<float>(static_cast<int>(rng() % 3) - 1);
  for (auto& [name, tensor] : state) {
    if (name.size() >= 2 && name.compare(name.size() - 2, 2, "/w") == 0) {
      std::copy(weights.begin(), weights.end(), tensor.mutable_data<float>());
    }
  }
  auto source = LiftedIntegerSource(64, 4, bits, lift);
  EngineOptions options = Options(devices, 4);
  options.precision = precision;
  Engine engine(Spec(false), options, source.get());
  engine.RestoreState(state, 0);
  return engine.Iterate().learner_losses;
}

// The least that the lift moves the first losses by (the largest of the 4 learners' changes),
// for both bit counts; engine_test.cc shows that it does.
constexpr double kLiftedLossDistance = 1e-3;

// Max |a[i] - b[i]|.
inline double MaxDifference(const std::vector<double>& a, const std::vector<double>& b) {
  EXPECT_EQ(a.size(), b.size());
  double worst = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i)
    worst = std::max(worst, std::fabs(a[i] - b[i]));
  return worst;
}

}  // namespace crossbow
