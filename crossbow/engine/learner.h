#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "crossbow/core/net.h"
#include "crossbow/engine/learner_spec.h"
#include "crossbow/engine/optimizer_ops.h"

namespace crossbow {

struct EvalResult {
  double loss = 0, top1 = 0, top5 = 0;
};

// One model replica on one context: its own parameters, optimiser state and workspace, a
// training plan (forward, autodiff backward, the optimiser's update) and an inference plan, each
// compiled once per batch size. Everything runs on the calling thread, on the spec's device:
// host batches are copied in on the learner's context (its stream on a GPU), and the values
// returned to the host (loss, probabilities, evaluation) are copied back.
class Learner {
 public:
  explicit Learner(LearnerSpec spec);

  // Forward, backward and update on one batch; returns the loss. A non-finite loss, gradient
  // or batch-norm statistic throws before the update, leaving the parameters as they were.
  float Step(const float* images, const Shape& shape, const int32_t* labels);
  // Step in two halves, so that an engine can act between them (take SMA's snapshot, average
  // gradients): ForwardBackward leaves every parameter's gradient in Gradient(param) and
  // returns the loss, finite or not; Update applies the optimiser's step to those gradients.
  float ForwardBackward(const float* images, const Shape& shape, const int32_t* labels);
  void Update();
  // Valid between ForwardBackward and Update.
  bool GradientsAndStatisticsFinite();
  // Valid between ForwardBackward and Update: plain, the parameter's shape, on the device.
  Tensor* Gradient(const std::string& param);
  // The spec's output blob (class probabilities), in inference mode, on the device.
  const Tensor& Predict(const float* images, const Shape& shape);
  EvalResult Evaluate(const float* images, const Shape& shape, const int32_t* labels);

  Tensor* Blob(const std::string& name) { return root_.GetTensor(name); }
  const LearnerSpec& spec() const { return spec_; }
  ContextBase* context() { return context_.get(); }
  Device device() const { return spec_.device; }
  void SetLearningRate(float lr);
  // The optimiser's state blobs (optimizer_ops.h), which checkpoints keep per learner.
  const std::vector<OptimizerStateBlob>& optimizer_state() const { return optimizer_state_; }
  int64_t OptimizerStateFloats();
  // As a new optimiser on the current parameters: moments and step counts 0, slow weights = the
  // parameters (a restart from z).
  void ResetOptimizerState();
  int64_t iteration() const { return iteration_; }
  void Save(const std::string& path);
  void Load(const std::string& path);
  // Of the training plan compiled for the latest batch size (zero before the first step).
  MemoryStats memory_stats() const;

 private:
  struct TrainPlan {
    std::unique_ptr<Net> net;
    size_t update_begin = 0;  // ops from here on update the parameters
  };
  void CheckForwardNet();
  void Feed(const float* images, const Shape& shape, const int32_t* labels);
  TrainPlan& TrainPlanFor(int64_t batch);
  Net& InferencePlanFor(int64_t batch, bool with_loss);

  float ReadFloat(const Tensor& t);

  LearnerSpec spec_;
  std::unique_ptr<ContextBase> context_;
  Workspace root_;
  NetDef train_def_;
  size_t update_begin_ = 0;
  std::map<std::string, std::string> gradients_;  // param -> its gradient blob
  std::vector<OptimizerStateBlob> optimizer_state_;
  std::map<int64_t, TrainPlan> train_plans_;
  std::map<std::pair<int64_t, bool>, std::unique_ptr<Net>> inference_plans_;
  int64_t last_batch_ = 0;
  int64_t iteration_ = 0;
};

}  // namespace crossbow
