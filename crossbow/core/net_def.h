#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "crossbow/core/enforce.h"

namespace crossbow {

using Argument = std::variant<int64_t, double, std::string, std::vector<int64_t>,
                              std::vector<double>, std::vector<std::string>>;

// One operator of a net, as plain data. An empty output name means "not wanted"
// (gradient operators leave out the gradients nobody needs).
struct OperatorDef {
  std::string type;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::map<std::string, Argument> args;
  std::string engine;  // preferred kernel engine ("" = default)
  std::string name;    // for messages; defaults to the type

  bool HasArg(const std::string& key) const { return args.count(key) > 0; }
  template <typename T>
  T Arg(const std::string& key, const T& fallback) const;
  template <typename T>
  T RequiredArg(const std::string& key) const;
  std::string Label() const;  // "Conv 'conv1'" for error messages
};

struct NetDef {
  std::string name;
  std::vector<OperatorDef> ops;
  std::vector<std::string> external_inputs;
  std::vector<std::string> external_outputs;
};

// Stable byte format: JSON text, the same that python/crossbow/builder.py writes.
std::string SerializeNet(const NetDef& net);
NetDef ParseNet(const std::string& json);
std::string SerializeOperator(const OperatorDef& op);

OperatorDef MakeOperator(const std::string& type, std::vector<std::string> inputs,
                         std::vector<std::string> outputs,
                         std::map<std::string, Argument> args = {});

// A filler operator (ConstantFill, XavierFill, MSRAFill, ...) making blob `output` of `shape`.
OperatorDef MakeFiller(const std::string& type, const std::string& output,
                       const std::vector<int64_t>& shape,
                       std::map<std::string, Argument> args = {});

namespace detail {
template <typename T>
bool ArgAs(const Argument& value, T* out);
}

template <typename T>
T OperatorDef::Arg(const std::string& key, const T& fallback) const {
  auto it = args.find(key);
  if (it == args.end()) return fallback;
  T out;
  CROSSBOW_ENFORCE_VALUE(detail::ArgAs(it->second, &out), Label(), ": argument '", key,
                         "' has the wrong type");
  return out;
}

template <typename T>
T OperatorDef::RequiredArg(const std::string& key) const {
  CROSSBOW_ENFORCE_VALUE(HasArg(key), Label(), ": required argument '", key, "' is missing");
  return Arg<T>(key, T());
}

}  // namespace crossbow
