#include "crossbow/engine/engine.h"

#include <glog/logging.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <vector>

#include "crossbow/comm/make_collectives.h"
#include "crossbow/core/precision.h"
#include "crossbow/engine/device.h"
#include "crossbow/engine/engine_impl.h"
#include "crossbow/engine/sync/sync_defaults.h"

namespace crossbow {
Engine::Impl::Impl(const LearnerSpec& spec, EngineOptions options, BatchSource* train)
    : spec_(spec),
      options_(std::move(options)),
      algorithm_(MakeSynchroniser(WithSyncDefaults(options_, 1))),
      train_(train) {
  spec_.precision = ParsePrecision(options_.precision);
  if (options_.devices.empty()) options_.devices = ParseDevices("cpu");
  CheckDevices(options_.devices);
  CROSSBOW_ENFORCE_VALUE(train_ != nullptr, "the engine needs a training batch source");
  CROSSBOW_ENFORCE_VALUE(train_->ExampleShape() == spec_.input_shape, "the training source's ",
                         "examples have shape ", ShapeString(train_->ExampleShape()), ", model '",
                         spec_.name, "' expects ", ShapeString(spec_.input_shape));
  int cores = 0;
  for (const auto& d : options_.devices) cores += static_cast<int>(d.cores.size());
  LearnerSpec average = spec_;
  average.name = spec_.name + "_average";
  average.threads = cores;
  average.device = options_.devices[0].device;
  average_ = std::make_unique<Learner>(std::move(average));
  layout_ = ModelLayout(*average_);
  lr_ = lr_peak_ = spec_.solver.lr;
  if (options_.group) {
    world_ = options_.group->size();
    process_rank_ = options_.group->rank();
  }
  std::vector<crossbow::Device> devices;
  for (const auto& d : options_.devices) devices.push_back(d.device);
  comm_ = MakeCollectives(devices, options_.group,
                          std::chrono::milliseconds(options_.collective_timeout_ms));
  for (size_t d = 0; d < options_.devices.size(); ++d) {
    auto device = std::make_unique<Device>();
    device->rank = static_cast<int>(d);
    device->global = process_rank_ * static_cast<int>(options_.devices.size()) + device->rank;
    device->device = options_.devices[d].device;
    device->cores = options_.devices[d].cores;
    CROSSBOW_ENFORCE_VALUE(!device->cores.empty(), "device ", d, " has no cores");
    device->backend = MakeSyncBackend(device->device);
    const auto storage = device->backend->Allocate(layout_.total() * sizeof(float));
    device->average = ViewOf(storage, device->device, 0, {layout_.total()});
    device->z = ModelLayout::Views(storage, device->device, layout_.params());
    device->z_state = ModelLayout::Views(storage, device->device, layout_.state());
    const auto central = device->backend->Allocate(layout_.param_floats() * sizeof(float));
    device->central = ViewOf(central, device->device, 0, {layout_.param_floats()});
    device->z_central = ModelLayout::Views(central, device->device, layout_.params());
    for (size_t i = 0; i < layout_.params().size(); ++i) {
      const std::string& name = layout_.params()[i].name;
      CopyTensor(*average_->Blob(name), &device->z[i], name);
      if (algorithm_->central_starts_at_z()) {
        CopyTensor(*average_->Blob(name), &device->z_central[i], name);
      }
    }
    for (size_t i = 0; i < layout_.state().size(); ++i) {
      const std::string& name = layout_.state()[i].name;
      CopyTensor(*average_->Blob(name), &device->z_state[i], name);
    }
    device->sum = device->backend->NewBuffer(layout_.total());
    devices_.push_back(std::move(device));
  }
  SetLearnersPerDevice(options_.learners_per_device);
}

Engine::Impl::~Impl() {
  // A synchronisation across processes still in flight must finish: the other ranks take part.
  try {
    if (world_ > 1) Fence();
  } catch (const std::exception&) {
  }
  comm_->Abort("the engine is shutting down");
  StopThreads();
  // GPU work still queued on the learners' streams may read the devices' buffers.
  for (auto& device : devices_) {
    for (auto& slot : device->slots) {
      try {
        slot->learner->context()->Synchronize();
      } catch (const std::exception& e) {
        LOG(WARNING) << "engine shutdown: " << e.what();
      }
    }
  }
}

std::unique_ptr<Engine::Impl::Slot> Engine::Impl::MakeSlot(Device& device, int j) {
  auto slot = std::make_unique<Slot>();
  slot->index = device.global * k_ + j;
  const int n = static_cast<int>(device.cores.size());
  for (int i = 0; i < options_.threads_per_learner && i < n; ++i) {
    slot->cores.push_back(device.cores[(j * options_.threads_per_learner + i) % n]);
  }
  LearnerSpec spec = spec_;
  spec.name = spec_.name + "_learner" + std::to_string(slot->index);
  spec.seed = spec_.seed + 1 + slot->index;
  spec.threads = options_.threads_per_learner;
  spec.device = device.device;
  slot->learner = std::make_unique<Learner>(std::move(spec));
  Learner& l = *slot->learner;
  slot->rate = static_cast<float>(lr_);
  l.SetLearningRate(slot->rate);
  slot->contribution = device.backend->NewBuffer(layout_.total());
  if (device.device.type != DeviceType::kCPU && largest_batch_ > 0) {
    // A new learner on a GPU allocates its plan now, with one step at learning rate 0 on a zero
    // batch: memory it lacks fails here, where the engine can drop it again, not inside an
    // iteration. (Its weights do not move; its statistics are reset from z below.)
    Shape shape = spec_.input_shape;
    shape.insert(shape.begin(), largest_batch_);
    std::vector<float> images(NumElements(shape), 0.f);
    std::vector<int32_t> labels(largest_batch_, 0);
    l.SetLearningRate(0.f);
    l.ForwardBackward(images.data(), shape, labels.data());
    l.Update();
    l.SetLearningRate(slot->rate);
  }
  RestartFromAverage(*slot, device);
  slot->task = slot->done = iteration_ - 1;
  return slot;
}

void Engine::Impl::StartThreads() {
  stopping_ = false;
  for (auto& device : devices_) {
    for (auto& slot : device->slots) {
      slot->thread = std::thread([this, d = device.get(), s = slot.get()] { LearnerLoop(*d, *s); });
    }
    device->thread = std::thread([this, d = device.get()] { SyncLoop(*d); });
  }
}

void Engine::Impl::StopThreads() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (auto& device : devices_) {
    for (auto& slot : device->slots) {
      if (slot->thread.joinable()) slot->thread.join();
      // A stop (shutdown or failure) may leave batches posted that no learner took.
      for (int64_t t = slot->done + 1; t <= slot->task; ++t) train_->Release(slot->batches[t & 1]);
      slot->task = slot->done;
    }
    if (device->thread.joinable()) device->thread.join();
  }
}

