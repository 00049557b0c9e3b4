#include "crossbow/engine/sync/synchroniser.h"

#include <map>

#include "crossbow/engine/engine.h"

namespace crossbow {
namespace {

std::map<std::string, SynchroniserFactory>& Factories() {
  static std::map<std::string, SynchroniserFactory> factories;
  return factories;
}

}  // namespace

SyncPeriod PeriodOf(const EngineOptions& options) {
  return {options.sync_period, options.sync_warmup};
}

bool RegisterSynchroniser(const std::string& name, SynchroniserFactory factory) {
  Factories()[name] = std::move(factory);
  return true;
}

std::vector<std::string> SynchroniserNames() {
  std::vector<std::string> names;
  for (const auto& [name, factory] : Factories()) names.push_back(name);
  return names;
}

// The option table has checked the name against SynchroniserNames(), with a did-you-mean.
std::unique_ptr<Synchroniser> MakeSynchroniser(const EngineOptions& options) {
  const auto it = Factories().find(options.sync);
  CROSSBOW_ENFORCE_VALUE(it != Factories().end(), "unknown synchronisation '", options.sync, "'");
  return it->second(options);
}

}  // namespace crossbow
