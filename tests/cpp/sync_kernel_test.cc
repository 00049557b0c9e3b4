#include "crossbow/engine/sync/sync_kernel.h"

#include <gtest/gtest.h>

#include <vector>

#include "crossbow/engine/sync/momentum_step.h"
#include "crossbow/engine/sync/ssgd.h"
#include "expect_error.h"

namespace crossbow {
namespace {

TEST(SyncKernels, EveryKernelRunsOnEveryDeviceTypeOfTheBuild) {
  const auto& kernels = SyncKernelDevices();
  ASSERT_GE(kernels.size(), 5u);  // SMA's three, the momentum step, S-SGD's division
  for (const auto& [name, devices] : kernels) {
    if (name == "TestKernel") continue;  // this file's own, CPU only
    EXPECT_TRUE(devices.count(DeviceType::kCPU)) << name << " has no CPU function";
#ifdef CROSSBOW_WITH_CUDA
    EXPECT_TRUE(devices.count(DeviceType::kCUDA)) << name << " has no CUDA function (its .cu)";
#endif
  }
}

struct TestKernel {
  static constexpr const char* kName = "TestKernel";
  float* x;
};
const bool registered = SyncKernel<TestKernel>::Register(
    DeviceType::kCPU, [](const TestKernel& a, ContextBase*) { *a.x = 7.f; });

TEST(SyncKernels, RunTheDeviceTypesFunctionAndNameWhatIsMissing) {
  float x = 0.f;
  SyncKernel<TestKernel>::Run(DeviceType::kCPU, TestKernel{&x}, nullptr);
  EXPECT_EQ(x, 7.f);
  EXPECT_ERROR(SyncKernel<TestKernel>::Run(DeviceType::kCUDA, TestKernel{&x}, nullptr), Error,
               "synchronisation kernel TestKernel has no CUDA implementation");
}

TEST(SyncKernels, MomentumStepFollowsItsNamedCoefficients) {
  const int n = 37;  // a vector body and a scalar tail
  for (bool nesterov : {false, true}) {
    std::vector<float> x(n), z(n), u(n);
    for (int i = 0; i < n; ++i) {
      x[i] = 0.1f * i;
      z[i] = 1.f - 0.05f * i;
      u[i] = 0.02f * i - 0.3f;
    }
    const std::vector<float> z0 = z, u0 = u;
    MomentumStep step;
    step.x = x.data();
    step.z = z.data();
    step.u = u.data();
    step.n = n;
    step.scale = 0.25f;
    step.shift = 1.f;
    step.lr = 0.7f;
    step.mu = 0.9f;
    step.nesterov = nesterov;
    SyncKernel<MomentumStep>::Run(DeviceType::kCPU, step, nullptr);
    for (int i = 0; i < n; ++i) {
      const float d = 0.25f * x[i] - z0[i];
      const float v = 0.9f * u0[i] + d;
      ASSERT_FLOAT_EQ(u[i], v) << i;
      ASSERT_FLOAT_EQ(z[i], z0[i] + 0.7f * (nesterov ? d + 0.9f * v : v)) << i;
    }
  }
}

TEST(SyncKernels, DivideByCountScalesByTheInverseAndZeroesWithoutImages) {
  for (float count : {4.f, 0.f}) {
    std::vector<float> x = {2.f, -6.f, 1.f};
    SyncKernel<DivideByCount>::Run(DeviceType::kCPU, DivideByCount{&count, x.data(), 3}, nullptr);
    const float scale = count > 0 ? 1.f / count : 0.f;
    EXPECT_EQ(x, (std::vector<float>{2.f * scale, -6.f * scale, 1.f * scale})) << count;
  }
}

}  // namespace
}  // namespace crossbow
