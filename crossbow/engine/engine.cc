#include "crossbow/engine/engine.h"

#include <glog/logging.h>

#include <cmath>

#include "crossbow/comm/in_process.h"
#include "crossbow/engine/device.h"
#include "crossbow/engine/engine_impl.h"
#include "crossbow/engine/sma.h"

namespace crossbow {

SyncMode ParseSyncMode(const std::string& name) {
  if (name == "sma") return SyncMode::kSMA;
  if (name == "ssgd") return SyncMode::kSSGD;
  if (name == "sgd") return SyncMode::kSGD;
  throw ValueError(
      detail::Concat("unknown synchronisation '", name, "'; expected sma, ssgd or sgd"));
}

Engine::Impl::Impl(const LearnerSpec& spec, EngineOptions options, BatchSource* train)
    : spec_(spec), options_(std::move(options)), train_(train) {
  if (options_.devices.empty()) options_.devices = ParseDevices("cpu");
  CROSSBOW_ENFORCE_VALUE(train_ != nullptr, "the engine needs a training batch source");
  CROSSBOW_ENFORCE_VALUE(train_->ExampleShape() == spec_.input_shape, "the training source's ",
                         "examples have shape ", ShapeString(train_->ExampleShape()), ", model '",
                         spec_.name, "' expects ", ShapeString(spec_.input_shape));
  CROSSBOW_ENFORCE_VALUE(options_.threads_per_learner >= 1, "threads_per_learner must be >= 1, ",
                         "got ", options_.threads_per_learner);
  CROSSBOW_ENFORCE_VALUE(options_.alpha > 0 && options_.alpha <= 1, "SMA's alpha must be in ",
                         "(0, 1], got ", options_.alpha);
  CROSSBOW_ENFORCE_VALUE(options_.central_momentum >= 0 && options_.central_momentum < 1,
                         "SMA's central momentum must be in [0, 1), got ",
                         options_.central_momentum);
  int cores = 0;
  for (const auto& d : options_.devices) cores += static_cast<int>(d.cores.size());
  LearnerSpec average = spec_;
  average.name = spec_.name + "_average";
  average.threads = cores;
  average_ = std::make_unique<Learner>(std::move(average));
  layout_ = ModelLayout(*average_);
  lr_ = lr_peak_ = spec_.solver.lr;
  if (options_.group) {
    world_ = options_.group->size();
    process_rank_ = options_.group->rank();
  }
  comm_ = std::make_unique<InProcessCollectives>(static_cast<int>(options_.devices.size()),
                                                 options_.group, process_rank_);
  for (size_t d = 0; d < options_.devices.size(); ++d) {
    auto device = std::make_unique<Device>();
    device->rank = static_cast<int>(d);
    device->global = process_rank_ * static_cast<int>(options_.devices.size()) + device->rank;
    device->cores = options_.devices[d].cores;
    CROSSBOW_ENFORCE_VALUE(!device->cores.empty(), "device ", d, " has no cores");
    device->z = ModelLayout::Clone(*average_, layout_.params());
    device->z_prev = ModelLayout::Clone(*average_, layout_.params());
    device->z_state = ModelLayout::Clone(*average_, layout_.state());
    device->sum.resize(layout_.total());
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
  slot->learner = std::make_unique<Learner>(std::move(spec));
  slot->learner->SetLearningRate(static_cast<float>(lr_));
  slot->contribution.resize(layout_.total());
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
    }
    if (device->thread.joinable()) device->thread.join();
  }
}