void Engine::Impl::SetLearnersPerDevice(int k) {
  CROSSBOW_ENFORCE_VALUE(k >= 1, "learners per device must be >= 1, got ", k);
  algorithm_->Check(static_cast<int>(devices_.size()), k, world_);
  if (k == k_) return;
  if (k_ > 0) {
    Fence();
    PublishAverage();  // S-SGD and SGD leave z's parameters stale; new learners start from z
  }
  StopThreads();
  const int before = k_;
  auto resize = [&](int count) {
    k_ = count;
    for (auto& device : devices_) {
      device->slots.resize(std::min<size_t>(device->slots.size(), count));
      const int kept = static_cast<int>(device->slots.size());
      for (int j = 0; j < kept; ++j) device->slots[j]->index = device->global * count + j;
      for (int j = kept; j < count; ++j) device->slots.push_back(MakeSlot(*device, j));
      device->backend->Prepare(count);
    }
  };
  try {
    resize(k);
  } catch (const std::exception& e) {
    if (before == 0) throw;
    // A learner that does not fit (OutOfMemoryError) leaves the engine as it was.
    LOG(WARNING) << "engine: adding learners failed (" << e.what() << "); keeping " << before
                 << " learner(s) per device";
    resize(before);
    StartThreads();
    throw;
  }
  if (world_ > 1) train_->Shard({process_rank_, world_, num_learners()});
  train_->ReserveHeld(num_learners());
  algorithm_ = MakeSynchroniser(WithSyncDefaults(options_, num_learners() * world_));
  LOG(INFO) << "engine: " << (world_ > 1 ? detail::Concat(world_, " ranks x ") : "")
            << devices_.size() << " device(s) x " << k << " learner(s)";
  StartThreads();
}

