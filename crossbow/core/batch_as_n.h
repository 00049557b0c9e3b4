#pragma once

#include <cstdint>

namespace crossbow {

// While one is alive on this thread, ShapeString (tensor.cc) prints a first dimension equal to
// `batch` as N: shape inference with the batch open (InferOpenBatchShapes) runs the schemas at
// a stand-in batch and reports their errors as the user wrote the net.
class ScopedBatchAsN {
 public:
  explicit ScopedBatchAsN(int64_t batch);
  ~ScopedBatchAsN();
  ScopedBatchAsN(const ScopedBatchAsN&) = delete;
  ScopedBatchAsN& operator=(const ScopedBatchAsN&) = delete;

 private:
  int64_t previous_;
};

}  // namespace crossbow
