#pragma once

#include <cstdint>

namespace crossbow {

// Below this many elements an operator's own element loop stays on one thread: starting the
// OpenMP team costs more than it saves.
constexpr int64_t kMinParallelElements = 1 << 16;

}  // namespace crossbow
