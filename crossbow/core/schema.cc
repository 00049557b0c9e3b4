#include "crossbow/core/schema.h"

#include <algorithm>
#include <map>
#include <memory>
#include <sstream>

#include "crossbow/core/names.h"

namespace crossbow {
namespace {

std::map<std::string, std::unique_ptr<OpSchema>>& Schemas() {
  static std::map<std::string, std::unique_ptr<OpSchema>> schemas;
  return schemas;
}

}  // namespace

OpSchema& OpSchema::NumInputs(int min, int max) {
  min_inputs_ = min;
  max_inputs_ = max;
  return *this;
}

OpSchema& OpSchema::NumOutputs(int min, int max) {
  min_outputs_ = min;
  max_outputs_ = max;
  return *this;
}

OpSchema& OpSchema::AllowInplace(std::vector<std::pair<int, int>> input_output) {
  allowed_inplace_ = std::move(input_output);
  return *this;
}

OpSchema& OpSchema::EnforceInplace(std::vector<std::pair<int, int>> input_output) {
  enforced_inplace_ = std::move(input_output);
  return *this;
}

OpSchema& OpSchema::ShapeInference(ShapeInferenceFn fn) {
  infer_ = std::move(fn);
  return *this;
}

OpSchema& OpSchema::IdenticalShape() {
  return ShapeInference([](const OperatorDef& def, const std::vector<TensorShape>& in) {
    return std::vector<TensorShape>(def.outputs.size(), in[0]);
  });
}

OpSchema& OpSchema::Doc(std::string doc) {
  doc_ = std::move(doc);
  return *this;
}

OpSchema& OpSchema::Input(int index, std::string name, std::string doc) {
  inputs_.push_back({index, std::move(name), std::move(doc)});
  return *this;
}

OpSchema& OpSchema::Output(int index, std::string name, std::string doc) {
  outputs_.push_back({index, std::move(name), std::move(doc)});
  return *this;
}

OpSchema& OpSchema::Arg(std::string name, std::string doc) {
  args_.push_back({0, std::move(name), std::move(doc)});
  return *this;
}

std::string OpSchema::Describe() const {
  std::ostringstream out;
  auto names = [&](const std::vector<Named>& list) {
    std::string s;
    for (const auto& n : list) s += (s.empty() ? "" : ", ") + n.name;
    return s;
  };
  out << type_ << "(" << names(inputs_) << ") -> " << names(outputs_) << "\n" << doc_ << "\n";
  for (const auto& n : inputs_)
    out << "  input " << n.index << " " << n.name << ": " << n.doc << "\n";
  for (const auto& n : outputs_)
    out << "  output " << n.index << " " << n.name << ": " << n.doc << "\n";
  for (const auto& n : args_) out << "  arg " << n.name << ": " << n.doc << "\n";
  return out.str();
}

void OpSchema::Verify(const OperatorDef& def) const {
  const int n_in = static_cast<int>(def.inputs.size());
  const int n_out = static_cast<int>(def.outputs.size());
  CROSSBOW_ENFORCE_VALUE(n_in >= min_inputs_ && n_in <= max_inputs_, def.Label(), " takes ",
                         min_inputs_, (min_inputs_ == max_inputs_ ? "" : " to "),
                         (min_inputs_ == max_inputs_ ? "" : std::to_string(max_inputs_)),
                         " inputs but was given ", n_in);
  CROSSBOW_ENFORCE_VALUE(n_out >= min_outputs_ && n_out <= max_outputs_, def.Label(), " produces ",
                         min_outputs_, (min_outputs_ == max_outputs_ ? "" : " to "),
                         (min_outputs_ == max_outputs_ ? "" : std::to_string(max_outputs_)),
                         " outputs but was given ", n_out);
  for (int o = 0; o < n_out; ++o) {
    for (int i = 0; i < n_in; ++i) {
      if (def.outputs[o].empty() || def.outputs[o] != def.inputs[i]) continue;
      auto pair = std::make_pair(i, o);
      bool ok = std::count(allowed_inplace_.begin(), allowed_inplace_.end(), pair) ||
                std::count(enforced_inplace_.begin(), enforced_inplace_.end(), pair);
      CROSSBOW_ENFORCE_VALUE(ok, def.Label(), ": output ", o, " '", def.outputs[o],
                             "' may not overwrite input ", i, " in place");
    }
  }
  for (const auto& [i, o] : enforced_inplace_) {
    if (i >= n_in || o >= n_out) continue;
    CROSSBOW_ENFORCE_VALUE(def.inputs[i] == def.outputs[o], def.Label(), ": output ", o, " ('",
                           def.outputs[o], "') must be input ", i, " ('", def.inputs[i],
                           "'), updated in place");
  }
}

std::vector<TensorShape> OpSchema::InferShapes(const OperatorDef& def,
                                               const std::vector<TensorShape>& inputs) const {
  CROSSBOW_ENFORCE(infer_ != nullptr, def.Label(), ": operator has no shape inference");
  std::vector<TensorShape> out = infer_(def, inputs);
  CROSSBOW_ENFORCE(out.size() == def.outputs.size(), def.Label(), ": shape inference gave ",
                   out.size(), " shapes for ", def.outputs.size(), " outputs");
  return out;
}

OpSchema& SchemaRegistry::NewSchema(const std::string& type) {
  auto& slot = Schemas()[type];
  CROSSBOW_ENFORCE(slot == nullptr, "operator schema '", type, "' registered twice");
  slot = std::make_unique<OpSchema>(type);
  return *slot;
}

const OpSchema* SchemaRegistry::Find(const std::string& type) {
  auto it = Schemas().find(type);
  return it == Schemas().end() ? nullptr : it->second.get();
}

std::vector<std::string> SchemaRegistry::Types() {
  std::vector<std::string> types;
  for (const auto& kv : Schemas()) types.push_back(kv.first);
  return types;
}

void SchemaRegistry::FailUnknown(const std::string& type) {
  throw ValueError(detail::Concat("unknown operator '", type, "'", DidYouMean(type, Types())));
}

}  // namespace crossbow
