#include "crossbow/core/net.h"

#include <algorithm>

#include "crossbow/core/device_backend.h"
#include "crossbow/core/memory_planner.h"

namespace crossbow {

Net::Net(const NetDef& def, Workspace* parent, ContextBase* context,
         const std::set<std::string>& keep, bool plan_memory)
    : def_(def),
      ws_(parent, context->device()),
      context_(context),
      keep_(keep),
      plan_memory_(plan_memory) {
  std::map<std::string, TensorShape> fed;
  shapes_ = InferShapes(def_, [&](const std::string& name) -> const TensorShape* {
    if (!parent->HasTensor(name)) return nullptr;
    const Tensor* t = parent->GetTensor(name);
    if (!t->defined()) return nullptr;
    return &(fed[name] = TensorShape{t->shape(), t->dtype()});
  });
  for (const auto& op : def_.ops) {
    for (const auto& out : op.outputs) {
      if (!out.empty() && !parent->HasTensor(out)) ws_.CreateLocalTensor(out);
    }
  }
  for (const auto& op : def_.ops) {
    ops_.push_back(OperatorRegistry::Create(op, &ws_, context_));
  }
}

void Net::RunOps(size_t begin, size_t end) {
  for (size_t i = begin; i < end; ++i) ops_[i]->Run();
}

void Net::Run(size_t begin, size_t end) {
  end = std::min(end, ops_.size());
  context_->BindThread();
  // A recording holds buffer addresses, and operators allocate on their first run: record only
  // the second run with the final buffers.
  if (capture_ && (!plan_memory_ || planned_)) {
    Slice& slice = slices_[{begin, end}];
    if (!slice.work && slice.runs++ == 1) {
      bool capturable = true;
      for (size_t i = begin; i < end; ++i) capturable = capturable && ops_[i]->Capturable();
      if (capturable) slice.work = context_->Capture([&] { RunOps(begin, end); });
    }
    if (slice.work) {
      slice.work->Replay();
      return;
    }
  }
  RunOps(begin, end);
  if (plan_memory_ && !planned_ && end == ops_.size()) PlanAndBind();
}

void Net::DisableCapture() {
  capture_ = false;
  slices_.clear();
}

bool Net::replaying(size_t begin, size_t end) const {
  auto it = slices_.find({begin, std::min(end, ops_.size())});
  return it != slices_.end() && it->second.work != nullptr;
}

void Net::PlanAndBind() {
  std::map<std::string, size_t> bytes;
  for (const auto& name : ws_.TensorNames()) {
    if (!keep_.count(name)) bytes[name] = ws_.GetTensor(name)->capacity();
  }
  MemoryPlan plan = PlanMemory(def_.ops, bytes);
  for (size_t size : plan.buffer_bytes) buffers_.push_back(AllocateOn(context_->device(), size));
  // The first run's values stay as a later run leaves them (a gradient read after the update):
  // each blob's bytes go into its buffer in the order the run first wrote them, so of the blobs
  // that share a buffer (lifetimes that do not overlap) the last one's remain.
  std::vector<std::pair<Tensor*, Tensor>> written;  // the tensor, and a view of its old bytes
  std::set<std::string> seen;
  for (const auto& op : def_.ops) {
    for (const auto& out : op.outputs) {
      if (plan.buffer_of.count(out) && seen.insert(out).second) {
        written.emplace_back(ws_.GetTensor(out), *ws_.GetTensor(out));
      }
    }
  }
  for (const auto& [blob, buffer] : plan.buffer_of) {
    ws_.GetTensor(blob)->BindStorage(buffers_[buffer], plan.buffer_bytes[buffer]);
  }
  context_->Synchronize();
  for (const auto& [t, old] : written) {
    if (old.raw_data() == nullptr) continue;  // shaped but never written (an unused output)
    CopyBytes(t->raw_data(), t->device(), old.raw_data(), old.device(),
              std::min(old.nbytes(), old.capacity()));
  }
  stats_ = {plan.planned_bytes, plan.unplanned_bytes};
  planned_ = true;
}

}  // namespace crossbow
