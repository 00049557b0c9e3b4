#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "crossbow/engine/learner.h"
#include "crossbow/engine/model_layout.h"
#include "crossbow/engine/sync/sync_kernel.h"
#include "crossbow/engine/sync_backend.h"

namespace crossbow {

struct EngineOptions;

// One learner's part of a synchronising iteration, on its thread, after its forward and
// backward pass (gradients in the plan) and with z as of the previous synchronisation.
struct LearnerTurn {
  Learner& learner;
  SyncBackend& sync;
  ContextBase* context;  // the learner's
  SegmentTable& params;
  SegmentTable& gradients;
  SegmentTable& state;
  const ModelLayout& layout;
  float* contribution;  // the learner's slot of the sync buffer; its statistics already in it
  const float* z;       // its device's z = [parameters | statistics]
  const float* sum;     // its device's sum over the job, valid after WaitForSync
  int64_t images;       // of its batch
  bool skip;            // a non-finite loss or gradients (skip_nan): no update of its own
  int64_t t;            // the iteration
  std::function<void()> contribute;     // the contribution is written: the learner counts in
  std::function<void()> wait_for_sync;  // until its device applied this iteration to z (or sum)

  void Update() const {
    if (!skip) learner.Update();
  }
  // One of the synchroniser's kernels (sync_kernel.h), ordered on the learner's context.
  template <typename Args>
  void Run(const Args& args) const {
    SyncKernel<Args>::Run(sync.device().type, args, context);
  }
};

// A device's part of a synchronising iteration, on its sync thread, once the learners'
// contributions are summed over every device of the job. The engine then sets z's statistics
// to the mean of the learners'.
struct DeviceTurn {
  SyncBackend& sync;
  const ModelLayout& layout;
  float* sum;
  float* z;
  float* central;  // the synchroniser's own buffer of z's size (parameters only)
  int learners;    // of the job
  int64_t t;       // the iteration

  // One of the synchroniser's kernels (sync_kernel.h), ordered on the device's sync context.
  template <typename Args>
  void Run(const Args& args) const {
    SyncKernel<Args>::Run(sync.device().type, args, sync.sync_context());
  }
};

// One synchronisation algorithm (docs/design/engine.md, "Synchronisers"): what a learner does
// after its step, what its device does with the learners' contributions, how z changes and
// when learners restart from z. One file family per algorithm under engine/sync/ (<name>.h,
// <name>.cc with its kernels, <name>.cu their CUDA versions), registered by name; the engine
// runs learners, devices and collectives and never asks which algorithm it runs.
class Synchroniser {
 public:
  virtual ~Synchroniser() = default;
  // Throws ValueError where this algorithm cannot run `learners_per_device` learners on
  // `devices` devices of each of `ranks` processes.
  virtual void Check(int devices, int learners_per_device, int ranks) const {}
  // Whether iteration t synchronises. Between synchronisations every learner steps alone,
  // nothing crosses devices and z keeps its value.
  virtual bool SynchronisesAt(int64_t t) const { return true; }
  virtual void Learner(const LearnerTurn& turn) const = 0;
  virtual void Device(const DeviceTurn& turn) const = 0;
  // Whether a drop of the learning rate restarts every learner from z (restart_drop).
  virtual bool RestartsOnDrop() const { return false; }
  // Whether every learner is the one model (S-SGD, SGD): z's parameters are then copied from
  // the first learner whenever z is read from outside.
  virtual bool LearnersAreTheModel() const { return false; }
  // The checkpoint name of the central buffer ("z_prev/<param>"), and whether it starts at z
  // (else at zero), also where a checkpoint lacks it.
  virtual std::string central_name() const { return "z_prev"; }
  virtual bool central_starts_at_z() const { return true; }
};

// When a periodic algorithm synchronises (0-based t): every iteration of the first `warmup`,
// then the last of every `every` iterations after them. Local SGD that averages every
// iteration is S-SGD (the mean of the learners' momenta follows S-SGD's), so its warm-up is
// post-local SGD's (Lin et al. 2020).
struct SyncPeriod {
  int every = 1;
  int64_t warmup = 0;
  bool At(int64_t t) const { return t < warmup || (t - warmup + 1) % every == 0; }
};
// sync_period and sync_warmup.
SyncPeriod PeriodOf(const EngineOptions& options);

using SynchroniserFactory = std::function<std::unique_ptr<Synchroniser>(const EngineOptions&)>;
bool RegisterSynchroniser(const std::string& name, SynchroniserFactory factory);
#define CROSSBOW_REGISTER_SYNCHRONISER(name, factory) \
  static const bool crossbow_sync_registered_##name = RegisterSynchroniser(#name, factory)

// The registered names, sorted.
std::vector<std::string> SynchroniserNames();
std::unique_ptr<Synchroniser> MakeSynchroniser(const EngineOptions& options);

}  // namespace crossbow
