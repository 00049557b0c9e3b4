#pragma once

// Where Mul's B meets A: B's shape right-aligned against A's and padded with 1s (numpy's rule,
// one way: B broadcasts to A, never A to B). The arithmetic runs on both devices.
#include <cstdint>

#include "operators/host_device.h"

namespace crossbow::broadcast {

constexpr int kMaxRank = 8;

struct Layout {
  int rank = 0;
  int64_t dims[kMaxRank] = {};  // A's
  bool spread[kMaxRank] = {};   // B is 1 there and A is not: B's value is repeated
  int64_t a_numel = 1, b_numel = 1;
};

// B's row-major offset for A's element at row-major offset `i`.
CROSSBOW_HOST_DEVICE inline int64_t BOffset(const Layout& l, int64_t i) {
  int64_t offset = 0, stride = 1;
  for (int d = l.rank - 1; d >= 0; --d) {
    const int64_t c = i % l.dims[d];
    i /= l.dims[d];
    if (!l.spread[d]) {
      offset += c * stride;
      stride *= l.dims[d];
    }
  }
  return offset;
}

// A's offset of the k-th of the a_numel / b_numel elements that share B's element `j`.
CROSSBOW_HOST_DEVICE inline int64_t AOffset(const Layout& l, int64_t j, int64_t k) {
  int64_t offset = 0, stride = 1;
  for (int d = l.rank - 1; d >= 0; --d) {
    int64_t& from = l.spread[d] ? k : j;
    offset += (from % l.dims[d]) * stride;
    from /= l.dims[d];
    stride *= l.dims[d];
  }
  return offset;
}

}  // namespace crossbow::broadcast
