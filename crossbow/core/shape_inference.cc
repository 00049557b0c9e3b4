#include "crossbow/core/shape_inference.h"

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

}  // namespace crossbow
