#include "operators/cudnn_utils_cuda.h"

#include <array>
#include <limits>

namespace crossbow::cudnn {
namespace {

std::array<int, 4> IntDims(const Shape& shape, const OperatorBase& op) {
  CROSSBOW_ENFORCE(shape.size() == 4, op.def().Label(), ": a cuDNN descriptor needs 4 dims, got ",
                   ShapeString(shape));
  std::array<int, 4> dims{};
  for (int i = 0; i < 4; ++i) {
    CROSSBOW_ENFORCE_VALUE(shape[i] > 0 && shape[i] <= std::numeric_limits<int>::max(),
                           Describe(op), ": dimension ", i, " of ", ShapeString(shape),
                           " is outside what cuDNN takes (1 to 2^31 - 1)");
    dims[i] = static_cast<int>(shape[i]);
  }
  return dims;
}

}  // namespace

std::string Describe(const OperatorBase& op) {
  std::string text = op.def().Label() + " (inputs";
  for (int i = 0; i < op.InputSize(); ++i) {
    text += (i == 0 ? " " : ", ") + op.def().inputs[i] + " " + ShapeString(op.Input(i).shape());
  }
  return text + ")";
}

void SetNCHW(cudnnTensorDescriptor_t desc, const Shape& nchw, const OperatorBase& op,
             cudnnDataType_t type) {
  const auto d = IntDims(nchw, op);
  CUDNN_CHECK(cudnnSetTensor4dDescriptor(desc, CUDNN_TENSOR_NCHW, type, d[0], d[1], d[2], d[3]),
              Describe(op));
}

void SetFilter(cudnnFilterDescriptor_t desc, const Shape& kchw, const OperatorBase& op,
               cudnnDataType_t type) {
  const auto d = IntDims(kchw, op);
  CUDNN_CHECK(cudnnSetFilter4dDescriptor(desc, type, CUDNN_TENSOR_NCHW, d[0], d[1], d[2], d[3]),
              Describe(op));
}

}  // namespace crossbow::cudnn
