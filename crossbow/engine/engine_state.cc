// What reads or replaces the models from outside the iteration: learning-rate changes and
// restarts, evaluation of z, distances, checkpoint state. Each first waits for the
// synchronisation still in flight (Fence), so the learner and sync threads are idle.
#include <glog/logging.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>

#include "crossbow/engine/engine_impl.h"
#include "crossbow/engine/flat_ops.h"

namespace crossbow {

bool IsRestartingDrop(double lr, double peak, double restart_drop) {
  return restart_drop > 0 && lr < peak && lr <= restart_drop * peak;
}

void Engine::Impl::Fence() {
  std::unique_lock<std::mutex> lock(mutex_);
  CROSSBOW_ENFORCE(error_.empty(), error_);
  CROSSBOW_ENFORCE(posted_ < iteration_, "iteration ", iteration_, " was posted ahead (Iterate ",
                   "with the next rate): Iterate must come next");
  cv_.wait(lock, [&] {
    if (!error_.empty()) return true;
    for (const auto& device : devices_) {
      if (device->synced < iteration_) return false;
    }
    return true;
  });
  CROSSBOW_ENFORCE(error_.empty(), error_);
  lock.unlock();
  // On a GPU the counters say what was issued: wait for the streams too.
  for (auto& device : devices_) {
    device->backend->Finish();
    for (auto& slot : device->slots) slot->learner->context()->Synchronize();
  }
}

void Engine::Impl::PublishAverage() {
  if (!algorithm_->LearnersAreTheModel()) return;
  for (auto& device : devices_) {
    Learner& model = *device->slots[0]->learner;
    for (size_t i = 0; i < layout_.params().size(); ++i) {
      const std::string& name = layout_.params()[i].name;
      CopyTensor(*model.Blob(name), &device->z[i], name);
    }
  }
}

void Engine::Impl::CheckRate(double lr) {
  CROSSBOW_ENFORCE_VALUE(std::isfinite(lr) && lr >= 0, "learning rate must be finite and >= 0, ",
                         "got ", lr);
}

bool Engine::Impl::Restarts(double lr) const {
  return algorithm_->RestartsOnDrop() &&
         IsRestartingDrop(lr, std::max(lr_peak_, lr), options_.restart_drop);
}

// The learners take it with their next iteration's batch (RunIteration).
void Engine::Impl::SetMomentum(double momentum) {
  CROSSBOW_ENFORCE(posted_ < iteration_, "iteration ", iteration_, " was posted ahead (Iterate ",
                   "with the next rate): Iterate must come next");
  CROSSBOW_ENFORCE_VALUE(momentum >= 0 && momentum < 1, "momentum must be in [0, 1), got ",
                         momentum);
  CROSSBOW_ENFORCE_VALUE(spec_.solver.type != "sgd", "a momentum schedule sets the beta1 of ",
                         "optimizers adamw and radam; sgd's momentum is fixed");
  momentum_ = momentum;
}

// The learners take the new rate at their next iteration (RunIteration).
void Engine::Impl::SetLearningRate(double lr) {
  CheckRate(lr);
  Fence();
  const bool restart = Restarts(lr);
  lr_ = lr;
  lr_peak_ = std::max(lr_peak_, lr);
  if (restart) {
    for (auto& device : devices_) {
      for (auto& slot : device->slots) RestartFromAverage(*slot, *device);
    }
    LOG(INFO) << "learning rate dropped from " << lr_peak_ << " to " << lr << " at iteration "
              << iteration_ << ": every learner restarts from the average model";
    lr_peak_ = lr;
  }
}

EvalResult Engine::Impl::Evaluate(BatchSource* test) {
  CROSSBOW_ENFORCE_VALUE(test != nullptr, "Evaluate needs a test batch source");
  CROSSBOW_ENFORCE_VALUE(test->ExampleShape() == spec_.input_shape, "the test source's examples ",
                         "have shape ", ShapeString(test->ExampleShape()), ", model '", spec_.name,
                         "' expects ", ShapeString(spec_.input_shape));
  Fence();
  PublishAverage();
  const Device& device = *devices_[0];
  for (size_t i = 0; i < layout_.params().size(); ++i) {
    CopyTensor(device.z[i], average_->Blob(layout_.params()[i].name), layout_.params()[i].name);
  }
  for (size_t i = 0; i < layout_.state().size(); ++i) {
    CopyTensor(device.z_state[i], average_->Blob(layout_.state()[i].name), layout_.state()[i].name);
  }
  EvalResult total;
  int64_t seen = 0;
  for (bool last = false; !last;) {
    const Batch* batch = test->Acquire();
    Shape shape = spec_.input_shape;
    shape.insert(shape.begin(), batch->size);
    EvalResult r;
    try {
      r = average_->Evaluate(batch->images, shape, batch->labels);
    } catch (...) {
      test->Release(batch);
      throw;
    }
    total.loss += r.loss * batch->size;
    total.top1 += r.top1 * batch->size;
    total.top5 += r.top5 * batch->size;
    seen += batch->size;
    last = batch->last_in_epoch || seen >= test->EpochSize();
    test->Release(batch);
  }
  total.loss /= seen;
  total.top1 /= seen;
  total.top5 /= seen;
  return total;
}

std::vector<double> Engine::Impl::DistancesToAverage() {
  Fence();
  PublishAverage();
  // Host floats of `t`: its own on the CPU, else a copy in `*copy`.
  auto host = [](const Tensor& t, Tensor* copy) {
    if (t.is_cpu()) return t.data<float>();
    *copy = ToHost(t);
    return static_cast<const Tensor*>(copy)->data<float>();
  };
  std::vector<double> out;
  Tensor w_copy, z_copy;
  for (auto& device : devices_) {
    for (auto& slot : device->slots) {
      double squared = 0;
      for (size_t i = 0; i < layout_.params().size(); ++i) {
        const auto& e = layout_.params()[i];
        squared += flat::SquaredDistance(host(*slot->learner->Blob(e.name), &w_copy),
                                         host(device->z[i], &z_copy), e.numel);
      }
      out.push_back(std::sqrt(squared));
    }
  }
  return out;
}

size_t Engine::Impl::LearnerMemoryBytes() {
  Fence();
  Learner& learner = *devices_[0]->slots[0]->learner;
  const size_t floats = layout_.param_floats() + learner.OptimizerStateFloats() + layout_.total();
  return learner.memory_stats().planned_bytes + learner.context()->HeldBytes() +
         floats * sizeof(float);
}

size_t Engine::Impl::MemoryBudgetBytes() {
  if (devices_[0]->device.type == DeviceType::kCPU) return devices_[0]->backend->FreeBytes();
  // Each GPU's free memory is shared by the engine devices on it; the fullest GPU decides.
  const size_t per_learner = LearnerMemoryBytes();
  std::map<int, int> sharing;
  for (const auto& device : devices_) ++sharing[device->device.index];
  size_t headroom = std::numeric_limits<size_t>::max();
  for (const auto& device : devices_) {
    headroom = std::min(headroom, device->backend->FreeBytes() / sharing[device->device.index]);
  }
  return devices_.size() * (headroom + per_learner * k_);
}

std::vector<std::pair<std::string, const Tensor*>> Engine::Impl::StateTensors() {
  Fence();
  PublishAverage();
  std::vector<std::pair<std::string, const Tensor*>> out;
  const Device& first = *devices_[0];
  const std::string central = algorithm_->central_name() + "/";
  for (size_t i = 0; i < layout_.params().size(); ++i) {
    out.emplace_back("z/" + layout_.params()[i].name, &first.z[i]);
    out.emplace_back(central + layout_.params()[i].name, &first.z_central[i]);
  }
  for (size_t i = 0; i < layout_.state().size(); ++i) {
    out.emplace_back("z/" + layout_.state()[i].name, &first.z_state[i]);
  }
  for (auto& device : devices_) {
    for (auto& slot : device->slots) {
      const std::string prefix = "learner" + std::to_string(slot->index) + "/";
      Learner& l = *slot->learner;
      for (const auto& e : layout_.params()) out.emplace_back(prefix + e.name, l.Blob(e.name));
      for (const auto& b : l.optimizer_state()) out.emplace_back(prefix + b.name, l.Blob(b.name));
      for (const auto& e : layout_.state()) out.emplace_back(prefix + e.name, l.Blob(e.name));
    }
  }
  return out;
}

void Engine::Impl::RestoreState(const std::map<std::string, Tensor>& tensors, int64_t iteration) {
  CROSSBOW_ENFORCE_VALUE(iteration >= 0, "iteration must be >= 0, got ", iteration);
  Fence();
  // Every copy is checked before any is made, so that a bad checkpoint changes nothing.
  std::vector<std::tuple<const Tensor*, Tensor*, std::string>> copies;
  auto find = [&](const std::string& key) -> const Tensor* {
    auto it = tensors.find(key);
    return it == tensors.end() ? nullptr : &it->second;
  };
  auto copy = [&](const std::string& key, const Tensor* fallback, Tensor* dst) {
    const Tensor* src = find(key);
    CROSSBOW_ENFORCE_VALUE(src != nullptr || fallback != nullptr, "the checkpoint has no '", key,
                           "'");
    copies.emplace_back(src ? src : fallback, dst, key);
  };
  std::vector<Slot*> restart;
  // A central buffer the checkpoint lacks starts as it does in a new engine.
  std::vector<Tensor> zeros;
  for (const auto& e : layout_.params()) {
    zeros.emplace_back(e.shape, DataType::kFloat32);
    Fill(&zeros.back(), 0.f);
  }
  for (auto& device : devices_) {
    for (size_t i = 0; i < layout_.params().size(); ++i) {
      const std::string& name = layout_.params()[i].name;
      copy("z/" + name, nullptr, &device->z[i]);
      copy(algorithm_->central_name() + "/" + name,
           algorithm_->central_starts_at_z() ? find("z/" + name) : &zeros[i],
           &device->z_central[i]);
    }
    for (size_t i = 0; i < layout_.state().size(); ++i) {
      copy("z/" + layout_.state()[i].name, nullptr, &device->z_state[i]);
    }
    for (auto& slot : device->slots) {
      const std::string prefix = "learner" + std::to_string(slot->index) + "/";
      Learner& l = *slot->learner;
      if (layout_.params().empty() || !find(prefix + layout_.params()[0].name)) {
        restart.push_back(slot.get());
        continue;
      }
      for (const auto& e : layout_.params()) copy(prefix + e.name, nullptr, l.Blob(e.name));
      for (const auto& b : l.optimizer_state()) copy(prefix + b.name, nullptr, l.Blob(b.name));
      for (size_t i = 0; i < layout_.state().size(); ++i) {
        const auto& e = layout_.state()[i];
        copy(prefix + e.name, find("z/" + e.name), l.Blob(e.name));
      }
    }
  }
  for (const auto& [src, dst, key] : copies) {
    CROSSBOW_ENFORCE_VALUE(src->shape() == dst->shape(), "checkpoint blob '", key, "' has shape ",
                           ShapeString(src->shape()), ", model '", spec_.name, "' expects ",
                           ShapeString(dst->shape()));
  }
  for (const auto& [src, dst, key] : copies) CopyTensor(*src, dst, key);
  for (auto& device : devices_) {
    for (auto& slot : device->slots) {
      if (std::count(restart.begin(), restart.end(), slot.get())) {
        RestartFromAverage(*slot, *device);
      }
    }
  }
  std::lock_guard<std::mutex> lock(mutex_);
  iteration_ = iteration;
  posted_ = iteration - 1;
  for (auto& device : devices_) {
    device->synced = iteration;
    for (auto& slot : device->slots) slot->task = slot->done = iteration - 1;
  }
}

Engine::Engine(const LearnerSpec& spec, EngineOptions options, BatchSource* train)
    : impl_(std::make_unique<Impl>(spec, std::move(options), train)) {}
Engine::~Engine() = default;
IterationResult Engine::Iterate(std::optional<double> next_rate,
                                std::optional<double> next_momentum) {
  return impl_->Iterate(next_rate, next_momentum);
}
void Engine::SetLearningRate(double lr) { impl_->SetLearningRate(lr); }
void Engine::SetMomentum(double momentum) { impl_->SetMomentum(momentum); }
double Engine::learning_rate() const { return impl_->learning_rate(); }
bool Engine::RestartsAt(double lr) const { return impl_->Restarts(lr); }
int64_t Engine::failed_iteration() const { return impl_->failed_iteration(); }
void Engine::SetLearnersPerDevice(int k) { impl_->SetLearnersPerDevice(k); }
int Engine::learners_per_device() const { return impl_->learners_per_device(); }
int Engine::num_learners() const { return impl_->num_learners(); }
bool Engine::learners_are_the_model() const { return impl_->learners_are_the_model(); }
const EngineOptions& Engine::options() const { return impl_->options(); }
int64_t Engine::iteration() const { return impl_->iteration(); }
EvalResult Engine::Evaluate(BatchSource* test) { return impl_->Evaluate(test); }
std::vector<double> Engine::DistancesToAverage() const { return impl_->DistancesToAverage(); }
std::string Engine::DescribeWaits() const { return impl_->DescribeWaits(); }
size_t Engine::LearnerMemoryBytes() const { return impl_->LearnerMemoryBytes(); }
size_t Engine::MemoryBudgetBytes() const { return impl_->MemoryBudgetBytes(); }
std::vector<std::pair<std::string, const Tensor*>> Engine::StateTensors() {
  return impl_->StateTensors();
}
void Engine::RestoreState(const std::map<std::string, Tensor>& tensors, int64_t iteration) {
  impl_->RestoreState(tensors, iteration);
}

}  // namespace crossbow