void Engine::Impl::SetLearnersPerDevice(int k) {
  CROSSBOW_ENFORCE_VALUE(k >= 1, "learners per device must be >= 1, got ", k);
  CROSSBOW_ENFORCE_VALUE(
      options_.sync != SyncMode::kSGD || (k == 1 && devices_.size() == 1 && world_ == 1),
      "sync 'sgd' trains one learner; got ", world_ > 1 ? detail::Concat(world_, " ranks x ") : "",
      devices_.size(), " devices x ", k, " learners (use 'ssgd' or 'sma' for more)");
  if (k == k_) return;
  if (k_ > 0) Fence();
  StopThreads();
  k_ = k;
  for (auto& device : devices_) {
    device->slots.resize(std::min<size_t>(device->slots.size(), k));
    const int kept = static_cast<int>(device->slots.size());
    for (int j = 0; j < kept; ++j) device->slots[j]->index = device->global * k + j;
    for (int j = kept; j < k; ++j) device->slots.push_back(MakeSlot(*device, j));
  }
  if (world_ > 1) train_->Shard({process_rank_, world_, num_learners()});
  LOG(INFO) << "engine: " << (world_ > 1 ? detail::Concat(world_, " ranks x ") : "")
            << devices_.size() << " device(s) x " << k << " learner(s)";
  StartThreads();
}

void Engine::Impl::RestartFromAverage(Slot& slot, const Device& device) {
  Learner& l = *slot.learner;
  for (size_t i = 0; i < layout_.params().size(); ++i) {
    const std::string& name = layout_.params()[i].name;
    CopyTensor(device.z[i], l.Blob(name), name);
    Fill(l.Blob(name + "_momentum"), 0.f);
  }
  for (size_t i = 0; i < layout_.state().size(); ++i) {
    CopyTensor(device.z_state[i], l.Blob(layout_.state()[i].name), layout_.state()[i].name);
  }
}

IterationResult Engine::Impl::Iterate() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    CROSSBOW_ENFORCE(error_.empty(), error_);
  }
  const int64_t t = iteration_;
  std::vector<Slot*> slots;
  for (auto& device : devices_) {
    for (auto& slot : device->slots) slots.push_back(slot.get());
  }
  // Batches are taken here, in learner order, so that a run is reproducible.
  for (size_t i = 0; i < slots.size(); ++i) {
    try {
      slots[i]->batch = train_->Acquire();
      slots[i]->images = slots[i]->batch->size;
    } catch (...) {
      for (size_t j = 0; j < i; ++j) train_->Release(slots[j]->batch);
      throw;
    }
  }
  std::unique_lock<std::mutex> lock(mutex_);
  for (Slot* slot : slots) slot->task = t;
  cv_.notify_all();
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
    result.learner_losses.push_back(slot->loss);
    if (std::isfinite(slot->loss)) {
      result.loss += slot->loss;
      ++finite;
    } else {
      ++result.skipped;
    }
    result.images += slot->images;
  }
  result.loss = finite ? result.loss / finite : NAN;
  VLOG(1) << "iteration " << t << ": loss " << result.loss << ", " << result.images << " images";
  return result;
}

