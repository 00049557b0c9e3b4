#pragma once

// What the engine tests share: a small net, a synthetic source, options and snapshots.
#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>

#include "crossbow/engine/array_source.h"
#include "crossbow/engine/engine.h"

namespace crossbow {

// conv -> [bn] -> relu -> global average pool -> fc -> softmax loss, on 3x8x8 images.
inline LearnerSpec Spec(bool batch_norm) {
  LearnerSpec spec;
  spec.name = batch_norm ? "bn_net" : "plain_net";
  spec.input_shape = {3, 8, 8};
  spec.init_net.ops = {MakeFiller("MSRAFill", "w", {8, 3, 3, 3}),
                       MakeFiller("XavierFill", "fw", {4, 8}),
                       MakeFiller("ConstantFill", "fb", {4})};
  spec.net.ops = {
      MakeOperator("Conv", {"data", "w"}, {"c"}, {{"kernel", int64_t{3}}, {"pad", int64_t{1}}})};
  spec.params = {"w", "fw", "fb"};
  std::string x = "c";
  if (batch_norm) {
    spec.init_net.ops.push_back(MakeFiller("ConstantFill", "s", {8}, {{"value", 1.0}}));
    spec.init_net.ops.push_back(MakeFiller("ConstantFill", "b", {8}));
    spec.init_net.ops.push_back(MakeFiller("ConstantFill", "rm", {8}));
    spec.init_net.ops.push_back(MakeFiller("ConstantFill", "rv", {8}, {{"value", 1.0}}));
    spec.net.ops.push_back(
        MakeOperator("SpatialBN", {"c", "s", "b", "rm", "rv"}, {"n", "rm", "rv", "sm", "sv"}));
    spec.params.insert(spec.params.end(), {"s", "b"});
    spec.state = {"rm", "rv"};
    x = "n";
  }
  spec.net.ops.push_back(MakeOperator("Relu", {x}, {"r"}));
  spec.net.ops.push_back(MakeOperator("GlobalAveragePool", {"r"}, {"g"}));
  spec.net.ops.push_back(MakeOperator("FC", {"g", "fw", "fb"}, {"logits"}));
  spec.net.ops.push_back(MakeOperator("SoftmaxWithLoss", {"logits", "label"}, {"prob", "loss"}));
  spec.solver.lr = 0.05;
  spec.solver.weight_decay = 1e-4;
  spec.seed = 7;
  return spec;
}

inline std::unique_ptr<ArraySource> Source(int n, int batch, uint32_t seed = 1) {
  std::vector<float> images(n * 192);
  std::vector<int32_t> labels(n);
  std::mt19937 rng(seed);
  std::normal_distribution<float> noise(0.f, 1.f);
  for (int i = 0; i < n; ++i) {
    labels[i] = static_cast<int32_t>(rng() % 4);
    for (int j = 0; j < 192; ++j) images[i * 192 + j] = noise(rng) + 0.4f * labels[i] * (j / 64);
  }
  return std::make_unique<ArraySource>(std::move(images), std::move(labels), Shape{3, 8, 8}, batch);
}

inline EngineOptions Options(const std::string& devices, int k, const std::string& sync = "sma") {
  EngineOptions o;
  o.devices = ParseDevices(devices);
  o.learners_per_device = k;
  o.sync = sync;
  return o;
}

// Host copies of everything a checkpoint holds.
inline std::map<std::string, Tensor> Snapshot(Engine& engine) {
  std::map<std::string, Tensor> out;
  for (const auto& [name, t] : engine.StateTensors()) out[name] = ToHost(*t);
  return out;
}

inline void ExpectNear(const Tensor& a, const Tensor& b, float tol, const std::string& what) {
  ASSERT_EQ(a.shape(), b.shape()) << what;
  for (int64_t i = 0; i < a.numel(); ++i) {
    ASSERT_NEAR(a.data<float>()[i], b.data<float>()[i], tol) << what << " element " << i;
  }
}

// Forwards a source and runs `before(n)` ahead of its n-th Acquire (counted from 0); counts
// the batches acquired and not yet released.
class HookedSource final : public BatchSource {
 public:
  HookedSource(std::unique_ptr<BatchSource> source, std::function<void(int64_t)> before)
      : source_(std::move(source)), before_(std::move(before)) {}
  Shape ExampleShape() const override { return source_->ExampleShape(); }
  int64_t EpochSize() const override { return source_->EpochSize(); }
  int64_t batch_size() const override { return source_->batch_size(); }
  const Batch* Acquire() override {
    before_(acquired_++);
    const Batch* batch = source_->Acquire();
    ++held_;
    return batch;
  }
  void Release(const Batch* batch) override {
    source_->Release(batch);
    --held_;
  }
  int64_t held() const { return held_; }
  std::string SaveState() const override { return source_->SaveState(); }
  void RestoreState(const std::string& state) override { source_->RestoreState(state); }

 private:
  std::unique_ptr<BatchSource> source_;
  std::function<void(int64_t)> before_;
  int64_t acquired_ = 0;
  std::atomic<int64_t> held_{0};  // released on the learners' threads
};

}  // namespace crossbow
