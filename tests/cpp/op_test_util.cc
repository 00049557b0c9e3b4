#include "tests/cpp/op_test_util.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "crossbow/core/bfloat16.h"
#include "operators/dnnl_utils.h"
#include "tests/cpp/half_checks.h"

namespace crossbow::testing {

Tensor* OpHarness::Feed(const std::string& name, const Shape& shape, std::vector<float> values,
                        float low, float high) {
  Tensor* t = ws_.CreateTensor(name);
  t->Resize(shape);
  if (values.empty()) {
    std::uniform_real_distribution<float> dist(low, high);
    values.resize(t->numel());
    for (float& v : values) v = dist(context_.rng());
  }
  EXPECT_EQ(static_cast<int64_t>(values.size()), t->numel()) << "values for " << name;
  std::copy(values.begin(), values.end(), t->mutable_data<float>());
  return t;
}

Tensor* OpHarness::FeedInt(const std::string& name, const Shape& shape,
                           const std::vector<int32_t>& values) {
  Tensor* t = ws_.CreateTensor(name);
  t->Resize(shape, DataType::kInt32);
  EXPECT_EQ(static_cast<int64_t>(values.size()), t->numel()) << "values for " << name;
  std::copy(values.begin(), values.end(), t->mutable_data<int32_t>());
  return t;
}

void OpHarness::Run(const OperatorDef& op) {
  for (const auto& out : op.outputs) {
    if (!out.empty()) ws_.CreateTensor(out);
  }
  // One instance per distinct def, so that repeated runs reuse cached primitives.
  auto& slot = cache_[SerializeOperator(op)];
  if (!slot) slot = OperatorRegistry::Create(op, &ws_, &context_);
  slot->Run();
}

void OpHarness::Run(const std::vector<OperatorDef>& ops) {
  for (const auto& op : ops) Run(op);
}

std::vector<float> OpHarness::Fetch(const std::string& name) {
  const Tensor& t = *ws_.GetTensor(name);
  std::vector<float> out(t.numel());
  dnnl_utils::CopyToPlain(t, out.data(), &context_);
  return out;
}

float RoundToBf16(float x) { return Bf16ToFloat(FloatToBf16(x)); }

void RoundBlobToBf16(OpHarness& h, const std::string& name) {
  std::vector<float> v = h.Fetch(name);
  for (float& x : v) x = RoundToBf16(x);
  h.Feed(name, h.ShapeOf(name), v);
}

void ExpectBf16RoundingOf(const std::vector<float>& bf16, const std::vector<float>& exact,
                          const std::string& what) {
  ExpectRoundingOf(bf16, exact, /*bits=*/8, what);
}

float MaxAbsDiff(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  float worst = 0.f;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i)
    worst = std::max(worst, std::fabs(a[i] - b[i]));
  return worst;
}

double RelativeDiff(const std::vector<float>& a, const std::vector<float>& b) {
  float scale = 0.f;
  for (float x : b) scale = std::max(scale, std::fabs(x));
  return MaxAbsDiff(a, b) / std::max(scale, 1e-30f);
}

dnnl::memory::desc BlockedDesc(const Shape& shape, dnnl::memory::format_tag tag) {
  return dnnl::memory::desc(dnnl_utils::Dims(shape), dnnl::memory::data_type::f32, tag);
}

std::vector<float> FeedBlocked(OpHarness& h, const std::string& name, const Shape& shape,
                               dnnl::memory::format_tag tag, std::vector<float> values) {
  const Tensor* plain = h.Feed(name + "_plain", shape, std::move(values));
  dnnl_utils::ReorderTo(*plain, BlockedDesc(shape, tag), h.ws().CreateTensor(name), &h.context());
  return h.Fetch(name + "_plain");
}

void CopyToBlocked(OpHarness& h, const std::string& from, const std::string& to,
                   dnnl::memory::format_tag tag) {
  Tensor src;  // a copy of its own bytes: `to` may be `from`, whose bytes the reorder reuses
  CopyTensor(*h.ws().GetTensor(from), &src);
  dnnl_utils::ReorderTo(src, BlockedDesc(src.shape(), tag), h.ws().CreateTensor(to), &h.context());
  ASSERT_FALSE(h.ws().GetTensor(to)->is_plain());
}