void Engine::Impl::LearnerLoop(Device& device, Slot& slot) {
  PinCurrentThread(slot.cores);
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    cv_.wait(lock, [&] { return stopping_ || slot.task > slot.done; });
    if (stopping_) return;
    const int64_t t = slot.task;
    lock.unlock();
    try {
      RunIteration(device, slot, t);
    } catch (const Stopped&) {
    } catch (const std::exception& e) {
      Fail(detail::Concat("learner ", slot.index, " (device ", device.global, "): ", e.what()));
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

void Engine::Impl::Fail(const std::string& message) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (error_.empty()) {
      error_ = message;
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
  const Batch* batch = slot.batch;
  Shape shape = spec_.input_shape;
  shape.insert(shape.begin(), batch->size);
  try {
    slot.loss = l.ForwardBackward(batch->images, shape, batch->labels);
  } catch (...) {
    train_->Release(batch);
    throw;
  }
  train_->Release(batch);
  const bool skip = !std::isfinite(slot.loss);
  CROSSBOW_ENFORCE(!skip || options_.skip_nan, "loss is ", slot.loss, " at iteration ", t,
                   "; the update was skipped");
  // The sync thread reads every contribution of iteration t-1 until it has applied it; z then
  // includes every iteration before t.
  WaitFor([&] { return device.synced >= t; });
  float* c = slot.contribution.data();
  for (const auto& e : layout_.state()) {
    std::copy_n(Floats(l, e.name), e.numel, c + e.offset);
  }
  const auto& params = layout_.params();
  if (options_.sync == SyncMode::kSGD) {  // the one learner: its own update, its statistics
    if (!skip) l.Update();
    Contribute(device);
    return;
  }
  if (options_.sync == SyncMode::kSMA) {
    for (size_t i = 0; i < params.size(); ++i) {
      sma::Correction(Floats(l, params[i].name), device.z[i].data<float>(),
                      static_cast<float>(options_.alpha), c + params[i].offset, params[i].numel);
    }
    Contribute(device);
    if (!skip) l.Update();
    for (const auto& e : params) sma::Subtract(c + e.offset, Floats(l, e.name), e.numel);
    return;
  }
  // S-SGD and SGD: gradients weighted by batch size, averaged over every learner's images.
  const float weight = skip ? 0.f : static_cast<float>(slot.images);
  for (const auto& e : params) {
    std::copy_n(l.Gradient(e.name)->data<float>(), e.numel, c + e.offset);
    sma::Scale(weight, c + e.offset, e.numel);
  }
  c[layout_.count_offset()] = weight;
  Contribute(device);
  WaitFor([&] { return device.synced > t; });
  for (const auto& e : params) {
    std::copy_n(device.sum.data() + e.offset, e.numel, l.Gradient(e.name)->mutable_data<float>());
  }
  l.Update();
  for (size_t i = 0; i < layout_.state().size(); ++i) {
    CopyTensor(device.z_state[i], l.Blob(layout_.state()[i].name), layout_.state()[i].name);
  }
}

void Engine::Impl::SyncLoop(Device& device) {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    cv_.wait(lock, [&] {
      return stopping_ ||
             (error_.empty() && device.contributions == static_cast<int>(device.slots.size()));
    });
    if (stopping_) return;
    lock.unlock();
    try {
      Synchronise(device);
    } catch (const std::exception& e) {
      Fail(detail::Concat("device ", device.global, " synchronisation: ", e.what()));
    }
    lock.lock();
    device.contributions = 0;
    ++device.synced;
    cv_.notify_all();
  }
}

void Engine::Impl::Synchronise(Device& device) {
  float* sum = device.sum.data();
  const int64_t n = layout_.total();
  std::fill_n(sum, n, 0.f);
  for (const auto& slot : device.slots) sma::Accumulate(slot->contribution.data(), sum, n);
  comm_->AllReduceSum(device.rank, sum, n,
                      std::chrono::milliseconds(options_.collective_timeout_ms));
  const auto& params = layout_.params();
  if (options_.sync == SyncMode::kSMA) {
    const float mu = static_cast<float>(options_.central_momentum);
    for (size_t i = 0; i < params.size(); ++i) {
      sma::UpdateAverage(sum + params[i].offset, mu, device.z[i].mutable_data<float>(),
                         device.z_prev[i].mutable_data<float>(), params[i].numel);
    }
  } else if (options_.sync == SyncMode::kSSGD) {
    const float images = sum[layout_.count_offset()];
    sma::Scale(images > 0 ? 1.f / images : 0.f, sum, layout_.param_floats());
  }
  const float inv_learners = 1.f / static_cast<float>(num_learners() * world_);
  for (size_t i = 0; i < layout_.state().size(); ++i) {
    const auto& e = layout_.state()[i];
    float* z = device.z_state[i].mutable_data<float>();
    std::copy_n(sum + e.offset, e.numel, z);
    sma::Scale(inv_learners, z, e.numel);
  }
}

}  // namespace crossbow
