// Crossbow's own element-wise loops compiled twice: for the build's baseline (x86-64-v3: AVX2,
// FMA) and for AVX-512 (x86-64-v4's F, BW, CD, DQ and VL), the copy the CPU can run chosen at
// run time (CpuHasAvx512: what oneDNN uses, so that ONEDNN_MAX_CPU_ISA=AVX2 caps both).
// Those loops are memory-bound streams over bfloat16 activations, where AVX-512's masks and
// two-source permutes pack and unpack the 16-bit values in fewer instructions than AVX2's.
//
// A file writes its loops once, in a .inc file of plain functions (it includes no header), and
// includes this header with the .inc named:
//
//   #define CROSSBOW_PER_ISA_FILE "operators/my_loops.inc"
//   #include "crossbow/core/per_isa.h"
//
// which puts one copy of the .inc in namespace crossbow::(anonymous)::baseline and, where the
// compiler can target AVX-512, one in crossbow::(anonymous)::avx512; CROSSBOW_PER_ISA(f) then
// names the f to call. Unlike the rest of this header, the part that includes the .inc runs on
// every inclusion.
#ifndef CROSSBOW_CORE_PER_ISA_H_
#define CROSSBOW_CORE_PER_ISA_H_

#include "crossbow/core/precision.h"  // CpuHasAvx512

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define CROSSBOW_HAS_AVX512_COPY 1
#define CROSSBOW_PER_ISA(...) \
  (::crossbow::CpuHasAvx512() ? avx512::__VA_ARGS__ : baseline::__VA_ARGS__)
#else
#define CROSSBOW_HAS_AVX512_COPY 0
#define CROSSBOW_PER_ISA(...) baseline::__VA_ARGS__
#endif

// For a single function that calls AVX-512 intrinsics itself (and runs only where
// CpuHasAvx512() says so, or on AMX CPUs, which have it): its own target.
#define CROSSBOW_AVX512 __attribute__((target("avx512f,avx512bw")))

#endif  // CROSSBOW_CORE_PER_ISA_H_

#ifdef CROSSBOW_PER_ISA_FILE
namespace crossbow {
namespace {
namespace baseline {
#include CROSSBOW_PER_ISA_FILE
}  // namespace baseline
}  // namespace
}  // namespace crossbow
#if CROSSBOW_HAS_AVX512_COPY
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512cd,avx512dq,avx512vl")
namespace crossbow {
namespace {
namespace avx512 {
#include CROSSBOW_PER_ISA_FILE
}  // namespace avx512
}  // namespace
}  // namespace crossbow
#pragma GCC pop_options
#endif
#undef CROSSBOW_PER_ISA_FILE
#endif
