#pragma once

#include <map>
#include <string>
#include <vector>

#include "crossbow/core/operator.h"

namespace crossbow::testing {

// A private workspace and context for running single operators in tests.
class OpHarness {
 public:
  OpHarness() : context_(/*seed=*/7) {}

  // Feeds a plain float tensor; random uniform in [low, high) when `values` is empty.
  Tensor* Feed(const std::string& name, const Shape& shape, std::vector<float> values = {},
               float low = -1.f, float high = 1.f);
  Tensor* FeedInt(const std::string& name, const Shape& shape, const std::vector<int32_t>& values);
  void Run(const OperatorDef& op);
  void Run(const std::vector<OperatorDef>& ops);
  // Row-major copy of a float blob, whatever its layout.
  std::vector<float> Fetch(const std::string& name);
  const Shape& ShapeOf(const std::string& name) { return ws_.GetTensor(name)->shape(); }

  Workspace& ws() { return ws_; }
  CPUContext& context() { return context_; }

 private:
  Workspace ws_;
  CPUContext context_;
  std::map<std::string, std::unique_ptr<OperatorBase>> cache_;
};

struct GradCheckOptions {
  std::vector<int> outputs = {0};  // outputs that feed the scalar test loss
  float step = 1e-2f;
  float rel_tol = 2e-2f;
  float abs_tol = 2e-3f;
  int max_elements = 48;  // checked per input (a spread-out subset of larger tensors)
};

// Checks the registered gradient of `op` for the inputs in `check` against central
// differences of loss = sum_o <R_o, Y_o>, with fixed random R_o. The harness must already
// hold every input of `op`. Reports each mismatch through GoogleTest.
void CheckGradient(OpHarness& harness, const OperatorDef& op, const std::vector<int>& check,
                   const GradCheckOptions& options = {});

// Max |a - b| over two vectors of equal size.
float MaxAbsDiff(const std::vector<float>& a, const std::vector<float>& b);

}  // namespace crossbow::testing
