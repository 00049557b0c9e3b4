#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
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
  // A mixed batch (Mixup, CutMix: core/batch_source.h's Batch) also gives labels_b and lam;
  // the loss, SoftmaxWithLoss on the spec's label, then weighs each row's two labels by lam.
  float ForwardBackward(const float* images, const Shape& shape, const int32_t* labels,
                        const int32_t* labels_b = nullptr, const float* lam = nullptr);
  void Update();
  // Valid between ForwardBackward and Update.
  bool GradientsAndStatisticsFinite();
  // Valid between ForwardBackward and Update: plain, the parameter's shape, on the device.
  Tensor* Gradient(const std::string& param);
  // The spec's output blob (class probabilities), in inference mode, on the device.
  const Tensor& Predict(const float* images, const Shape& shape);
  EvalResult Evaluate(const float* images, const Shape& shape, const int32_t* labels);
  // The forward net in inference mode on a batch (with labels, the loss layer too), `outputs`
  // (blobs it reads or writes) kept out of the memory planner's shared buffers and unfused, so
  // that Fetch reads each until the next Forward. ValueError for a blob the net lacks.
  void Forward(const float* images, const Shape& shape, const int32_t* labels,
               const std::set<std::string>& outputs);
  // A blob's value now, on the device: a parameter, state or other blob of the learner's own
  // workspace, an output of the last Forward, or a gradient (GradientNames) after a
  // ForwardBackward. ValueError naming it and listing FetchableNames otherwise.
  const Tensor& Fetch(const std::string& name);
  std::vector<std::string> FetchableNames() const;
  // param -> the name of its gradient blob.
  const std::map<std::string, std::string>& GradientNames() const { return gradients_; }

  // Parameters, momentum, statistics and inputs (the learner's own workspace).
  Tensor* Blob(const std::string& name) { return root_.GetTensor(name); }
  // Any blob of the training plan compiled for the latest batch size (activations and
  // gradients live there, not in Blob's workspace), as the latest step left it.
  Tensor* TrainingBlob(const std::string& name);
  const LearnerSpec& spec() const { return spec_; }
  ContextBase* context() { return context_.get(); }
  Device device() const { return spec_.device; }
  void SetLearningRate(float lr);
  // adamw, radam: beta1 of the steps from now on (a momentum schedule); sgd's momentum is fixed
  // (a ValueError).
  void SetMomentum(float momentum);
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
  void Feed(const float* images, const Shape& shape, const int32_t* labels,
            const int32_t* labels_b = nullptr, const float* lam = nullptr);
  TrainPlan& TrainPlanFor(int64_t batch, bool mixed);
  Net& InferencePlanFor(int64_t batch, bool with_loss);
  Net& ForwardPlanFor(int64_t batch, bool with_loss, const std::set<std::string>& outputs);

  float ReadFloat(const Tensor& t);

  LearnerSpec spec_;
  std::unique_ptr<ContextBase> context_;
  Workspace root_;
  NetDef train_def_;
  NetDef mixed_train_def_;  // train_def_ with the loss reading mixed targets; empty: no such loss
  NetDef unfused_net_;      // the spec's forward net before fusion: Forward keeps any of its blobs
  size_t update_begin_ = 0;
  std::map<std::string, std::string> gradients_;  // param -> its gradient blob
  std::vector<OptimizerStateBlob> optimizer_state_;
  std::map<std::pair<int64_t, bool>, TrainPlan> train_plans_;  // by batch size, mixed
  std::map<std::pair<int64_t, bool>, std::unique_ptr<Net>> inference_plans_;
  std::map<std::tuple<int64_t, bool, std::set<std::string>>, std::unique_ptr<Net>> forward_plans_;
  Net* last_forward_ = nullptr;
  std::set<std::string> last_outputs_;
  std::pair<int64_t, bool> last_plan_ = {0, false};
  int64_t iteration_ = 0;
};

}  // namespace crossbow
