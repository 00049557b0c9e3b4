#include "crossbow/core/shape_inference.h"

#include "crossbow/core/batch_as_n.h"

namespace crossbow {

std::map<std::string, TensorShape> InferShapes(const NetDef& net, const ShapeLookup& fed) {
  std::map<std::string, TensorShape> shapes;
  for (const OperatorDef& op : net.ops) {
    const OpSchema* schema = SchemaRegistry::Find(op.type);
    if (schema == nullptr) SchemaRegistry::FailUnknown(op.type);
    schema->Verify(op);
    std::vector<TensorShape> inputs;
    for (const auto& name : op.inputs) {
      auto known = shapes.find(name);
      if (known == shapes.end()) {
        const TensorShape* outside = fed(name);
        CROSSBOW_ENFORCE_VALUE(outside != nullptr, op.Label(), " in net '", net.name,
                               "' reads blob '", name,
                               "', which no earlier operator produces and nobody feeds");
        known = shapes.emplace(name, *outside).first;
      }
      inputs.push_back(known->second);
    }
    std::vector<TensorShape> outputs = schema->InferShapes(op, inputs);
    for (size_t i = 0; i < op.outputs.size(); ++i) {
      if (!op.outputs[i].empty()) shapes[op.outputs[i]] = outputs[i];
    }
  }
  return shapes;
}

namespace {

// Stand-ins for an open batch: apart from any image dimension, divisible by every small
// factor (a reshape's -1 divides by), and the second twice the first.
constexpr int64_t kStandInBatch = 720720;  // lcm(1..16)

std::map<std::string, TensorShape> InferAtBatch(const NetDef& net,
                                                const std::map<std::string, OpenShape>& fed,
                                                const std::set<std::string>& int_inputs,
                                                int64_t batch) {
  std::map<std::string, TensorShape> closed;
  for (const auto& [name, dims] : fed) {
    TensorShape& shape = closed[name];
    for (size_t i = 0; i < dims.size(); ++i) {
      CROSSBOW_ENFORCE_VALUE(dims[i].has_value() || i == 0, "blob '", name, "' fed to net '",
                             net.name, "': only the first dimension (the batch) may be open");
      shape.dims.push_back(dims[i].value_or(batch));
    }
    if (int_inputs.count(name)) shape.dtype = DataType::kInt32;
  }
  ScopedBatchAsN batch_as_n(batch);
  return InferShapes(net, [&](const std::string& name) {
    auto it = closed.find(name);
    return it == closed.end() ? nullptr : &it->second;
  });
}

}  // namespace

std::map<std::string, std::optional<OpenShape>> InferOpenBatchShapes(
    const NetDef& net, const std::map<std::string, OpenShape>& fed,
    const std::set<std::string>& int_inputs) {
  const auto small = InferAtBatch(net, fed, int_inputs, kStandInBatch);
  const auto large = InferAtBatch(net, fed, int_inputs, 2 * kStandInBatch);
  std::map<std::string, std::optional<OpenShape>> out;
  for (const auto& [name, shape] : small) {
    const Shape& a = shape.dims;
    const Shape& b = large.at(name).dims;
    std::optional<OpenShape>& open = out[name];
    if (a.size() != b.size()) continue;  // the rank itself follows the batch: unknown
    open.emplace();
    for (size_t i = 0; i < a.size() && open; ++i) {
      if (a[i] == b[i]) {
        open->push_back(a[i]);
      } else if (i == 0 && a[0] == kStandInBatch && b[0] == 2 * kStandInBatch) {
        open->push_back(std::nullopt);
      } else {
        open.reset();
      }
    }
  }
  return out;
}

}  // namespace crossbow
