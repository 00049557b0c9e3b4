#pragma once

// What every cuDNN operator needs: descriptors that free themselves, NCHW descriptors from
// shapes, the blend factors and an error context naming the operator and its input shapes.
#include <cudnn.h>

#include <string>

#include "crossbow/core/check_cuda.h"
#include "crossbow/core/operator.h"

namespace crossbow::cudnn {

// One cuDNN descriptor, created with its owner and destroyed with it.
template <typename T, cudnnStatus_t (*kCreate)(T*), cudnnStatus_t (*kDestroy)(T)>
class Descriptor {
 public:
  Descriptor() { CUDNN_CHECK(kCreate(&desc_), "creating a cuDNN descriptor"); }
  ~Descriptor() { kDestroy(desc_); }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  T get() const { return desc_; }
  operator T() const { return desc_; }  // NOLINT: passed straight to cuDNN calls

 private:
  T desc_ = nullptr;
};

using TensorDescriptor =
    Descriptor<cudnnTensorDescriptor_t, cudnnCreateTensorDescriptor, cudnnDestroyTensorDescriptor>;
using FilterDescriptor =
    Descriptor<cudnnFilterDescriptor_t, cudnnCreateFilterDescriptor, cudnnDestroyFilterDescriptor>;
using ConvolutionDescriptor =
    Descriptor<cudnnConvolutionDescriptor_t, cudnnCreateConvolutionDescriptor,
               cudnnDestroyConvolutionDescriptor>;
using PoolingDescriptor = Descriptor<cudnnPoolingDescriptor_t, cudnnCreatePoolingDescriptor,
                                     cudnnDestroyPoolingDescriptor>;

// Blend factors for float data: out = kOne * op(in) + kZero * out overwrites out.
inline constexpr float kOne = 1.f;
inline constexpr float kZero = 0.f;

// "Conv 'conv1' (inputs x [8, 3, 32, 32], w [16, 3, 3, 3])": the context of every cuDNN and
// launch error an operator reports.
std::string Describe(const OperatorBase& op);

// Sets a packed NCHW descriptor for `nchw` (4 dims; [N, C] is {N, C, 1, 1}), of float32 unless
// `type` says otherwise. Throws a ValueError naming `op` when a dimension does not fit cuDNN's
// int.
void SetNCHW(cudnnTensorDescriptor_t desc, const Shape& nchw, const OperatorBase& op,
             cudnnDataType_t type = CUDNN_DATA_FLOAT);
// Sets a [K, C, H, W] filter descriptor, of float32 unless `type` says otherwise.
void SetFilter(cudnnFilterDescriptor_t desc, const Shape& kchw, const OperatorBase& op,
               cudnnDataType_t type = CUDNN_DATA_FLOAT);

}  // namespace crossbow::cudnn
