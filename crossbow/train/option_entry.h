// How an entry of the option table (trainer_options.cc) is made: its fields, who reads it, and
// the macros and makers that build entries of each kind. Included by the table alone.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "crossbow/train/option_values.h"
#include "crossbow/train/trainer_config.h"

namespace crossbow::option_table {

using nlohmann::json;
using namespace options;

enum class Part { kEngine, kTrainer, kData, kNet, kFrontEnd };
inline const char* const kReaders[] = {"engine", "trainer", "data", "net", "python"};

struct Entry {
  const char* name;
  Type type;
  Part part;
  const char* unit;
  Rule rule;
  std::string doc;
  bool per_rank;
  std::function<json(const TrainerConfig&)> get;         // python: the default
  std::function<void(const json&, TrainerConfig*)> set;  // null: the Python side's alone
  // Another spelling the option accepts, turned into its type before the checks; null: none.
  std::function<json(const json&)> respell = nullptr;
  // Says how this process starts (resume), not what the run is: not in checkpoints' options.
  bool start_only = false;
  // Model and ModelBuilder.to_spec (the Python library) default to this where it is set; the
  // commands (crossbow train, crossbow spec, crossbow_train, Trainer) to the entry's own.
  std::optional<json> library_default = std::nullopt;
};

template <typename T>
inline json OrNull(const T& v) {
  return v == T{} ? json(nullptr) : json(v);
}

// Checked fields of the engine's and the trainer's options; UNSET ones are 0 or empty when
// not set and read as null (off).
#define CROSSBOW_OPTION(key, part, member, unit, rule, doc, get_value)                    \
  Entry {                                                                                 \
    key, TypeOf<decltype(TrainerConfig{}.member)>(), part, unit, rule, doc, false,        \
        [](const TrainerConfig& c) { return get_value(c.member); },                       \
        [](const json& v, TrainerConfig* c) { c->member = v.get<decltype(c->member)>(); } \
  }
#define CROSSBOW_ENGINE(key, member, unit, rule, doc) \
  CROSSBOW_OPTION(key, Part::kEngine, engine.member, unit, rule, doc, json)
#define CROSSBOW_TRAINER(key, member, unit, rule, doc) \
  CROSSBOW_OPTION(key, Part::kTrainer, trainer.member, unit, rule, doc, json)
#define CROSSBOW_UNSET(key, member, unit, rule, doc) \
  CROSSBOW_OPTION(key, Part::kTrainer, trainer.member, unit, rule, doc, OrNull)
// Read outside the engine and the trainer, which hold no field for them: where the data loader
// (kData) or the net's spec (kNet) is made, by the Python front end or crossbow_train, or by
// the front end alone (kFrontEnd); the table holds their defaults.
#define CROSSBOW_OUTSIDE(part, key, type, unit, rule, doc, value)                              \
  Entry {                                                                                      \
    key, type, part, unit, rule, doc, false, [](const TrainerConfig&) { return json(value); }, \
        nullptr                                                                                \
  }
#define CROSSBOW_DATA(...) CROSSBOW_OUTSIDE(Part::kData, __VA_ARGS__)
#define CROSSBOW_NET(...) CROSSBOW_OUTSIDE(Part::kNet, __VA_ARGS__)
#define CROSSBOW_FRONT_END(...) CROSSBOW_OUTSIDE(Part::kFrontEnd, __VA_ARGS__)

inline Entry PerRank(Entry e) {
  e.per_rank = true;
  return e;
}

inline Entry StartOnly(Entry e) {
  e.start_only = true;
  return e;
}

// Where the Python library's default differs from the commands' on purpose (Entry's field).
inline Entry LibraryDefault(Entry e, json value) {
  e.library_default = std::move(value);
  return e;
}

// An engine option that is auto (0 in its field: WithSyncDefaults decides) or a number under
// `rule`. Python and the flags see a string; a number is accepted as one.
template <typename T>
Entry AutoOr(const char* key, T EngineOptions::*member, const char* unit, Rule rule,
             std::string doc) {
  auto set = [key, member, rule](const json& v, TrainerConfig* c) {
    const std::string text = v.get<std::string>();
    if (text == "auto") {
      c->engine.*member = T{};
      return;
    }
    const json parsed = json::parse(text, nullptr, false);
    const json typed = Typed(parsed.is_discarded() ? v : parsed, TypeOf<T>(), key);
    CheckRule(key, TypeOf<T>(), rule, typed);
    c->engine.*member = typed.template get<T>();
  };
  return {key,
          Type::kString,
          Part::kEngine,
          unit,
          rule,
          std::move(doc),
          false,
          [member](const TrainerConfig& c) {
            const T v = c.engine.*member;
            return v == T{} ? json("auto") : json(v);
          },
          set,
          [](const json& v) { return v.is_number() ? json(v.dump()) : v; }};
}

}  // namespace crossbow::option_table