void Engine::Impl::RestartFromAverage(Slot& slot, const Device& device) {
  Learner& l = *slot.learner;
  for (size_t i = 0; i < layout_.params().size(); ++i) {
    const std::string& name = layout_.params()[i].name;
    CopyTensor(device.z[i], l.Blob(name), name);
  }
  l.ResetOptimizerState();
  for (size_t i = 0; i < layout_.state().size(); ++i) {
    CopyTensor(device.z_state[i], l.Blob(layout_.state()[i].name), layout_.state()[i].name);
  }
}

IterationResult Engine::Impl::Iterate(std::optional<double> next_rate,
                                      std::optional<double> next_momentum) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    CROSSBOW_ENFORCE(error_.empty(), error_);
  }
  if (next_rate) {
    CheckRate(*next_rate);
    CROSSBOW_ENFORCE_VALUE(!Restarts(*next_rate), "learning rate ", *next_rate, " restarts the ",
                           "learners from the average model: it cannot be posted ahead (set it ",
                           "with SetLearningRate between iterations)");
  }
  const int64_t t = iteration_;
  std::vector<Slot*> slots;
  for (auto& device : devices_) {
    for (auto& slot : device->slots) slots.push_back(slot.get());
  }
  if (posted_ < t) Post(slots, t, lr_);
  if (next_rate) {
    lr_ = *next_rate;
    lr_peak_ = std::max(lr_peak_, lr_);
    if (next_momentum) momentum_ = *next_momentum;
    Post(slots, t + 1, lr_);
  }
  std::unique_lock<std::mutex> lock(mutex_);
  cv_.wait(lock, [&] {
    for (Slot* slot : slots) {
      if (slot->done < t) return false;
    }
    return true;
  });
  CROSSBOW_ENFORCE(error_.empty(), error_);
  ++iteration_;
  IterationResult result;
  int finite = 0;
  for (Slot* slot : slots) {
    const float loss = slot->losses[t & 1];
    result.learner_losses.push_back(loss);
    if (std::isfinite(loss)) {
      result.loss += loss;
      ++finite;
    } else {
      ++result.skipped;
    }
    result.images += slot->images[t & 1];
    largest_batch_ = std::max(largest_batch_, slot->images[t & 1]);
  }
  result.loss = finite ? result.loss / finite : NAN;
  VLOG(1) << "iteration " << t << ": loss " << result.loss << ", " << result.images << " images";
  return result;
}

// Batches are taken in learner order, so that a run is reproducible. Each is posted as soon as
// it is taken: a learner releases its batch after its forward and backward pass, so a source
// with fewer buffers than learners still serves them all.
void Engine::Impl::Post(const std::vector<Slot*>& slots, int64_t t, double rate) {
  posted_rates_[t & 1] = rate;  // read by the learners after the posts below
  posted_momenta_[t & 1] = momentum_;
  acquiring_for_ = t;
  std::unique_lock<std::mutex> lock(mutex_, std::defer_lock);
  for (size_t i = 0; i < slots.size(); ++i) {
    const Batch* batch = nullptr;
    acquiring_ = static_cast<int>(i);
    try {
      batch = train_->Acquire();
    } catch (const std::exception& e) {
      if (i == 0 && t == iteration_) throw;  // nothing started: the engine is as it was
      // The learners already posted cannot finish the iteration without the others: the engine
      // stops, as after any failure, once they have unwound.
      Fail(detail::Concat("the training source failed: ", e.what()), t);
      lock.lock();
      cv_.wait(lock, [&] {
        return std::all_of(slots.begin(), slots.end(), [](Slot* s) { return s->done >= s->task; });
      });
      acquiring_ = -1;
      throw;
    }
    lock.lock();
    slots[i]->batches[t & 1] = batch;
    slots[i]->images[t & 1] = batch->size;
    slots[i]->task = t;
    lock.unlock();
    cv_.notify_all();
  }
  acquiring_ = -1;
  posted_ = t;
}

