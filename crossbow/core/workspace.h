#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "crossbow/core/tensor.h"

namespace crossbow {

// Name -> tensor. Every learner owns one; pointers stay valid for its lifetime.
// A child workspace (one per compiled net) holds that net's intermediate blobs and sees
// its parent's blobs (parameters, inputs) through lookups. Tensors made here live on the
// workspace's device.
class Workspace {
 public:
  explicit Workspace(Workspace* parent = nullptr, Device device = Device{})
      : parent_(parent), device_(device) {}
  Device device() const { return device_; }
  // Returns the existing tensor (here or in the parent) if present, else makes one here.
  Tensor* CreateTensor(const std::string& name);
  Tensor* CreateLocalTensor(const std::string& name);
  Tensor* GetTensor(const std::string& name);  // throws, naming the blob, if absent
  const Tensor* GetTensor(const std::string& name) const;
  bool HasTensor(const std::string& name) const;
  bool HasLocalTensor(const std::string& name) const { return tensors_.count(name) > 0; }
  std::vector<std::string> TensorNames() const;  // local ones, sorted

 private:
  Tensor* Find(const std::string& name);
  Workspace* parent_;
  Device device_;
  std::unordered_map<std::string, std::unique_ptr<Tensor>> tensors_;
};

}  // namespace crossbow
