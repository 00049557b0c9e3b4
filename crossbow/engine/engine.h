#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "crossbow/comm/process_group.h"
#include "crossbow/core/batch_source.h"
#include "crossbow/engine/learner.h"

namespace crossbow {

// One device of the engine: a set of cores that its learners are pinned to, or a GPU (whose
// learner threads share the process's cores). Several devices may name the same GPU: each is
// a group of learners with its own average model, synchronised as separate devices are.
struct DeviceLayout {
  Device device;
  std::vector<int> cores;
};
// "cpu" (all cores, one device), "cpu:0-1,cpu:2-3" (one device per group) or
// "cuda:0,cuda:1" (one device per GPU; "cuda:0,cuda:0" is two devices on one GPU), or
// "cuda:local" (under mpirun, one rank per GPU: the GPU numbered as the rank on its machine).
std::vector<DeviceLayout> ParseDevices(const std::string& spec);

struct EngineOptions {
  std::vector<DeviceLayout> devices;
  int learners_per_device = 1;  // the autotuner changes it through SetLearnersPerDevice
  // A synchroniser's name (engine/sync/): sma, easgd, localsgd, diloco, ssgd or sgd.
  std::string sync = "sma";
  // sma, easgd, localsgd, diloco: synchronise every H iterations; 0 (auto): the synchroniser's
  // own H (WithSyncDefaults, sync/sync_defaults.h)
  int sync_period = 0;
  int64_t sync_warmup = 0;  // ... and every iteration of the first this many
  // SMA, EASGD: how strongly learners are pulled to the average; 0 (auto): from the job's
  // learner count, again whenever it changes (WithSyncDefaults)
  double alpha = 0;
  double central_momentum = 0.9;                 // SMA: mu_z
  std::string central_momentum_type = "polyak";  // SMA: polyak | nesterov
  double outer_lr = 0.7;                         // DiLoCo: the outer SGD's learning rate
  double outer_momentum = 0.9;                   // DiLoCo: its Nesterov momentum
  int threads_per_learner = 1;
  std::string precision = "fp32";  // of convolutions: fp32, bf16, tf32, fp16 (core/precision.h)
  uint64_t seed = 0;
  // SMA restarts the learners from z when the learning rate falls to this fraction (or less) of
  // the highest rate since the last restart: every step of a step policy, now and then with a
  // smooth one (each halving of a cosine). 0: never.
  double restart_drop = 0.5;
  // A learner whose loss is not finite skips its update (it still synchronises) instead of
  // stopping training.
  bool skip_nan = false;
  int collective_timeout_ms = 300000;
  // The other processes of an MPI job (JoinWorld), each with the same devices and learners;
  // null: this process alone. Device d of rank r is device r * devices.size() + d of the job:
  // it names and seeds its learners as that device of one process holding them all would, and
  // the training source is sharded so that it gets the batches that device would get.
  std::shared_ptr<ProcessGroup> group;
};

// Whether a new learning rate `lr` is a drop that restarts learners from z: at most
// `restart_drop` x `peak`, the highest rate since the last restart.
bool IsRestartingDrop(double lr, double peak, double restart_drop);

struct IterationResult {
  double loss = 0;  // mean over learners
  int64_t images = 0;
  std::vector<double> learner_losses;
  int skipped = 0;  // learners whose non-finite loss skipped their update (skip_nan)
};

// Many learners per device kept together by a synchroniser (engine/sync/: SMA, S-SGD, SGD,
// local SGD, DiLoCo, EASGD) in the same machinery. Learners run on their own threads; Iterate()
// returns when every learner has taken and trained on one batch and the average model has been
// updated.
class Engine {
 public:
  Engine(const LearnerSpec& spec, EngineOptions options, BatchSource* train);
  ~Engine();

  // With `next_rate`, the caller promises that its next call is Iterate again, the next
  // iteration at that learning rate: the engine then takes that iteration's batches too, and a
  // learner that finishes this iteration before the others starts its next forward and
  // backward pass instead of waiting for them (docs/design/engine.md, "Running ahead"). Any
  // other call before that Iterate throws; so does a next rate that would restart the learners.
  // `next_momentum`, with a next rate, is that iteration's momentum (SetMomentum).
  IterationResult Iterate(std::optional<double> next_rate = std::nullopt,
                          std::optional<double> next_momentum = std::nullopt);
  // SMA: a drop in the learning rate restarts every learner from the average model z.
  void SetLearningRate(double lr);
  // The optimisers' momentum (adamw's and radam's beta1) from the next iteration posted on: a
  // momentum schedule (fastai's one-cycle). Until it is first set, each learner keeps its spec's.
  void SetMomentum(double momentum);
  double learning_rate() const;
  // Whether learning rate lr, set now, would restart the learners from z.
  bool RestartsAt(double lr) const;
  void SetLearnersPerDevice(int k);
  int learners_per_device() const;
  int num_learners() const;  // of this process
  // S-SGD and SGD: every learner is the one model, stepping on the whole iteration's batch.
  bool learners_are_the_model() const;
  const EngineOptions& options() const;
  int64_t iteration() const;
  // The iteration in which the engine failed (the one after iteration() where it was posted
  // ahead), or -1.
  int64_t failed_iteration() const;

  // Of the average model z (SMA), or of the one model (S-SGD, SGD), in inference mode,
  // over one epoch of `test`.
  EvalResult Evaluate(BatchSource* test);
  std::vector<double> DistancesToAverage() const;  // ||w_j - z|| per learner
  // What the engine's threads are waiting for, one line each, for a stall report. Callable
  // from any thread while the engine runs; never blocks.
  std::string DescribeWaits() const;
  // What one more learner costs: its planned activations (after its first step), what its
  // context holds (GPU library workspaces) and its parameters, optimiser state and synchronisation
  // buffer. For the autotuner's memory limit.
  size_t LearnerMemoryBytes() const;
  // What all learners together may use, for the autotuner: the host's available memory on CPU
  // devices; on GPUs, the learners' bytes now plus the free memory (cudaMemGetInfo and the
  // allocator's cache) of the fullest GPU, shared by the engine devices on it.
  size_t MemoryBudgetBytes() const;

  // Everything a checkpoint holds: "z/<blob>", the synchroniser's central buffer
  // ("z_prev/<param>" or "z_velocity/<param>"), "learner<j>/<blob>",
  // "learner<j>/<optimiser state>" (<param>_momentum, ...: optimizer_ops.h), plus batch-norm
  // statistics. Restoring works with another
  // learner count: missing learners start from z, extra ones are dropped.
  std::vector<std::pair<std::string, const Tensor*>> StateTensors();
  void RestoreState(const std::map<std::string, Tensor>& tensors, int64_t iteration);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace crossbow
