#include "crossbow/core/workspace.h"

#include <algorithm>

namespace crossbow {

Tensor* Workspace::Find(const std::string& name) {
  auto it = tensors_.find(name);
  if (it != tensors_.end()) return it->second.get();
  return parent_ ? parent_->Find(name) : nullptr;
}

Tensor* Workspace::CreateTensor(const std::string& name) {
  Tensor* existing = Find(name);
  return existing ? existing : CreateLocalTensor(name);
}

Tensor* Workspace::CreateLocalTensor(const std::string& name) {
  auto& slot = tensors_[name];
  if (!slot) slot = std::make_unique<Tensor>(device_);
  return slot.get();
}

bool Workspace::HasTensor(const std::string& name) const {
  return const_cast<Workspace*>(this)->Find(name) != nullptr;
}

Tensor* Workspace::GetTensor(const std::string& name) {
  Tensor* t = Find(name);
  CROSSBOW_ENFORCE(t != nullptr, "blob '", name, "' does not exist in the workspace");
  return t;
}

const Tensor* Workspace::GetTensor(const std::string& name) const {
  return const_cast<Workspace*>(this)->GetTensor(name);
}

std::vector<std::string> Workspace::TensorNames() const {
  std::vector<std::string> names;
  for (const auto& kv : tensors_) names.push_back(kv.first);
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace crossbow
