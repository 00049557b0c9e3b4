#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "crossbow/core/context.h"
#include "crossbow/core/net_def.h"
#include "crossbow/core/schema.h"
#include "crossbow/core/workspace.h"

namespace crossbow {

// An operator bound to its workspace tensors. Construction resolves blobs once;
// Run() does one execution on the operator's context (per iteration: keep it lean).
class OperatorBase {
 public:
  OperatorBase(const OperatorDef& def, Workspace* ws);
  virtual ~OperatorBase() = default;
  OperatorBase(const OperatorBase&) = delete;
  OperatorBase& operator=(const OperatorBase&) = delete;

  virtual void Run() = 0;
  // Whether a run may be recorded once and replayed (CUDA graphs): false for an operator whose
  // run reads device data on the host, synchronises or allocates after its first run.
  virtual bool Capturable() const { return true; }

  const OperatorDef& def() const { return def_; }
  int InputSize() const { return static_cast<int>(inputs_.size()); }
  int OutputSize() const { return static_cast<int>(outputs_.size()); }
  const Tensor& Input(int i) const { return *inputs_[i]; }
  // nullptr when the def leaves output i unnamed (a gradient nobody needs).
  Tensor* Output(int i) { return outputs_[i]; }
  bool HasOutput(int i) const { return i < OutputSize() && outputs_[i] != nullptr; }
  template <typename T>
  T Arg(const std::string& key, const T& fallback) const {
    return def_.Arg<T>(key, fallback);
  }
  // Throws a ValueError naming this operator, input i and both shapes.
  void EnforceInputShape(int i, const Shape& expected) const;

 protected:
  OperatorDef def_;
  std::vector<const Tensor*> inputs_;
  std::vector<Tensor*> outputs_;
};

template <class Context>
class Operator : public OperatorBase {
 public:
  using ContextType = Context;
  Operator(const OperatorDef& def, Workspace* ws, Context* context)
      : OperatorBase(def, ws), context_(context) {}

 protected:
  Context* context_;
};

using OperatorCreator = std::function<std::unique_ptr<OperatorBase>(const OperatorDef&, Workspace*,
                                                                    ContextBase* context)>;

class OperatorRegistry {
 public:
  static bool Register(DeviceType device, const std::string& type, const std::string& engine,
                       OperatorCreator creator);
  // On the context's device: def.engine first, then the default engine; unknown types get a
  // did-you-mean.
  static std::unique_ptr<OperatorBase> Create(const OperatorDef& def, Workspace* ws,
                                              ContextBase* context);
  static bool Has(DeviceType device, const std::string& type);
  // The operator types with a kernel for `device`, sorted.
  static std::vector<std::string> Types(DeviceType device);
};

// ---- gradients -------------------------------------------------------------------

// What a gradient maker sees of its forward operator: inputs I(i), outputs O(i), the
// gradients flowing into the outputs GO(i) ("" when none), and the names to give the
// input gradients GI(i) ("" when that input needs none, so that no work is spent on it).
class GradientHelper {
 public:
  GradientHelper(const OperatorDef& def, std::vector<std::string> output_grads,
                 std::vector<std::string> input_grads)
      : def_(def), output_grads_(std::move(output_grads)), input_grads_(std::move(input_grads)) {}

  const OperatorDef& def() const { return def_; }
  const std::string& I(int i) const { return def_.inputs.at(i); }
  const std::string& O(int i) const { return def_.outputs.at(i); }
  const std::string& GO(int i) const { return output_grads_.at(i); }
  const std::string& GI(int i) const { return input_grads_.at(i); }
  // A gradient operator carrying the forward operator's arguments.
  OperatorDef Op(const std::string& type, std::vector<std::string> inputs,
                 std::vector<std::string> outputs) const;

 private:
  OperatorDef def_;
  std::vector<std::string> output_grads_, input_grads_;
};

using GradientMaker = std::function<std::vector<OperatorDef>(const GradientHelper&)>;

class GradientRegistry {
 public:
  static bool Register(const std::string& type, GradientMaker maker);
  static bool RegisterNone(const std::string& type);
  // nullptr for operators declared with NO_GRADIENT; throws for undeclared ones.
  static const GradientMaker* Find(const std::string& type);
};

}  // namespace crossbow

// Use at namespace crossbow scope. Fails to link unless OPERATOR_SCHEMA(name) exists.
#define REGISTER_OPERATOR_ENGINE(name, device, engine, ...)                                \
  extern int crossbow_schema_defined_##name;                                               \
  static const bool CROSSBOW_CONCAT(registered_##name##_, __LINE__) =                      \
      (crossbow_schema_defined_##name = 1,                                                 \
       ::crossbow::OperatorRegistry::Register(                                             \
           device, #name, engine,                                                          \
           [](const ::crossbow::OperatorDef& def, ::crossbow::Workspace* ws,               \
              ::crossbow::ContextBase* ctx) -> std::unique_ptr<::crossbow::OperatorBase> { \
             return std::make_unique<__VA_ARGS__>(                                         \
                 def, ws, static_cast<typename __VA_ARGS__::ContextType*>(ctx));           \
           }))
#define REGISTER_CPU_OPERATOR(name, ...) \
  REGISTER_OPERATOR_ENGINE(name, ::crossbow::DeviceType::kCPU, "", __VA_ARGS__)
#define REGISTER_CUDA_OPERATOR(name, ...) \
  REGISTER_OPERATOR_ENGINE(name, ::crossbow::DeviceType::kCUDA, "", __VA_ARGS__)

#define REGISTER_GRADIENT(name, maker)                              \
  static const bool CROSSBOW_CONCAT(gradient_##name##_, __LINE__) = \
      ::crossbow::GradientRegistry::Register(#name, maker)
#define NO_GRADIENT(name)                                              \
  static const bool CROSSBOW_CONCAT(no_gradient_##name##_, __LINE__) = \
      ::crossbow::GradientRegistry::RegisterNone(#name)
