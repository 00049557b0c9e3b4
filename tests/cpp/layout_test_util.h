#pragma once

#include <string>
#include <vector>

#include "operators/dnnl_utils.h"
#include "tests/cpp/op_test_util.h"

namespace crossbow::testing {

inline dnnl::memory::desc BlockedDesc(const Shape& shape, dnnl::memory::format_tag tag) {
  return dnnl::memory::desc(dnnl_utils::Dims(shape), dnnl::memory::data_type::f32, tag);
}

// Feeds `name` laid out as `tag` (nChw16c, nChw8c, ...), from `values` or random ones, and
// returns its values in row-major order.
inline std::vector<float> FeedBlocked(OpHarness& h, const std::string& name, const Shape& shape,
                                      dnnl::memory::format_tag tag,
                                      std::vector<float> values = {}) {
  const Tensor* plain = h.Feed(name + "_plain", shape, std::move(values));
  dnnl_utils::ReorderTo(*plain, BlockedDesc(shape, tag), h.ws().CreateTensor(name), &h.context());
  return h.Fetch(name + "_plain");
}

inline bool HasLayout(OpHarness& h, const std::string& name, dnnl::memory::format_tag tag) {
  const Tensor& t = *h.ws().GetTensor(name);
  return !t.is_plain() && t.layout() == BlockedDesc(t.shape(), tag);
}

inline bool IsPlain(OpHarness& h, const std::string& name) {
  return h.ws().GetTensor(name)->is_plain();
}

// The shapes the schema of `op` infers from `inputs`.
inline std::vector<TensorShape> InferShapes(const OperatorDef& op,
                                            const std::vector<Shape>& inputs) {
  std::vector<TensorShape> in;
  for (const Shape& s : inputs) in.push_back({s});
  return SchemaRegistry::Find(op.type)->InferShapes(op, in);
}

}  // namespace crossbow::testing
