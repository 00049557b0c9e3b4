#pragma once

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "crossbow/core/operator.h"
#include "operators/dnnl_utils.h"

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
  float rel_tol = 2e-2f;  // of each element's own magnitude
  float abs_tol = 1e-4f;  // a floor for float rounding, well below the gradients checked
  int max_elements = 48;  // checked per input (a spread-out subset of larger tensors)
};

// Checks the registered gradient of `op` for the inputs in `check` against central
// differences of loss = sum_o <R_o, Y_o>, with fixed random R_o. Each element must agree
// within abs_tol + rel_tol * its magnitude. The harness must already hold every input of
// `op`. Reports each mismatch through GoogleTest, and fails too when abs_tol is not well below
// (a twentieth of) the mean magnitude of the gradients checked for an input, since such a
// check would pass whatever the gradient (e.g. an input whose sampled gradients are all 0).
void CheckGradient(OpHarness& harness, const OperatorDef& op, const std::vector<int>& check,
                   const GradCheckOptions& options = {});

// Max |a - b| over two vectors of equal size.
float MaxAbsDiff(const std::vector<float>& a, const std::vector<float>& b);
// Max |a - b| / max |b|: the error relative to the reference b's scale.
double RelativeDiff(const std::vector<float>& a, const std::vector<float>& b);

// x rounded to the nearest bfloat16 (ties to even), as oneDNN's reorder to bf16 rounds.
float RoundToBf16(float x);
// Replaces the blob's values by their bfloat16 roundings.
void RoundBlobToBf16(OpHarness& h, const std::string& name);
// Each of `bf16` is `exact` rounded to bfloat16, give or take one unit in the last place (the
// sums behind them may run in another order), within 1e-4 of 0.
void ExpectBf16RoundingOf(const std::vector<float>& bf16, const std::vector<float>& exact,
                          const std::string& what);

// ---- layouts ----------------------------------------------------------------------

dnnl::memory::desc BlockedDesc(const Shape& shape, dnnl::memory::format_tag tag);
// Feeds `name` laid out as `tag` (nChw16c, nChw8c, ...), from `values` or random ones, and
// returns its values in row-major order.
std::vector<float> FeedBlocked(OpHarness& h, const std::string& name, const Shape& shape,
                               dnnl::memory::format_tag tag, std::vector<float> values = {});
// Replaces a plain blob by its copy laid out as `tag`.
void MakeBlocked(OpHarness& h, const std::string& name,
                 dnnl::memory::format_tag tag = dnnl::memory::format_tag::nChw16c);
// Copies blob `from` into blob `to` laid out as `tag`.
void CopyToBlocked(OpHarness& h, const std::string& from, const std::string& to,
                   dnnl::memory::format_tag tag = dnnl::memory::format_tag::nChw16c);
bool HasLayout(OpHarness& h, const std::string& name, dnnl::memory::format_tag tag);
bool IsPlain(OpHarness& h, const std::string& name);
// The shapes the schema of `op` infers from `inputs`.
std::vector<TensorShape> InferShapes(const OperatorDef& op, const std::vector<Shape>& inputs);

// ---- errors -----------------------------------------------------------------------

// Expects `run` to throw a ValueError whose message contains every one of `parts`.
template <typename F>
void ExpectValueError(F&& run, const std::vector<std::string>& parts) {
  try {
    run();
    ADD_FAILURE() << "expected a ValueError";
  } catch (const ValueError& e) {
    for (const auto& part : parts) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos)
          << "'" << part << "' missing from: " << e.what();
    }
  }
}
template <typename F>
void ExpectValueError(F&& run, const char* part) {
  ExpectValueError(std::forward<F>(run), std::vector<std::string>{part});
}

}  // namespace crossbow::testing
