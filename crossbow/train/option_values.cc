#include "crossbow/train/option_values.h"

#include <algorithm>
#include <limits>

#include "crossbow/core/enforce.h"
#include "crossbow/core/names.h"

namespace crossbow::options {

const char* const kTypeNames[] = {"int", "float", "str", "bool", "floats"};

namespace {

// By Type: what a value of it is in an error.
const char* const kTypeWhat[] = {"an integer", "a number", "a string", "true or false",
                                 "a list of numbers"};

std::string Number(double v) {
  json j = v;
  if (v == std::floor(v) && std::abs(v) < 1e15) j = static_cast<int64_t>(v);
  return j.dump();
}

// JSON cannot hold NaN or infinity: Python sends them as the strings "nan", "inf", "-inf".
json NumberOf(const json& v) {
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
    if (s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
  }
  return v;
}

}  // namespace

std::string Rule::Text(bool integer) const {
  if (one_of) return JoinNames(one_of());
  const bool low = above || at_least, high = below || at_most;
  if (low && high) {
    return detail::Concat("in ", above ? "(" : "[", Number(above ? *above : *at_least), ", ",
                          Number(below ? *below : *at_most), below ? ")" : "]");
  }
  std::string bound = above      ? "> " + Number(*above)
                      : at_least ? ">= " + Number(*at_least)
                      : below    ? "< " + Number(*below)
                      : at_most  ? "<= " + Number(*at_most)
                                 : "";
  if (!finite || integer) return bound;
  return bound.empty() ? "finite" : "finite and " + bound;
}

bool Rule::Allows(double v) const {
  return !(finite && !std::isfinite(v)) && !(above && !(v > *above)) &&
         !(at_least && !(v >= *at_least)) && !(below && !(v < *below)) &&
         !(at_most && !(v <= *at_most));
}

bool Rule::Allows(const json& v) const {
  if (one_of) {
    const std::vector<std::string> names = one_of();
    return v.is_string() && std::count(names.begin(), names.end(), v.get<std::string>()) > 0;
  }
  if (v.is_array()) {
    return std::all_of(v.begin(), v.end(), [&](const json& x) { return Allows(x); });
  }
  return !v.is_number() || Allows(v.get<double>());
}

Rule Above(double v) { return {v, {}, {}, {}, nullptr, true}; }
Rule AtLeast(double v) { return {{}, v, {}, {}, nullptr, true}; }
Rule Finite() { return {{}, {}, {}, {}, nullptr, true}; }
Rule Within(double low, double high) { return {{}, low, {}, high, nullptr, true}; }
Rule AboveAtMost(double low, double high) { return {low, {}, {}, high, nullptr, true}; }
Rule AboveBelow(double low, double high) { return {low, {}, high, {}, nullptr, true}; }
Rule Fraction() { return {{}, 0.0, 1.0, {}, nullptr, true}; }
Rule OneOf(std::function<std::vector<std::string>()> names) {
  return {{}, {}, {}, {}, std::move(names), false};
}
Rule Any() { return {}; }

std::string Flag(const std::string& name) {
  std::string flag = name;
  std::replace(flag.begin(), flag.end(), '_', '-');
  return name + " (--" + flag + ")";
}

std::string Shown(const json& v) {
  if (v.is_string()) return "'" + v.get<std::string>() + "'";
  if (v.is_array()) {
    std::string text;
    for (const json& x : v) text += (text.empty() ? "" : ", ") + Shown(x);
    return "[" + text + "]";
  }
  if (v.is_number_float() && !std::isfinite(v.get<double>())) {
    const double x = v.get<double>();
    return std::isnan(x) ? "nan" : x > 0 ? "inf" : "-inf";
  }
  return v.dump();
}

// `v` as an option of type `t`, or a ValueError that names the option.
json Typed(const json& v, Type t, const std::string& name) {
  const json n = NumberOf(v);
  bool ok = false;
  switch (t) {
    case Type::kInt:
      ok = v.is_number_integer();
      break;
    case Type::kFloat:
      ok = n.is_number();
      break;
    case Type::kString:
      ok = v.is_string();
      break;
    case Type::kBool:
      ok = v.is_boolean();
      break;
    case Type::kFloats: {
      if (!v.is_array()) break;
      json list = json::array();
      for (const json& x : v) list.push_back(NumberOf(x));
      ok = std::all_of(list.begin(), list.end(), [](const json& x) { return x.is_number(); });
      if (ok) return list;
      break;
    }
  }
  CROSSBOW_ENFORCE_VALUE(ok, Flag(name), " must be ", kTypeWhat[static_cast<int>(t)], ", got ",
                         v.dump());
  return t == Type::kFloat ? n : v;
}

void CheckRule(const std::string& name, Type type, const Rule& rule, const json& v) {
  CROSSBOW_ENFORCE_VALUE(
      rule.Allows(v), Flag(name), " must be ", rule.Text(type == Type::kInt), ", got ", Shown(v),
      rule.one_of && v.is_string() ? DidYouMean(v.get<std::string>(), rule.one_of())
                                   : std::string());
}

}  // namespace crossbow::options
