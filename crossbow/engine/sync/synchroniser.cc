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

bool EveryPeriod(int64_t t, int period) { return (t + 1) % period == 0; }

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
  std::string known;
  for (const auto& n : SynchroniserNames()) known += (known.empty() ? "" : ", ") + n;
  throw ValueError(detail::Concat("unknown synchronisation '", name, "'; expected one of ", known,
                                  DidYouMean(name, SynchroniserNames())));
}

std::unique_ptr<Synchroniser> MakeSynchroniser(const EngineOptions& options) {
  CheckSynchroniserName(options.sync);
  CROSSBOW_ENFORCE_VALUE(options.sync_period >= 1, "sync_period must be >= 1, got ",
                         options.sync_period);
  return Factories().at(options.sync)(options);
}

}  // namespace crossbow
