#include "crossbow/core/net_def.h"

#include <nlohmann/json.hpp>

namespace crossbow {
namespace detail {

template <>
bool ArgAs(const Argument& value, int64_t* out) {
  if (auto* v = std::get_if<int64_t>(&value)) return *out = *v, true;
  return false;
}
template <>
bool ArgAs(const Argument& value, int* out) {
  if (auto* v = std::get_if<int64_t>(&value)) return *out = static_cast<int>(*v), true;
  return false;
}
template <>
bool ArgAs(const Argument& value, bool* out) {
  if (auto* v = std::get_if<int64_t>(&value)) return *out = *v != 0, true;
  return false;
}
template <>
bool ArgAs(const Argument& value, double* out) {
  if (auto* v = std::get_if<double>(&value)) return *out = *v, true;
  if (auto* v = std::get_if<int64_t>(&value)) return *out = static_cast<double>(*v), true;
  return false;
}
template <>
bool ArgAs(const Argument& value, float* out) {
  double d;
  if (!ArgAs(value, &d)) return false;
  *out = static_cast<float>(d);
  return true;
}
template <>
bool ArgAs(const Argument& value, std::string* out) {
  if (auto* v = std::get_if<std::string>(&value)) return *out = *v, true;
  return false;
}
template <>
bool ArgAs(const Argument& value, std::vector<int64_t>* out) {
  if (auto* v = std::get_if<std::vector<int64_t>>(&value)) return *out = *v, true;
  return false;
}
template <>
bool ArgAs(const Argument& value, std::vector<double>* out) {
  if (auto* v = std::get_if<std::vector<double>>(&value)) return *out = *v, true;
  if (auto* v = std::get_if<std::vector<int64_t>>(&value)) {
    out->assign(v->begin(), v->end());
    return true;
  }
  return false;
}
template <>
bool ArgAs(const Argument& value, std::vector<std::string>* out) {
  if (auto* v = std::get_if<std::vector<std::string>>(&value)) return *out = *v, true;
  return false;
}

}  // namespace detail

std::string OperatorDef::Label() const {
  return name.empty() || name == type ? type : type + " '" + name + "'";
}

OperatorDef MakeOperator(const std::string& type, std::vector<std::string> inputs,
                         std::vector<std::string> outputs, std::map<std::string, Argument> args) {
  OperatorDef op;
  op.type = type;
  op.inputs = std::move(inputs);
  op.outputs = std::move(outputs);
  op.args = std::move(args);
  return op;
}

OperatorDef MakeFiller(const std::string& type, const std::string& output,
                       const std::vector<int64_t>& shape, std::map<std::string, Argument> args) {
  args["shape"] = shape;
  return MakeOperator(type, {}, {output}, std::move(args));
}

namespace {

using nlohmann::json;

json ArgToJson(const Argument& arg) {
  return std::visit([](const auto& v) { return json(v); }, arg);
}

Argument ArgFromJson(const std::string& key, const json& j) {
  if (j.is_boolean()) return static_cast<int64_t>(j.get<bool>());
  if (j.is_number_integer()) return j.get<int64_t>();
  if (j.is_number_float()) return j.get<double>();
  if (j.is_string()) return j.get<std::string>();
  if (j.is_array()) {
    if (j.empty() || j[0].is_number_integer()) {
      bool all_int = true;
      for (const auto& e : j) all_int = all_int && e.is_number_integer();
      if (all_int) return j.get<std::vector<int64_t>>();
    }
    if (j[0].is_number()) return j.get<std::vector<double>>();
    if (j[0].is_string()) return j.get<std::vector<std::string>>();
  }
  CROSSBOW_FAIL("argument '", key, "' has an unsupported JSON value: ", j.dump());
}

json OpToJson(const OperatorDef& op) {
  json args = json::object();
  for (const auto& kv : op.args) args[kv.first] = ArgToJson(kv.second);
  json j = {{"type", op.type}, {"inputs", op.inputs}, {"outputs", op.outputs}, {"args", args}};
  if (!op.engine.empty()) j["engine"] = op.engine;
  if (!op.name.empty()) j["name"] = op.name;
  return j;
}

OperatorDef OpFromJson(const json& j) {
  OperatorDef op;
  op.type = j.at("type").get<std::string>();
  op.inputs = j.value("inputs", std::vector<std::string>{});
  op.outputs = j.value("outputs", std::vector<std::string>{});
  op.engine = j.value("engine", std::string());
  op.name = j.value("name", std::string());
  if (j.contains("args")) {
    for (const auto& kv : j["args"].items()) op.args[kv.key()] = ArgFromJson(kv.key(), kv.value());
  }
  return op;
}

}  // namespace

std::string SerializeOperator(const OperatorDef& op) { return OpToJson(op).dump(); }

std::string SerializeNet(const NetDef& net) {
  json ops = json::array();
  for (const auto& op : net.ops) ops.push_back(OpToJson(op));
  json j = {{"name", net.name},
            {"ops", ops},
            {"external_inputs", net.external_inputs},
            {"external_outputs", net.external_outputs}};
  return j.dump();
}

NetDef ParseNet(const std::string& text) {
  try {
    json j = json::parse(text);
    NetDef net;
    net.name = j.value("name", std::string());
    for (const auto& op : j.at("ops")) net.ops.push_back(OpFromJson(op));
    net.external_inputs = j.value("external_inputs", std::vector<std::string>{});
    net.external_outputs = j.value("external_outputs", std::vector<std::string>{});
    return net;
  } catch (const json::exception& e) {
    CROSSBOW_FAIL("malformed net definition: ", e.what());
  }
}

}  // namespace crossbow