void Engine::Impl::LearnerLoop(Device& device, Slot& slot) {
  PinCurrentThread(slot.cores);
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    cv_.wait(lock, [&] { return stopping_ || slot.task > slot.done; });
    if (stopping_) return;
    const int64_t t = slot.done + 1;
    lock.unlock();
    try {
      RunIteration(device, slot, t);
    } catch (const Stopped&) {
    } catch (const std::exception& e) {
      Fail(detail::Concat("learner ", slot.index, " (device ", device.global, "): ", e.what()), t);
    }
    lock.lock();
    slot.done = t;
    cv_.notify_all();
  }
}

template <typename Ready>
void Engine::Impl::WaitFor(Ready ready) {
  std::unique_lock<std::mutex> lock(mutex_);
  cv_.wait(lock, [&] { return stopping_ || !error_.empty() || ready(); });
  if (stopping_ || !error_.empty()) throw Stopped{};
}

void Engine::Impl::Fail(const std::string& message, int64_t iteration) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (error_.empty()) {
      error_ = message;
      failed_at_ = iteration;
      LOG(ERROR) << "training stops: " << message;
    }
  }
  cv_.notify_all();
  comm_->Abort(message);
  if (options_.group) options_.group->Abort(message);
}

void Engine::Impl::Contribute(Device& device) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (++device.contributions == static_cast<int>(device.slots.size())) cv_.notify_all();
}

void Engine::Impl::RunIteration(Device& device, Slot& slot, int64_t t) {
  Learner& l = *slot.learner;
  const Batch* batch = slot.batches[t & 1];
  float& loss = slot.losses[t & 1];
  Shape shape = spec_.input_shape;
  shape.insert(shape.begin(), batch->size);
  try {
    loss = l.ForwardBackward(batch->images, shape, batch->labels, batch->labels_b, batch->lam);
  } catch (...) {
    train_->Release(batch);
    throw;
  }
  train_->Release(batch);
  // The rate reaches the learner on its own thread, so that an iteration posted ahead gets its
  // own (the forward and backward pass do not read it).
  const auto rate = static_cast<float>(posted_rates_[t & 1]);
  if (rate != slot.rate) {
    l.SetLearningRate(rate);
    slot.rate = rate;
  }
  const auto momentum = static_cast<float>(posted_momenta_[t & 1]);
  if (!std::isnan(momentum) && momentum != slot.momentum) {
    l.SetMomentum(momentum);
    slot.momentum = momentum;
  }
  SyncBackend& sync = *device.backend;
  ContextBase* context = l.context();
  auto blob = [&](const std::string& name) { return l.Blob(name); };
  slot.gradients.Refresh(layout_.params(), [&](const std::string& p) { return l.Gradient(p); });
  slot.state.Refresh(layout_.state(), blob);
  // A finite loss does not make finite gradients: ReLU turns NaN pixels into zeros and batch
  // norm normalises huge ones, while their gradients and running statistics are NaN.
  const bool finite_loss = std::isfinite(loss);
  const bool skip = !finite_loss || !sync.AllFinite(context, slot.gradients) ||
                    !sync.AllFinite(context, slot.state);
  if (skip && finite_loss) loss = NAN;  // counted and reported as a skipped batch
  CROSSBOW_ENFORCE(!skip || options_.skip_nan,
                   finite_loss ? "gradients or batch-norm statistics are not finite"
                               : detail::Concat("loss is ", loss),
                   " at iteration ", t, "; the update was skipped");
  // The sync thread reads every contribution of iteration t-1 until it has applied it; z then
  // includes every iteration before t. (On a GPU: until it has issued that work; the learner's
  // stream waits for its execution.)
  WaitFor([&] { return device.synced >= t; });
  const int j = slot.index - device.global * k_;
  slot.params.Refresh(layout_.params(), blob);  // (a GPU backend uploads a table only if moved)
  sync.WaitForAverage(context);
  // A skipped batch's running statistics may not be finite: the learner takes z's instead, so
  // that they reach neither z nor, through it, the other learners.
  if (skip) sync.Scatter(context, device.average.data<float>(), slot.state);
  auto contribute = [&] {
    sync.Contributed(context, j);
    Contribute(device);
  };
  if (!algorithm_->SynchronisesAt(t)) {  // the sync thread only counts this iteration
    contribute();
    if (!skip) l.Update();
    return;
  }
  float* c = slot.contribution.mutable_data<float>();
  sync.Gather(context, slot.state, 1.f, c);
  algorithm_->Learner({l, sync, context, slot.params, slot.gradients, slot.state, layout_, c,
                       device.average.data<float>(), device.sum.data<float>(), slot.images[t & 1],
                       skip, t, contribute, [&] { WaitFor([&] { return device.synced > t; }); }});
}

