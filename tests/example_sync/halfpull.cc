// Adding a synchroniser touches one file: this one. "halfpull" is EASGD pulling learners and z
// towards each other with half of --alpha. Registering it by name is all it takes for the engine
// to run it and for the option table to accept --sync halfpull. It is built apart, as
// libcrossbow_example_sync.so, which tests/python/test_added_synchroniser.py loads as a plugin,
// so that the test binaries' lists of synchronisers stay the six.
// A synchroniser with arithmetic of its own adds its kernels beside it (sync/sma.{h,cc,cu}).
#include "crossbow/engine/engine.h"
#include "crossbow/engine/sync/sma.h"

namespace crossbow {

CROSSBOW_REGISTER_SYNCHRONISER(halfpull, [](const EngineOptions& o) {
  return std::make_unique<SMA>(o.alpha / 2, 0.0, "polyak", PeriodOf(o));
});

}  // namespace crossbow
