#include "operators/channels_last_max_pool.h"

#include <algorithm>

#include "crossbow/core/bfloat16.h"
#include "operators/parallel_threshold.h"

#define CROSSBOW_PER_ISA_FILE "operators/channels_last_max_pool_loops.inc"
#include "crossbow/core/per_isa.h"

namespace crossbow {

template <class T>
void ChannelsLastMaxPool::Forward(const T* x, T* y, uint8_t* argmax) const {
  CROSSBOW_PER_ISA(MaxPoolForward<T>)(*this, x, y, argmax);
}

template <class T>
void ChannelsLastMaxPool::Backward(const T* dy, const uint8_t* argmax, T* dx) const {
  CROSSBOW_PER_ISA(MaxPoolBackward<T>)(*this, dy, argmax, dx);
}

template void ChannelsLastMaxPool::Forward<float>(const float*, float*, uint8_t*) const;
template void ChannelsLastMaxPool::Forward<uint16_t>(const uint16_t*, uint16_t*, uint8_t*) const;
template void ChannelsLastMaxPool::Backward<float>(const float*, const uint8_t*, float*) const;
template void ChannelsLastMaxPool::Backward<uint16_t>(const uint16_t*, const uint8_t*,
                                                      uint16_t*) const;

}  // namespace crossbow
