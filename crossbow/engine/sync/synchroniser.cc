#include "crossbow/engine/sync/synchroniser.h"

#include <map>

#include "crossbow/core/names.h"
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

void CheckSynchroniserName(const std::string& name) {
  if (Factories().count(name)) return;
  throw ValueError(detail::Concat("unknown synchronisation '", name, "'; expected ",
                                  JoinNames(SynchroniserNames()),
                                  DidYouMean(name, SynchroniserNames())));
}

std::unique_ptr<Synchroniser> MakeSynchroniser(const EngineOptions& options) {
  CheckSynchroniserName(options.sync);
  return Factories().at(options.sync)(options);
}

}  // namespace crossbow
