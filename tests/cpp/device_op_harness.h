#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "crossbow/core/operator.h"

namespace crossbow::testing {

// Runs single operators on a GPU (any device whose tensors are plain): a workspace and a
// context of that device; inputs are copied from host tensors, outputs fetched back as floats.
class DeviceOpHarness {
 public:
  explicit DeviceOpHarness(Device device, uint64_t seed = 7);
  ~DeviceOpHarness();

  // Copies a plain host tensor into blob `name` on the device.
  void Feed(const std::string& name, const Tensor& host);
  // Runs `op` once; one instance per distinct def, kept until the harness goes.
  OperatorBase* Run(const OperatorDef& op);
  void Run(const std::vector<OperatorDef>& ops);
  // One run of `op` recorded for replay (a CUDA graph; nothing runs yet); nullptr when the
  // device cannot record it.
  std::unique_ptr<CapturedWork> Record(OperatorBase* op);
  // Waits for the device, then returns the blob's values (int32 ones converted) in order.
  std::vector<float> Fetch(const std::string& name);
  const Shape& ShapeOf(const std::string& name) { return ws_.GetTensor(name)->shape(); }

  ContextBase& context() { return *context_; }
  Workspace& ws() { return ws_; }

 private:
  std::unique_ptr<ContextBase> context_;
  Workspace ws_;
  std::map<std::string, std::unique_ptr<OperatorBase>> ops_;
};

}  // namespace crossbow::testing
