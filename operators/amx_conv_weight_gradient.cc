#include "operators/amx_conv_weight_gradient.h"

#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "crossbow/core/per_isa.h"
#include "crossbow/core/precision.h"
#include "operators/parallel_threshold.h"

// The functions that use AVX-512 or AMX instructions carry their target; nothing here runs
// unless AmxTilesGranted().
#define CROSSBOW_AMX __attribute__((target("amx-tile,amx-bf16")))

namespace crossbow {

using dnnl::memory;

namespace {

constexpr int kTile = 16;  // rows of a tile, and fp32 columns of an accumulator
constexpr long kRequestTilePermission = 0x1023;  // arch_prctl(ARCH_REQ_XCOMP_PERM, ...)
constexpr long kTileDataFeature = 18;            // XFEATURE_XTILEDATA
constexpr __mmask32 kLowHalf = 0xffff;           // 16 of a register's 32 bf16 lanes

// ldtilecfg's 64-byte operand, palette 1.
struct alignas(64) TileConfig {
  uint8_t palette = 1, start_row = 0, reserved[14] = {};
  uint16_t bytes_per_row[16] = {};
  uint8_t rows[16] = {};
};

// Tiles 0-2: the accumulators of the three kernel columns v; 3: dY^T; 4-6: X's pairs at the
// three shifts.
CROSSBOW_AMX void ConfigureTiles() {
  TileConfig config;
  for (int t = 0; t < 7; ++t) {
    config.rows[t] = kTile;
    config.bytes_per_row[t] = 64;
  }
  // GCC 12 does not see ldtilecfg read the whole struct and drops these stores without this.
  asm volatile("" : : "r"(&config) : "memory");
  _tile_loadconfig(&config);
}

CROSSBOW_AMX void ReleaseTiles() { _tile_release(); }

// dW[o, i, u, v] for 16 output channels o, 16 input channels i, one u and the three v, as
// sums over the K values of `planes` pairs of images: `dy_t` holds the o's rows of dY^T
// (`dy_t_row` values apart, `plane` pairs of values to a pair of images), `x[v]` X's pairs
// of the i's at shift (u-1, v-1) (`x_plane` pairs of rows to a pair of images, rows `x_row`
// values apart), `dw` dW[o0, i0].
CROSSBOW_AMX void ProductTask(const uint16_t* dy_t, int64_t dy_t_row, int64_t planes, int64_t plane,
                              const uint16_t* const x[3], int64_t x_plane, int64_t x_row, int64_t c,
                              int64_t u, float* dw) {
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  for (int64_t image = 0; image < planes; ++image) {
    for (int64_t f = 0; f < plane; f += kTile) {
      _tile_loadd(3, dy_t + (image * plane + f) * 2, dy_t_row * 2);
      const int64_t at = (image * x_plane + f) * x_row;
      _tile_loadd(4, x[0] + at, x_row * 2);
      _tile_dpbf16ps(0, 3, 4);
      _tile_loadd(5, x[1] + at, x_row * 2);
      _tile_dpbf16ps(1, 3, 5);
      _tile_loadd(6, x[2] + at, x_row * 2);
      _tile_dpbf16ps(2, 3, 6);
    }
  }
  alignas(64) float sums[3][kTile][kTile];  // [v][output channel][input channel]
  _tile_stored(0, sums[0], 64);
  _tile_stored(1, sums[1], 64);
  _tile_stored(2, sums[2], 64);
  for (int o = 0; o < kTile; ++o) {
    for (int i = 0; i < kTile; ++i) {
      for (int v = 0; v < 3; ++v) dw[(o * c + i) * 9 + u * 3 + v] = sums[v][o][i];
    }
  }
}

// Lane indices for _mm512_permutex2var_epi16 (lane l of the result: bit 5 picks the second
// operand, bits 0-4 the lane): TransposeChunk's four stages, two results each, and the pairing
// of two positions' 16 channels.
struct LaneIndices {
  alignas(64) int16_t stage[4][2][32];
  alignas(64) int16_t pair[32];
  LaneIndices() {
    for (int s = 0; s < 4; ++s) {
      const int bit = 1 << s;
      for (int half = 0; half < 2; ++half) {
        for (int lane = 0; lane < 32; ++lane) {
          // The last stage also puts the lanes, then in the order (p0, p4, p3, p2, p1) of the
          // position's bits, back in the order p4..p0.
          const int from = s == 3 ? ((lane & 1) << 4) | (lane >> 1) : lane;
          stage[s][half][lane] =
              static_cast<int16_t>(((from & bit) ? 32 : 0) | (half ? from | bit : from & ~bit));
        }
      }
    }
    for (int lane = 0; lane < 32; ++lane)
      pair[lane] = static_cast<int16_t>(lane / 2 + (lane % 2 ? 32 : 0));
  }
};

const LaneIndices& Lanes() {
  static const LaneIndices lanes;
  return lanes;
}

// Transposes 32 values x 16 channels: r[j] holds values 2j and 2j+1 (16 channels each), and
// after it r[i] holds channel i of the 32 values. Each stage swaps one bit of the register
// index (a bit of the value's index) with one bit of the lane (a channel bit).
CROSSBOW_AVX512 void TransposeChunk(__m512i r[16]) {
  const LaneIndices& lanes = Lanes();
  for (int s = 0; s < 4; ++s) {
    const int bit = 1 << s;
    const __m512i first = _mm512_load_si512(lanes.stage[s][0]);
    const __m512i second = _mm512_load_si512(lanes.stage[s][1]);
    for (int j = 0; j < 16; ++j) {
      if (j & bit) continue;
      const __m512i a = r[j], b = r[j | bit];
      r[j] = _mm512_permutex2var_epi16(a, first, b);
      r[j | bit] = _mm512_permutex2var_epi16(a, second, b);
    }
  }
}

}  // namespace

AmxConvWeightGradient::FlatGeometry::FlatGeometry(const Shape& x)
    : image_pairs((x[0] + 1) / 2),
      row(x[3] + 1),
      plane((x[2] * row + kTile - 1) / kTile * kTile),
      lead(row + 1),
      x_plane(lead + plane + row + 1) {}

bool AmxTilesGranted() {
  static const bool granted =
      CpuHasAmx() && syscall(SYS_arch_prctl, kRequestTilePermission, kTileDataFeature) == 0;
  return granted;
}

void AmxConvWeightGradient::Build(const Shape& x, const Shape& w) {
  n_ = x[0];
  c_ = x[1];
  h_ = x[2];
  w_ = x[3];
  m_ = w[0];
  w_shape_ = w;
  flat_ = FlatGeometry(x);
  x_nhwc_ = dnnl_utils::ChannelsLastDesc(dnnl_utils::Dims(x), memory::data_type::bf16);
  dy_nhwc_ = dnnl_utils::ChannelsLastDesc({n_, m_, h_, w_}, memory::data_type::bf16);
}

int64_t AmxConvWeightGradient::PackBytes(const Shape& x, const Shape& w) {
  const FlatGeometry flat(x);
  const int64_t values = (w[0] * flat.plane + flat.x_plane * x[1]) * flat.image_pairs * 2;
  return values * static_cast<int64_t>(sizeof(uint16_t));
}

// dY^T [M, N/2, plane, 2]: 16 positions of a pair of images at a time, transposed in registers
// and stored row piece by row piece at their flat positions.
void AmxConvWeightGradient::PackDyT(const uint16_t* dy) {
  const int64_t chunks = (h_ * w_ + kTile - 1) / kTile;
#pragma omp parallel for schedule(static) collapse(3) if (m_ * n_ * h_ * w_ >= kMinParallelElements)
  for (int64_t block = 0; block < m_ / kTile; ++block) {
    for (int64_t pair = 0; pair < flat_.image_pairs; ++pair) {
      for (int64_t chunk = 0; chunk < chunks; ++chunk) PackDyTChunk(dy, block, pair, chunk * kTile);
    }
  }
  // The padding: the column after each row, the rows rounded up to the plane.
  const int64_t used = h_ * flat_.row;
#pragma omp parallel for schedule(static) if (m_ * flat_.image_pairs * h_ >= kMinParallelElements)
  for (int64_t plane = 0; plane < m_ * flat_.image_pairs; ++plane) {
    uint16_t* values = dy_t_ + plane * flat_.plane * 2;
    for (int64_t i = 0; i < h_; ++i) std::memset(values + (i * flat_.row + w_) * 2, 0, 4);
    std::memset(values + used * 2, 0, (flat_.plane - used) * 4);
  }
}

CROSSBOW_AVX512 void AmxConvWeightGradient::PackDyTChunk(const uint16_t* dy, int64_t block,
                                                         int64_t pair, int64_t first) {
  const int64_t positions = h_ * w_, count = std::min<int64_t>(kTile, positions - first);
  // r[j]: position first + j of the two images in the low and high 16 lanes.
  __m512i r[16];
  for (int j = 0; j < kTile; ++j) {
    const int64_t p = std::min(first + j, positions - 1);
    const uint16_t* from = dy + ((2 * pair) * positions + p) * m_ + block * kTile;
    r[j] = _mm512_maskz_loadu_epi16(j < count ? kLowHalf : 0, from);
    r[j] = _mm512_mask_loadu_epi16(r[j], j < count && 2 * pair + 1 < n_ ? ~kLowHalf : 0,
                                   from + positions * m_ - kTile);
  }
  TransposeChunk(r);
  uint16_t* rows = dy_t_ + block * kTile * DyTRow() + pair * flat_.plane * 2;
  for (int64_t lane = 0; lane < count;) {
    const int64_t i = (first + lane) / w_, j = (first + lane) % w_;
    const int64_t piece = std::min(count - lane, w_ - j);
    const auto mask = static_cast<__mmask32>(
        (piece == kTile ? 0xffffffffull : (1ull << 2 * piece) - 1) << 2 * lane);
    uint16_t* to = rows + (i * flat_.row + j - lane) * 2;
    for (int o = 0; o < kTile; ++o) _mm512_mask_storeu_epi16(to + o * DyTRow(), mask, r[o]);
    lane += piece;
  }
}

// X's pairs [N/2, lead + plane + ..., C, 2]: each position's C values of the two images
// interleaved.
void AmxConvWeightGradient::PackXPairs(const uint16_t* x) {
#pragma omp parallel for schedule(static) collapse(2) if (n_ * h_ * w_ * c_ >= kMinParallelElements)
  for (int64_t pair = 0; pair < flat_.image_pairs; ++pair) {
    for (int64_t i = 0; i < h_; ++i) PackXRow(x, pair, i);
  }
  // The padding before the first row and after the last.
  const int64_t after = flat_.lead + h_ * flat_.row;
  for (int64_t pair = 0; pair < flat_.image_pairs; ++pair) {
    uint16_t* plane = x_pairs_ + pair * flat_.x_plane * XRow();
    std::memset(plane, 0, flat_.lead * XRow() * 2);
    std::memset(plane + after * XRow(), 0, (flat_.x_plane - after) * XRow() * 2);
  }
}

CROSSBOW_AVX512 void AmxConvWeightGradient::PackXRow(const uint16_t* x, int64_t pair, int64_t i) {
  const __m512i interleave = _mm512_load_si512(Lanes().pair);
  const bool second = 2 * pair + 1 < n_;
  const uint16_t* first_row = x + ((2 * pair) * h_ + i) * w_ * c_;
  const uint16_t* second_row = first_row + h_ * w_ * c_;
  uint16_t* to = x_pairs_ + (pair * flat_.x_plane + flat_.lead + i * flat_.row) * XRow();
  for (int64_t at = 0; at < w_ * c_; at += kTile) {
    const __m512i a = _mm512_maskz_loadu_epi16(kLowHalf, first_row + at);
    const __m512i b =
        _mm512_maskz_loadu_epi16(second ? kLowHalf : 0, second ? second_row + at : first_row);
    _mm512_store_si512(to + at * 2, _mm512_permutex2var_epi16(a, interleave, b));
  }
  std::memset(to + w_ * XRow(), 0, XRow() * 2);  // the padding column
}

void AmxConvWeightGradient::Products(float* dw) const {
  const int64_t in_blocks = c_ / kTile, out_blocks = m_ / kTile, tasks = in_blocks * out_blocks * 3;
  const uint16_t *dy_t = dy_t_, *x_pairs = x_pairs_;
#pragma omp parallel if (tasks > 1)
  {
    ConfigureTiles();
#pragma omp for schedule(static)
    for (int64_t task = 0; task < tasks; ++task) {
      const int64_t u = task % 3, in = task / 3 % in_blocks, out = task / 3 / in_blocks;
      const uint16_t* x[3];
      for (int v = 0; v < 3; ++v)
        x[v] = x_pairs + (flat_.lead + (u - 1) * flat_.row + v - 1) * XRow() + in * kTile * 2;
      ProductTask(dy_t + out * kTile * DyTRow(), DyTRow(), flat_.image_pairs, flat_.plane, x,
                  flat_.x_plane, XRow(), c_, u, dw + (out * kTile * c_ + in * kTile) * 9);
    }
    ReleaseTiles();
  }
}

void AmxConvWeightGradient::Run(const Tensor& x, const Tensor& dy, Tensor* dw, CPUContext* ctx) {
  const Tensor& x_nhwc = x_to_nhwc_.As(x, x_nhwc_, &x_nhwc_scratch_, ctx);
  const Tensor& dy_nhwc = dy_to_nhwc_.As(dy, dy_nhwc_, &dy_nhwc_scratch_, ctx);
  // Every layer a thread runs packs into the same two buffers, which stay in its caches
  // between layers (per layer, they were written back to memory and read again a whole
  // iteration later, 6% of ResNet-32's step); the packs write every value, padding included.
  thread_local Tensor packed_dy_t, packed_x_pairs;
  packed_dy_t.Resize({m_, flat_.image_pairs, flat_.plane, 2}, DataType::kBFloat16);
  packed_x_pairs.Resize({flat_.image_pairs, flat_.x_plane, c_, 2}, DataType::kBFloat16);
  dy_t_ = static_cast<uint16_t*>(packed_dy_t.raw_data());
  x_pairs_ = static_cast<uint16_t*>(packed_x_pairs.raw_data());
  PackDyT(static_cast<const uint16_t*>(dy_nhwc.raw_data()));
  PackXPairs(static_cast<const uint16_t*>(x_nhwc.raw_data()));
  dw->Resize(w_shape_);
  Products(dw->mutable_data<float>());
}

}  // namespace crossbow
