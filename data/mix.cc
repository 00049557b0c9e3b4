#include "data/mix.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "crossbow/core/enforce.h"

namespace crossbow::data {
namespace {

// Separates the batches' mixing stream from the records' (seed, epoch, record) streams.
constexpr uint64_t kMixStream = 0x6d69787570ULL;  // "mixup"

// A standard normal draw (Box-Muller).
double Normal(Rng* rng) {
  const double u = 1.0 - rng->Uniform();  // (0, 1]: a finite log
  return std::sqrt(-2.0 * std::log(u)) * std::cos(2.0 * M_PI * rng->Uniform());
}

// log of a Gamma(a, 1) draw: Marsaglia and Tsang (2000) for a >= 1, and for a < 1 their boost
// Gamma(a) = Gamma(a + 1) U^(1/a), kept in logs.
double LogGamma(Rng* rng, double a) {
  if (a < 1) return LogGamma(rng, a + 1) + std::log(1.0 - rng->Uniform()) / a;
  const double d = a - 1.0 / 3.0, c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    double x, v;
    do {
      x = Normal(rng);
      v = 1.0 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const double u = 1.0 - rng->Uniform();
    if (std::log(u) < 0.5 * x * x + d * (1.0 - v + std::log(v))) return std::log(d * v);
  }
}

}  // namespace

double SampleBeta(Rng* rng, double alpha) {
  const double x = LogGamma(rng, alpha), y = LogGamma(rng, alpha);
  return 1.0 / (1.0 + std::exp(y - x));  // X / (X + Y)
}

void CheckMixOptions(const MixOptions& mix) {
  for (const auto& [flag, alpha] : {std::pair{"mixup_alpha (--mixup-alpha)", mix.mixup_alpha},
                                    std::pair{"cutmix_alpha (--cutmix-alpha)", mix.cutmix_alpha}}) {
    CROSSBOW_ENFORCE_VALUE(std::isfinite(alpha) && alpha >= 0, flag,
                           " must be finite and >= 0, got ", alpha);
  }
}

MixDraw DrawMix(const MixOptions& mix, uint64_t seed, int64_t epoch, int64_t index, int64_t n,
                int64_t height, int64_t width) {
  CheckMixOptions(mix);
  CROSSBOW_ENFORCE(mix.active(), "DrawMix needs mixup_alpha or cutmix_alpha above 0");
  Rng rng(MixSeed(MixSeed(seed, kMixStream), epoch, index));
  MixDraw draw;
  draw.cutmix = mix.mixup_alpha <= 0 || (mix.cutmix_alpha > 0 && rng.Uniform() < 0.5);
  draw.lam = SampleBeta(&rng, draw.cutmix ? mix.cutmix_alpha : mix.mixup_alpha);
  draw.perm.resize(n);
  for (int64_t i = 0; i < n; ++i) draw.perm[i] = i;
  for (int64_t i = n - 1; i > 0; --i) std::swap(draw.perm[i], draw.perm[rng.UniformInt(i + 1)]);
  if (draw.cutmix) {
    const double ratio = std::sqrt(1.0 - draw.lam);
    const int64_t cut_h = static_cast<int64_t>(height * ratio);
    const int64_t cut_w = static_cast<int64_t>(width * ratio);
    const int64_t cy = rng.UniformInt(height), cx = rng.UniformInt(width);
    draw.top = std::clamp<int64_t>(cy - cut_h / 2, 0, height);
    draw.bottom = std::clamp<int64_t>(cy + cut_h / 2, 0, height);
    draw.left = std::clamp<int64_t>(cx - cut_w / 2, 0, width);
    draw.right = std::clamp<int64_t>(cx + cut_w / 2, 0, width);
    const double box = static_cast<double>((draw.bottom - draw.top) * (draw.right - draw.left));
    draw.lam = 1.0 - box / static_cast<double>(height * width);
  }
  return draw;
}

void ApplyMix(const MixDraw& draw, const Shape& example, int64_t n, float* images,
              const int32_t* labels, int32_t* labels_b, float* lam) {
  CROSSBOW_ENFORCE(example.size() == 3 && static_cast<int64_t>(draw.perm.size()) == n,
                   "ApplyMix: a draw for ", draw.perm.size(), " examples of [C, H, W], got ", n,
                   " of ", ShapeString(example));
  const int64_t size = NumElements(example), height = example[1], width = example[2];
  const std::vector<float> original(images, images + n * size);
  const float own = static_cast<float>(draw.lam), other = 1.f - own;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t j = draw.perm[i];
    labels_b[i] = labels[j];
    lam[i] = own;
    float* out = images + i * size;
    const float* from = original.data() + j * size;
    if (!draw.cutmix) {
      for (int64_t k = 0; k < size; ++k) out[k] = own * out[k] + other * from[k];
      continue;
    }
    const int64_t span = draw.right - draw.left;
    for (int64_t plane = 0; plane < example[0]; ++plane) {
      for (int64_t y = draw.top; y < draw.bottom; ++y) {
        const int64_t at = (plane * height + y) * width + draw.left;
        std::memcpy(out + at, from + at, span * sizeof(float));
      }
    }
  }
}

}  // namespace crossbow::data
