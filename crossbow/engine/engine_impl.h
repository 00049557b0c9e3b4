#pragma once

#include <atomic>
#include <cmath>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "crossbow/comm/collectives.h"
#include "crossbow/engine/engine.h"
#include "crossbow/engine/model_layout.h"
#include "crossbow/engine/sync/synchroniser.h"
#include "crossbow/engine/sync_backend.h"

namespace crossbow {

// The engine's state and threads (docs/design/engine.md). One mutex guards the counters that
// order the threads; tensors are handed over by those counters, never touched by two threads
// at once.
class Engine::Impl {
 public:
  Impl(const LearnerSpec& spec, EngineOptions options, BatchSource* train);
  ~Impl();

  IterationResult Iterate(std::optional<double> next_rate, std::optional<double> next_momentum);
  void SetLearningRate(double lr);
  void SetMomentum(double momentum);
  void SetLearnersPerDevice(int k);
  EvalResult Evaluate(BatchSource* test);
  std::vector<double> DistancesToAverage();
  std::string DescribeWaits();
  size_t LearnerMemoryBytes();
  size_t MemoryBudgetBytes();
  std::vector<std::pair<std::string, const Tensor*>> StateTensors();
  void RestoreState(const std::map<std::string, Tensor>& tensors, int64_t iteration);

  int learners_per_device() const { return k_; }
  int num_learners() const { return k_ * static_cast<int>(devices_.size()); }
  bool learners_are_the_model() const { return algorithm_->LearnersAreTheModel(); }
  const EngineOptions& options() const { return options_; }
  double learning_rate() const { return lr_; }
  bool Restarts(double lr) const;  // whether the rate lr, set now, restarts the learners from z
  int64_t failed_iteration() {
    std::lock_guard<std::mutex> lock(mutex_);
    return failed_at_;
  }
  int64_t iteration() const { return iteration_; }

 private:
  struct Slot {  // one learner and its thread
    std::unique_ptr<Learner> learner;
    int index = 0;  // over all devices, device-major
    std::vector<int> cores;
    Tensor contribution;  // layout_.total() floats on the device, read by its device's sync
    SegmentTable params, state, gradients;  // the learner's blobs as the flat buffers see them
    // Of iteration t at [t & 1]: an iteration may be posted ahead while the learner runs the
    // one before it. The batch is posted by Iterate and released by the learner.
    const Batch* batches[2] = {nullptr, nullptr};
    int64_t images[2] = {0, 0};
    float losses[2] = {0, 0};
    int64_t task = -1, done = -1;  // the last iterations posted and finished
    float rate = 0;                // the learning rate the learner has
    float momentum = NAN;          // the momentum it was last given (NaN: its spec's)
    std::thread thread;
  };
  // A group of cores or a GPU: its learners, its copy of z and its sync thread.
  struct Device {
    int rank = 0;    // in this process: its place in the in-process collectives
    int global = 0;  // in the job: names and seeds its learners
    crossbow::Device device;
    std::vector<int> cores;
    std::vector<std::unique_ptr<Slot>> slots;
    std::unique_ptr<SyncBackend> backend;
    // Flat, as layout_: z = [parameters | the learners' average statistics] and the
    // synchroniser's central buffer (z_prev for SMA); and per blob views of them.
    Tensor average, central;
    std::vector<Tensor> z, z_central, z_state;
    Tensor sum;  // device sum, then all-reduced over devices
    int contributions = 0;
    int64_t synced = 0;  // iterations whose synchronisation is applied to z (or gradients)
    std::thread thread;
  };
  struct Stopped {};  // unwinds a thread when the engine stops or another thread failed

  std::unique_ptr<Slot> MakeSlot(Device& device, int j);
  void StartThreads();
  void StopThreads();
  // Takes iteration t's batches and posts them, to be trained at learning rate `rate` (and
  // momentum_ where set).
  void Post(const std::vector<Slot*>& slots, int64_t t, double rate);
  void LearnerLoop(Device& device, Slot& slot);
  void RunIteration(Device& device, Slot& slot, int64_t t);
  void SyncLoop(Device& device);
  void Synchronise(Device& device, int64_t t);
  void Contribute(Device& device);
  template <typename Ready>
  void WaitFor(Ready ready);
  void Fail(const std::string& message, int64_t iteration);
  // Waits until every device has applied every iteration; throws the first failure, and where
  // an iteration was posted ahead (only Iterate may come next).
  void Fence();
  static void CheckRate(double lr);
  // After Fence: z holds the one model where the learners are it (S-SGD, SGD) too.
  void PublishAverage();
  void RestartFromAverage(Slot& slot, const Device& device);

  LearnerSpec spec_;
  EngineOptions options_;
  std::unique_ptr<Synchroniser> algorithm_;
  BatchSource* train_;
  std::unique_ptr<Collectives> comm_;  // over the devices (and ranks): MakeCollectives
  std::unique_ptr<Learner> average_;   // evaluates z; its initial weights are everyone's
  ModelLayout layout_;
  std::vector<std::unique_ptr<Device>> devices_;
  int k_ = 0;
  int world_ = 1, process_rank_ = 0;  // of the MPI job
  double lr_ = 0, lr_peak_ = 0;
  int64_t iteration_ = 0;
  int64_t posted_ = -1;          // the last iteration posted: iteration_ once posted ahead
  double posted_rates_[2] = {};  // the learning rate of iteration t at [t & 1]
  double momentum_ = NAN;        // SetMomentum's (NaN: never set)
  double posted_momenta_[2] = {NAN, NAN};  // the momentum of iteration t at [t & 1]
  int64_t largest_batch_ = 0;       // images of one learner; a GPU learner's plan is made for it
  std::atomic<int> acquiring_{-1};  // the learner whose batch Iterate is taking, or -1
  std::atomic<int64_t> acquiring_for_{0};  // ... and the iteration it is for

  std::mutex mutex_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::string error_;       // the first failure; the engine stops taking iterations after it
  int64_t failed_at_ = -1;  // its iteration
};

}  // namespace crossbow
