#pragma once

#include "crossbow/core/operator.h"
#include "operators/reorder_cache.h"

namespace crossbow {

// The arguments and shapes of one SpectralNorm: W read as a matrix [rows, cols] (its first
// dimension by the rest), u [rows], v [cols].
struct SpectralNormDims {
  int64_t rows, cols;
  int64_t power_iterations;  // 0 in test mode
  float epsilon;
};

// Checks W, u and v (and power_iterations >= 0, epsilon > 0); a ValueError naming the operator
// and the input otherwise.
SpectralNormDims SpectralNormShape(const OperatorDef& def, const Shape& w, const Shape& u,
                                   const Shape& v);
// The same for a running operator's inputs 0-2 (W, u, v).
inline SpectralNormDims SpectralNormShape(const OperatorBase& op) {
  return SpectralNormShape(op.def(), op.Input(0).shape(), op.Input(1).shape(), op.Input(2).shape());
}
// Training (power_iterations > 0) writes u and v: a ValueError unless outputs 1 and 2 are named.
void EnforceSpectralNormOutputs(const OperatorDef& def, const SpectralNormDims& d);

// Spectral normalisation (Miyato et al. 2018), as torch.nn.utils.spectral_norm: Y = W / sigma,
// sigma = u^T W v / (|u| |v|), the largest singular value of W as the power iteration estimates
// it. Training first runs `power_iterations` steps v = W^T u / |W^T u|, u = W v / |W v| (each
// norm at least epsilon) and stores u and v in place; test mode uses them as they are. W, u, v
// plain fp32.
class SpectralNormOp final : public Operator<CPUContext> {
 public:
  using Operator::Operator;
  void Run() override;
};

// dW = dY / sigma - <dY, W> / sigma^2 u v^T / (|u| |v|), from W, the u and v the forward pass
// used (its outputs) and dY: the gradient through sigma too, as PyTorch's.
class SpectralNormGradientOp final : public Operator<CPUContext> {
 public:
  using Operator::Operator;
  void Run() override;

 private:
  ReorderCache dy_plain_;
};

}  // namespace crossbow