void MakeBlocked(OpHarness& h, const std::string& name, dnnl::memory::format_tag tag) {
  CopyToBlocked(h, name, name, tag);
}

bool HasLayout(OpHarness& h, const std::string& name, dnnl::memory::format_tag tag) {
  const Tensor& t = *h.ws().GetTensor(name);
  return !t.is_plain() && t.layout() == BlockedDesc(t.shape(), tag);
}

bool IsPlain(OpHarness& h, const std::string& name) { return h.ws().GetTensor(name)->is_plain(); }

std::vector<TensorShape> InferShapes(const OperatorDef& op, const std::vector<Shape>& inputs) {
  std::vector<TensorShape> in;
  for (const Shape& s : inputs) in.push_back({s});
  return SchemaRegistry::Find(op.type)->InferShapes(op, in);
}

namespace {

double TestLoss(OpHarness& h, const OperatorDef& op, const std::vector<std::vector<float>>& weights,
                const std::vector<int>& outputs) {
  h.Run(op);
  double loss = 0;
  for (size_t k = 0; k < outputs.size(); ++k) {
    std::vector<float> y = h.Fetch(op.outputs[outputs[k]]);
    for (size_t i = 0; i < y.size(); ++i) loss += static_cast<double>(y[i]) * weights[k][i];
  }
  return loss;
}

}  // namespace

void CheckGradient(OpHarness& h, const OperatorDef& op, const std::vector<int>& check,
                   const GradCheckOptions& options) {
  h.Run(op);
  std::vector<std::vector<float>> weights;
  std::vector<std::string> output_grads(op.outputs.size());
  for (int o : options.outputs) {
    output_grads[o] = op.outputs[o] + "_grad_in";
    h.Feed(output_grads[o], h.ShapeOf(op.outputs[o]));
    weights.push_back(h.Fetch(output_grads[o]));
  }
  std::vector<std::string> input_grads(op.inputs.size());
  for (int i : check) input_grads[i] = op.inputs[i] + "_grad_out";

  const GradientMaker* maker = GradientRegistry::Find(op.type);
  ASSERT_NE(maker, nullptr) << op.type << " declares no gradient";
  GradientHelper helper(op, output_grads, input_grads);
  h.Run((*maker)(helper));

  for (int i : check) {
    std::vector<float> analytic = h.Fetch(input_grads[i]);
    Tensor* x = h.ws().GetTensor(op.inputs[i]);
    ASSERT_TRUE(x->is_plain());
    ASSERT_EQ(static_cast<int64_t>(analytic.size()), x->numel()) << "gradient of " << op.inputs[i];
    float* data = x->mutable_data<float>();
    const int64_t n = x->numel();
    const int64_t stride = std::max<int64_t>(1, n / options.max_elements);
    double magnitude = 0;
    int64_t checked = 0;
    for (int64_t e = 0; e < n; e += stride, ++checked) {
      const float saved = data[e];
      data[e] = saved + options.step;
      double plus = TestLoss(h, op, weights, options.outputs);
      data[e] = saved - options.step;
      double minus = TestLoss(h, op, weights, options.outputs);
      data[e] = saved;
      const double numeric = (plus - minus) / (2.0 * options.step);
      const double tol =
          options.abs_tol +
          options.rel_tol * std::max(std::fabs(numeric), std::fabs(double{analytic[e]}));
      EXPECT_NEAR(analytic[e], numeric, tol)
          << op.type << ": d loss / d " << op.inputs[i] << "[" << e << "]";
      magnitude += std::fabs(numeric);
    }
    EXPECT_LE(20.0 * options.abs_tol, magnitude / checked)
        << op.type << ": the gradients checked for " << op.inputs[i]
        << " are too small for abs_tol " << options.abs_tol << " to mean anything";
  }
}

}  // namespace crossbow::testing
