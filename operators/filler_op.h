#pragma once

#include "crossbow/core/operator.h"

namespace crossbow {

// Argument rules shared by the CPU and CUDA fillers; each throws a ValueError naming the
// operator. The `shape` argument (no negative dimension):
Shape FillerShapeArg(const OperatorDef& def);
// UniformFill's [min, max) (min < max; default [-1, 1)).
struct UniformRange {
  float min, max;
};
UniformRange UniformFillArgs(const OperatorDef& def);
// GaussianFill's mean and std (std > 0; default 0 and 1).
struct NormalParams {
  float mean, std;
};
NormalParams GaussianFillArgs(const OperatorDef& def);
// MSRAFill's `mode`: true for "fan_out", false for "fan_in" (the default).
bool MSRAFanOut(const OperatorDef& def);

// Base of the fillers: one plain float output shaped by the `shape` argument, or by the
// optional input (ConstantFill only). Random fillers draw from the context's generator.
class FillerOp : public Operator<CPUContext> {
 public:
  FillerOp(const OperatorDef& def, Workspace* ws, CPUContext* context);
  void Run() final;

 protected:
  virtual void Fill(const Shape& shape, float* out) = 0;

 private:
  Shape shape_;
};

// Every element = value.
class ConstantFillOp final : public FillerOp {
 public:
  ConstantFillOp(const OperatorDef& def, Workspace* ws, CPUContext* context);

 private:
  void Fill(const Shape& shape, float* out) override;
  float value_;
};

// Uniform in [min, max).
class UniformFillOp final : public FillerOp {
 public:
  UniformFillOp(const OperatorDef& def, Workspace* ws, CPUContext* context);

 private:
  void Fill(const Shape& shape, float* out) override;
  UniformRange range_;
};

// Normal(mean, std).
class GaussianFillOp final : public FillerOp {
 public:
  GaussianFillOp(const OperatorDef& def, Workspace* ws, CPUContext* context);

 private:
  void Fill(const Shape& shape, float* out) override;
  NormalParams normal_;
};

// Uniform in +-sqrt(3 / fan_in) (Caffe's Xavier): variance 1 / fan_in.
class XavierFillOp final : public FillerOp {
 public:
  using FillerOp::FillerOp;

 private:
  void Fill(const Shape& shape, float* out) override;
};

// Normal(0, sqrt(2 / fan)) (He et al.), fan_in or fan_out by the `mode` argument.
class MSRAFillOp final : public FillerOp {
 public:
  MSRAFillOp(const OperatorDef& def, Workspace* ws, CPUContext* context);

 private:
  void Fill(const Shape& shape, float* out) override;
  bool fan_out_;
};

// fan_in = prod(shape[1:]); fan_out = shape[0] * prod(shape[2:]) (missing dimensions count 1).
int64_t FanIn(const Shape& shape);
int64_t FanOut(const Shape& shape);

}  // namespace crossbow
