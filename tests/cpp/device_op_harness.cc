#include "tests/cpp/device_op_harness.h"

#include <glog/logging.h>

#include "crossbow/core/device_backend.h"

namespace crossbow::testing {

DeviceOpHarness::DeviceOpHarness(Device device, uint64_t seed)
    : context_(MakeContext(device, seed, /*threads=*/1)), ws_(nullptr, device) {
  context_->BindThread();
}

DeviceOpHarness::~DeviceOpHarness() {
  try {
    context_->Synchronize();
  } catch (const std::exception& e) {
    LOG(ERROR) << "device work failed: " << e.what();
  }
}

void DeviceOpHarness::Feed(const std::string& name, const Tensor& host) {
  CopyTensor(host, ws_.CreateTensor(name));
}

OperatorBase* DeviceOpHarness::Run(const OperatorDef& op) {
  auto& slot = ops_[SerializeOperator(op)];
  if (!slot) slot = OperatorRegistry::Create(op, &ws_, context_.get());
  slot->Run();
  return slot.get();
}

void DeviceOpHarness::Run(const std::vector<OperatorDef>& ops) {
  for (const OperatorDef& op : ops) Run(op);
}

std::unique_ptr<CapturedWork> DeviceOpHarness::Record(OperatorBase* op) {
  return context_->Capture([op] { op->Run(); });
}

std::vector<float> DeviceOpHarness::Fetch(const std::string& name) {
  context_->Synchronize();
  const Tensor host = ToHost(*ws_.GetTensor(name));
  if (host.dtype() == DataType::kInt32) {
    const int32_t* values = host.data<int32_t>();
    return std::vector<float>(values, values + host.numel());
  }
  const float* values = host.data<float>();
  return std::vector<float>(values, values + host.numel());
}

}  // namespace crossbow::testing
