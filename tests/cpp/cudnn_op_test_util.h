#pragma once

// Single operators on GPU 0 beside the CPU's OpHarness, for the *_cudnn_cuda_test.cc files
// (built only with CUDA). Fixtures derived from CudnnOpTest skip when no GPU is present.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "crossbow/core/check_cuda.h"
#include "crossbow/core/context_cuda.h"
#include "tests/cpp/op_test_util.h"

namespace crossbow::testing {

class GpuHarness {
 public:
  GpuHarness() : context_(/*gpu=*/0, /*seed=*/7), ws_(nullptr, context_.device()) {
    context_.BindThread();
  }

  // Copies plain blob `name` of the CPU harness to the GPU.
  void CopyFrom(OpHarness& cpu, const std::string& name) {
    CopyTensor(*cpu.ws().GetTensor(name), ws_.CreateTensor(name));
  }
  // The operator for `def` on the GPU, owned by the harness; its outputs are created.
  OperatorBase* Create(const OperatorDef& def) {
    for (const auto& out : def.outputs) {
      if (!out.empty()) ws_.CreateTensor(out);
    }
    ops_.push_back(OperatorRegistry::Create(def, &ws_, &context_));
    return ops_.back().get();
  }
  std::vector<float> Fetch(const std::string& name) {
    context_.Synchronize();
    const Tensor host = ToHost(*ws_.GetTensor(name));
    const float* p = host.data<float>();
    return std::vector<float>(p, p + host.numel());
  }
  // Overwrites blob `name` with NaN bytes, so that a replay must write it to pass.
  void Poison(const std::string& name) {
    Tensor* t = ws_.GetTensor(name);
    CUDA_CHECK(cudaMemsetAsync(t->raw_data(), 0xff, t->nbytes(), context_.stream()));
  }

  CUDAContext& context() { return context_; }
  Workspace& ws() { return ws_; }

 private:
  CUDAContext context_;
  Workspace ws_;
  std::vector<std::unique_ptr<OperatorBase>> ops_;
};

class CudnnOpTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (CudaDeviceCount() == 0) GTEST_SKIP() << "no GPU: this test runs CUDA operators";
    gpu_ = std::make_unique<GpuHarness>();
  }

  // Every value of `name` on the GPU within `tol` (relative, absolute below 1) of the CPU's.
  void ExpectMatchesCpu(const std::string& name, float tol = 1e-4f) {
    const std::vector<float> want = cpu_.Fetch(name), got = gpu_->Fetch(name);
    ASSERT_EQ(want.size(), got.size()) << name;
    for (size_t i = 0; i < want.size(); ++i) {
      ASSERT_NEAR(got[i], want[i], tol * std::max(1.f, std::fabs(want[i])))
          << name << "[" << i << "]";
    }
  }

  OpHarness cpu_;
  std::unique_ptr<GpuHarness> gpu_;
};

}  // namespace crossbow::testing
