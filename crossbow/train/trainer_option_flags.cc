#include "crossbow/train/trainer_option_flags.h"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

#include "crossbow/core/enforce.h"

namespace crossbow {
namespace {

using nlohmann::json;

std::string Underscored(std::string name) {
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

// The text of a flag as the option's type; text that is not of the type stays a string, for
// ParseTrainerConfig to refuse with the option's name.
json ValueOf(const std::string& type, const std::string& text) {
  if (type == "str") return text;
  if (type == "floats") {
    json list = json::array();
    size_t start = 0;
    while (start <= text.size()) {
      const size_t comma = std::min(text.find(',', start), text.size());
      list.push_back(ValueOf("float", text.substr(start, comma - start)));
      start = comma + 1;
    }
    return list;
  }
  const json parsed = json::parse(text, nullptr, false);
  return parsed.is_discarded() || parsed.is_object() || parsed.is_array() ? json(text) : parsed;
}

}  // namespace

std::string TakeOptionFlags(int* argc, char** argv, const OptionFilter& read,
                            std::vector<std::string>* given) {
  const std::vector<TrainerOption> table = TrainerOptionTable();
  json options = json::object();
  for (const TrainerOption& o : table) options[o.name] = json::parse(o.default_json);
  int kept = 1;
  for (int i = 1; i < *argc; ++i) {
    const std::string arg = argv[i];
    const size_t equals = arg.find('=');
    std::string name = arg.rfind("--", 0) == 0 ? Underscored(arg.substr(2, equals - 2)) : "";
    const bool negated = name.rfind("no_", 0) == 0 && equals == std::string::npos;
    auto it = std::find_if(table.begin(), table.end(), [&](const TrainerOption& o) {
      return read(o) &&
             (o.name == name || (negated && o.type == "bool" && o.name == name.substr(3)));
    });
    if (it == table.end()) {
      argv[kept++] = argv[i];
      continue;
    }
    if (given != nullptr) given->push_back(it->name);
    if (it->type == "bool" && equals == std::string::npos) {
      options[it->name] = !negated;
    } else if (equals != std::string::npos) {
      options[it->name] = ValueOf(it->type, arg.substr(equals + 1));
    } else {
      CROSSBOW_ENFORCE_VALUE(i + 1 < *argc, "flag --", name, " needs a value");
      options[it->name] = ValueOf(it->type, argv[++i]);
    }
  }
  *argc = kept;
  return options.dump();
}

std::string OptionFlagsHelp(const OptionFilter& read) {
  std::string help;
  for (const TrainerOption& o : TrainerOptionTable()) {
    if (!read(o)) continue;
    std::string metavar = o.type == "bool" ? "" : o.unit.empty() ? o.name : o.unit;
    std::transform(metavar.begin(), metavar.end(), metavar.begin(),
                   [](unsigned char c) { return std::toupper(c); });
    help += "  --" + o.name + (metavar.empty() ? "" : " " + metavar) + "  " + o.doc +
            (o.rule.empty() || o.type == "str" ? "" : " (" + o.rule + ")") + " [" + o.default_json +
            "]\n";
  }
  return help;
}

}  // namespace crossbow
