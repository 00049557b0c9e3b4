#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "crossbow/core/net_def.h"
#include "crossbow/core/tensor.h"

namespace crossbow {

struct TensorShape {
  Shape dims;
  DataType dtype = DataType::kFloat32;
};

using ShapeInferenceFn =
    std::function<std::vector<TensorShape>(const OperatorDef&, const std::vector<TensorShape>&)>;

// What an operator promises: arity, in-place rules, shape inference and its doc.
// Registering a kernel for an operator without a schema fails to link.
class OpSchema {
 public:
  explicit OpSchema(std::string type) : type_(std::move(type)) {}

  OpSchema& NumInputs(int n) { return NumInputs(n, n); }
  OpSchema& NumInputs(int min, int max);
  OpSchema& NumOutputs(int n) { return NumOutputs(n, n); }
  OpSchema& NumOutputs(int min, int max);
  OpSchema& AllowInplace(std::vector<std::pair<int, int>> input_output);
  OpSchema& EnforceInplace(std::vector<std::pair<int, int>> input_output);
  OpSchema& ShapeInference(ShapeInferenceFn fn);
  OpSchema& IdenticalShape();  // output i has input 0's shape, for every output
  OpSchema& Doc(std::string doc);
  OpSchema& Input(int index, std::string name, std::string doc);
  OpSchema& Output(int index, std::string name, std::string doc);
  OpSchema& Arg(std::string name, std::string doc);
  // Adds what `part` adds: for the parts that two schemas share (SpatialBN, SpatialBNRelu).
  OpSchema& With(const std::function<void(OpSchema&)>& part) {
    part(*this);
    return *this;
  }

  const std::string& type() const { return type_; }
  const std::string& doc() const { return doc_; }
  // "Conv(X, W, [b]) -> Y" plus the documented inputs, outputs and arguments.
  std::string Describe() const;

  // Throws, naming the operator, when the def breaks arity or in-place rules.
  void Verify(const OperatorDef& def) const;
  std::vector<TensorShape> InferShapes(const OperatorDef& def,
                                       const std::vector<TensorShape>& inputs) const;

 private:
  struct Named {
    int index;
    std::string name, doc;
  };
  std::string type_, doc_;
  int min_inputs_ = 0, max_inputs_ = 0, min_outputs_ = 0, max_outputs_ = 0;
  std::vector<std::pair<int, int>> allowed_inplace_, enforced_inplace_;
  ShapeInferenceFn infer_;
  std::vector<Named> inputs_, outputs_, args_;
};

class SchemaRegistry {
 public:
  static OpSchema& NewSchema(const std::string& type);
  static const OpSchema* Find(const std::string& type);
  static std::vector<std::string> Types();
  // Throws "unknown operator 'Covn'; did you mean 'Conv'?".
  [[noreturn]] static void FailUnknown(const std::string& type);
};

}  // namespace crossbow

#define CROSSBOW_CONCAT_IMPL(a, b) a##b
#define CROSSBOW_CONCAT(a, b) CROSSBOW_CONCAT_IMPL(a, b)

// Use at namespace crossbow scope, in the operator's .cc file.
#define OPERATOR_SCHEMA(name)                                                \
  int crossbow_schema_defined_##name = 0;                                    \
  static ::crossbow::OpSchema& CROSSBOW_CONCAT(schema_##name##_, __LINE__) = \
      ::crossbow::SchemaRegistry::NewSchema(#name)
