#include "crossbow/core/workspace.h"

#include <algorithm>

namespace crossbow {

Tensor* Workspace::CreateTensor(const std::string& name) {
  auto& slot = tensors_[name];
  if (!slot) slot = std::make_unique<Tensor>();
  return slot.get();
}

Tensor* Workspace::GetTensor(const std::string& name) {
  auto it = tensors_.find(name);
  CROSSBOW_ENFORCE(it != tensors_.end(), "blob '", name, "' does not exist in the workspace");
  return it->second.get();
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
