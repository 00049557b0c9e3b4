#pragma once

// What a training option's value may be: its type, its rule (bounds, or one of some names),
// and the errors that name the option (`lr (--lr) must be finite and >= 0, got nan`). The option
// table (trainer_options.cc) declares each option with these.
#include <cmath>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace crossbow::options {

using nlohmann::json;

enum class Type { kInt, kFloat, kString, kBool, kFloats };

// By Type: the name Python reads.
extern const char* const kTypeNames[];

template <typename T>
constexpr Type TypeOf() {
  if constexpr (std::is_same_v<T, bool>)
    return Type::kBool;
  else if constexpr (std::is_integral_v<T>)
    return Type::kInt;
  else if constexpr (std::is_floating_point_v<T>)
    return Type::kFloat;
  else if constexpr (std::is_same_v<T, std::string>)
    return Type::kString;
  else
    return Type::kFloats;
}

// What a value must be: within bounds (numbers, each of a list's), or one of some names.
struct Rule {
  std::optional<double> above, at_least, below, at_most;
  std::function<std::vector<std::string>()> one_of;
  bool finite = false;

  // `integer`: of an integer option, which is finite anyway.
  std::string Text(bool integer) const;
  bool Allows(double v) const;
  bool Allows(const json& v) const;
};

Rule Above(double v);
Rule AtLeast(double v);
Rule Finite();
Rule Within(double low, double high);       // [ ]
Rule AboveAtMost(double low, double high);  // ( ]
Rule AboveBelow(double low, double high);   // ( )
Rule Fraction();                            // [0, 1)
Rule OneOf(std::function<std::vector<std::string>()> names);
Rule Any();

// "lr (--lr)": how errors name an option.
std::string Flag(const std::string& name);
// A value as an error shows it: strings quoted, nan and inf spelled so.
std::string Shown(const json& v);
// `v` as an option of type `t`, or a ValueError that names the option.
json Typed(const json& v, Type t, const std::string& name);
// A ValueError naming the option unless `rule` allows `v` (with a did-you-mean for names).
void CheckRule(const std::string& name, Type type, const Rule& rule, const json& v);

}  // namespace crossbow::options
