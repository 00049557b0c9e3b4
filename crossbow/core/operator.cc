#include "crossbow/core/operator.h"

#include <map>
#include <set>
#include <tuple>

namespace crossbow {
namespace {

using Key = std::tuple<DeviceType, std::string, std::string>;

std::map<Key, OperatorCreator>& Creators() {
  static std::map<Key, OperatorCreator> creators;
  return creators;
}

std::map<std::string, GradientMaker>& Makers() {
  static std::map<std::string, GradientMaker> makers;
  return makers;
}

}  // namespace

OperatorBase::OperatorBase(const OperatorDef& def, Workspace* ws) : def_(def) {
  for (const auto& name : def.inputs) inputs_.push_back(ws->GetTensor(name));
  for (const auto& name : def.outputs) {
    outputs_.push_back(name.empty() ? nullptr : ws->CreateTensor(name));
  }
}

void OperatorBase::EnforceInputShape(int i, const Shape& expected) const {
  CROSSBOW_ENFORCE_VALUE(Input(i).shape() == expected, def_.Label(), ": input ", i, " '",
                         def_.inputs[i], "' has shape ", ShapeString(Input(i).shape()),
                         ", expected ", ShapeString(expected));
}

bool OperatorRegistry::Register(DeviceType device, const std::string& type,
                                const std::string& engine, OperatorCreator creator) {
  auto key = Key(device, type, engine);
  CROSSBOW_ENFORCE(!Creators().count(key), "operator ", type, " registered twice for ",
                   DeviceName(device), " engine '", engine, "'");
  Creators()[key] = std::move(creator);
  return true;
}

bool OperatorRegistry::Has(DeviceType device, const std::string& type) {
  return Creators().count(Key(device, type, "")) > 0;
}

std::vector<std::string> OperatorRegistry::Types(DeviceType device) {
  std::set<std::string> types;
  for (const auto& [key, creator] : Creators()) {
    if (std::get<0>(key) == device) types.insert(std::get<1>(key));
  }
  return {types.begin(), types.end()};
}

std::unique_ptr<OperatorBase> OperatorRegistry::Create(const OperatorDef& def, Workspace* ws,
                                                       ContextBase* context) {
  const DeviceType device = context->device().type;
  const OpSchema* schema = SchemaRegistry::Find(def.type);
  if (schema == nullptr) SchemaRegistry::FailUnknown(def.type);
  schema->Verify(def);
  for (const std::string& engine : {def.engine, std::string()}) {
    auto it = Creators().find(Key(device, def.type, engine));
    if (it != Creators().end()) return it->second(def, ws, context);
  }
  CROSSBOW_FAIL("operator ", def.Label(), " has no ", DeviceName(device), " implementation");
}

OperatorDef GradientHelper::Op(const std::string& type, std::vector<std::string> inputs,
                               std::vector<std::string> outputs) const {
  OperatorDef op = MakeOperator(type, std::move(inputs), std::move(outputs), def_.args);
  op.engine = def_.engine;
  op.name = def_.name.empty() ? "" : def_.name + "_grad";
  return op;
}

bool GradientRegistry::Register(const std::string& type, GradientMaker maker) {
  CROSSBOW_ENFORCE(!Makers().count(type), "gradient of ", type, " registered twice");
  Makers()[type] = std::move(maker);
  return true;
}

bool GradientRegistry::RegisterNone(const std::string& type) { return Register(type, nullptr); }

const GradientMaker* GradientRegistry::Find(const std::string& type) {
  auto it = Makers().find(type);
  CROSSBOW_ENFORCE(it != Makers().end(), "operator ", type,
                   " has no gradient; it cannot sit between a parameter and the loss");
  return it->second ? &it->second : nullptr;
}

}  // namespace crossbow
