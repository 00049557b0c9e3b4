#include "operators/channels_last_bn.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "crossbow/core/bfloat16.h"
#include "operators/parallel_threshold.h"

#define CROSSBOW_PER_ISA_FILE "operators/channels_last_bn_loops.inc"
#include "crossbow/core/per_isa.h"

namespace crossbow {

template <class T>
void ChannelsLastBN::ForwardTraining(const T* x, const float* scale, const float* bias, float* mean,
                                     float* var, T* y, uint8_t* mask) const {
  CROSSBOW_PER_ISA(ForwardTraining<T>)(*this, x, scale, bias, mean, var, y, mask);
}

template <class T>
void ChannelsLastBN::Normalize(const T* x, const float* scale, const float* bias, const float* mean,
                               const float* var, T* y, uint8_t* mask) const {
  CROSSBOW_PER_ISA(Normalize<T>)(*this, x, scale, bias, mean, var, y, mask);
}

template <class T>
void ChannelsLastBN::Backward(const T* x, const T* dy, const uint8_t* mask, const float* scale,
                              const float* mean, const float* var, T* dx, float* dscale,
                              float* dbias) const {
  CROSSBOW_PER_ISA(Backward<T>)(*this, x, dy, mask, scale, mean, var, dx, dscale, dbias);
}

#define CROSSBOW_INSTANTIATE(T)                                                                  \
  template void ChannelsLastBN::ForwardTraining<T>(const T*, const float*, const float*, float*, \
                                                   float*, T*, uint8_t*) const;                  \
  template void ChannelsLastBN::Normalize<T>(const T*, const float*, const float*, const float*, \
                                             const float*, T*, uint8_t*) const;                  \
  template void ChannelsLastBN::Backward<T>(const T*, const T*, const uint8_t*, const float*,    \
                                            const float*, const float*, T*, float*, float*) const;
CROSSBOW_INSTANTIATE(float)
CROSSBOW_INSTANTIATE(uint16_t)
#undef CROSSBOW_INSTANTIATE

}  // namespace crossbow
