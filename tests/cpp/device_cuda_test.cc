// The CUDA backend's basics on GPU 0: a context, memory figures, tensors there and back. The
// first thing crossbow_cuda_tests checks on a GPU machine (scripts/gpu/gpu_check.sh).
#include <gtest/gtest.h>

#include <numeric>

#include "crossbow/core/context_cuda.h"
#include "crossbow/core/device_backend.h"
#include "crossbow/core/tensor.h"

namespace crossbow {
namespace {

const Device kGpu0{DeviceType::kCUDA, 0};

TEST(DeviceCuda, ContextSynchronisesAndMemoryIsReported) {
  if (CudaDeviceCount() == 0) GTEST_SKIP() << "no GPU: needs one CUDA device";
  auto context = MakeContext(kGpu0, /*seed=*/1, /*threads=*/1);
  ASSERT_EQ(context->device(), kGpu0);
  context->BindThread();
  context->Synchronize();
  const auto [free, total] = cuda::MemoryInfo(0);
  EXPECT_GT(total, 0u);
  EXPECT_LE(free, total);
}

TEST(DeviceCuda, TensorRoundTripKeepsEveryValue) {
  if (CudaDeviceCount() == 0) GTEST_SKIP() << "no GPU: needs one CUDA device";
  Tensor host({3, 5, 7}, DataType::kFloat32);
  float* values = host.mutable_data<float>();
  std::iota(values, values + host.numel(), -50.f);
  Tensor gpu(kGpu0);
  CopyTensor(host, &gpu);
  EXPECT_EQ(gpu.device(), kGpu0);
  EXPECT_EQ(gpu.shape(), host.shape());
  const Tensor back = ToHost(gpu);
  ASSERT_EQ(back.numel(), host.numel());
  for (int64_t i = 0; i < host.numel(); ++i) EXPECT_EQ(back.data<float>()[i], values[i]) << i;
}

TEST(DeviceCuda, CopiesAfterTheBoundContextIsGoneUseNoDeadStream) {
  if (CudaDeviceCount() == 0) GTEST_SKIP() << "no GPU: needs one CUDA device";
  {
    auto context = MakeContext(kGpu0, /*seed=*/1, /*threads=*/1);
    context->BindThread();
  }
  Tensor host({4}, DataType::kFloat32);
  std::iota(host.mutable_data<float>(), host.mutable_data<float>() + 4, 1.f);
  Tensor gpu(kGpu0);
  CopyTensor(host, &gpu);
  const Tensor back = ToHost(gpu);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(back.data<float>()[i], i + 1.f) << i;
}

}  // namespace
}  // namespace crossbow