void Engine::Impl::SyncLoop(Device& device) {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    cv_.wait(lock, [&] {
      return stopping_ ||
             (error_.empty() && device.contributions == static_cast<int>(device.slots.size()));
    });
    if (stopping_) return;
    const int64_t t = device.synced;
    lock.unlock();
    try {
      Synchronise(device, t);
    } catch (const std::exception& e) {
      Fail(detail::Concat("device ", device.global, " synchronisation: ", e.what()), t);
    }
    lock.lock();
    device.contributions = 0;
    ++device.synced;
    cv_.notify_all();
  }
}

void Engine::Impl::Synchronise(Device& device, int64_t t) {
  if (!algorithm_->SynchronisesAt(t)) return;
  SyncBackend& sync = *device.backend;
  float* sum = device.sum.mutable_data<float>();
  const int64_t n = layout_.total();
  sync.WaitForContributions(static_cast<int>(device.slots.size()));
  std::vector<const float*> parts;
  for (const auto& slot : device.slots) parts.push_back(slot->contribution.data<float>());
  sync.Sum(parts, sum, n);
  const auto timeout = std::chrono::milliseconds(options_.collective_timeout_ms);
  comm_->AllReduceSum(device.rank, sum, n, sync.sync_context(), timeout);
  float* z = device.average.mutable_data<float>();
  const int learners = num_learners() * world_;
  algorithm_->Device({sync, layout_, sum, z, device.central.mutable_data<float>(), learners, t});
  const int64_t stats = layout_.count_offset() - layout_.param_floats();
  sync.ScaleInto(1.f / static_cast<float>(learners), sum + layout_.param_floats(),
                 z + layout_.param_floats(), stats);
  sync.AverageUpdated();
}

std::string Engine::Impl::DescribeWaits() {
  std::ostringstream out;
  const int acquiring = acquiring_;
  if (acquiring >= 0) {
    out << "iteration " << acquiring_for_ << ": taking learner " << acquiring << "'s batch from "
        << "the training source (" << train_->Describe() << ")\n";
  }
  std::unique_lock<std::mutex> lock(mutex_, std::try_to_lock);
  if (!lock.owns_lock())
    return out.str() + "the engine's lock is held: its counters cannot be read";
  for (const auto& device : devices_) {
    out << "device " << device->global << ": " << device->synced << " iteration(s) synchronised, "
        << device->contributions << " of " << device->slots.size() << " contributions in\n";
    for (const auto& slot : device->slots) {
      out << "  learner " << slot->index << ": ";
      if (slot->task > slot->done) {
        out << "running iteration " << slot->done + 1 << " (forward/backward, or waiting for "
            << "device " << device->global << "'s synchronisation)"
            << (slot->task > slot->done + 1 ? "; the next posted ahead" : "") << "\n";
      } else {
        out << "idle after iteration " << slot->done << "\n";
      }
    }
  }
  if (!error_.empty()) out << "failed: " << error_ << "\n";
  return out.str();
}

}  // namespace crossbow
