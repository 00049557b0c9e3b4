#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "crossbow/core/tensor.h"

namespace crossbow {

// Name -> tensor. Every learner owns one; pointers stay valid for its lifetime.
class Workspace {
 public:
  Tensor* CreateTensor(const std::string& name);  // returns the existing one if present
  Tensor* GetTensor(const std::string& name);     // throws, naming the blob, if absent
  const Tensor* GetTensor(const std::string& name) const;
  bool HasTensor(const std::string& name) const { return tensors_.count(name) > 0; }
  std::vector<std::string> TensorNames() const;

 private:
  std::unordered_map<std::string, std::unique_ptr<Tensor>> tensors_;
};

}  // namespace crossbow
