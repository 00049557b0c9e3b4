#include "data/mix.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "data/loader.h"
#include "data_test_util.h"
#include "tests/cpp/expect_error.h"

namespace crossbow::data {
namespace {

// Hoeffding: the mean of m draws of a variable in [0, 1] strays more than t from its
// expectation with probability at most 2 exp(-2 m t^2); t for a false failure of 1e-9.
double HoeffdingBound(int64_t m) { return std::sqrt(std::log(2e9) / (2.0 * m)); }

TEST(Mix, BetaDrawsHaveTheBetaMeanAndSecondMoment) {
  constexpr int64_t kDraws = 1'000'000;  // bound 0.0033
  const double t = HoeffdingBound(kDraws);
  for (double alpha : {0.2, 1.0, 4.0}) {
    SCOPED_TRACE(alpha);
    Rng rng(MixSeed(11, static_cast<uint64_t>(alpha * 10)));
    double sum = 0, squares = 0;
    for (int64_t i = 0; i < kDraws; ++i) {
      const double lam = SampleBeta(&rng, alpha);
      ASSERT_TRUE(lam >= 0 && lam <= 1) << lam;
      sum += lam;
      squares += lam * lam;
    }
    // Beta(a, a): mean 1/2, variance 1 / (4 (2a + 1)); lam^2 is in [0, 1] as well. The
    // second moments of the three alphas (0.43, 0.33, 0.28) lie far more than 2t apart.
    EXPECT_NEAR(sum / kDraws, 0.5, t);
    EXPECT_NEAR(squares / kDraws, 0.25 + 1.0 / (4.0 * (2.0 * alpha + 1.0)), t);
  }
}

TEST(Mix, ASmallAlphaStaysInsideZeroToOne) {
  constexpr int64_t kDraws = 10000;
  Rng rng(3);
  int64_t extreme = 0;
  for (int64_t i = 0; i < kDraws; ++i) {
    const double lam = SampleBeta(&rng, 0.01);
    ASSERT_TRUE(lam >= 0 && lam <= 1) << lam;  // no NaN where both gamma draws underflow
    extreme += lam < 1e-6 || lam > 1 - 1e-6;
  }
  // Beta(a, a) near 0: P(lam < x) = x^a / (a B(a, a)) (1 + O(x)); a = 0.01, B = 199.967, both
  // ends: 2 * 0.870963 / 1.99967 = 0.8711.
  EXPECT_NEAR(static_cast<double>(extreme) / kDraws, 0.8711, HoeffdingBound(kDraws));
}

TEST(Mix, EachBatchHasItsOwnStreamAndAPermutation) {
  const MixOptions mix{0.4, 0.0};
  const MixDraw a = DrawMix(mix, 5, 2, 7, 32, 8, 8), again = DrawMix(mix, 5, 2, 7, 32, 8, 8);
  EXPECT_EQ(a.perm, again.perm);
  EXPECT_EQ(a.lam, again.lam);
  std::set<double> lams;
  for (auto [seed, epoch, index] : {std::tuple{5, 2, 8}, {5, 3, 7}, {6, 2, 7}}) {
    lams.insert(DrawMix(mix, seed, epoch, index, 32, 8, 8).lam);
  }
  lams.insert(a.lam);
  EXPECT_EQ(lams.size(), 4u);
  EXPECT_EQ(std::set<int64_t>(a.perm.begin(), a.perm.end()).size(), 32u);
  EXPECT_FALSE(a.cutmix);
}

// Example i of a batch is the constant image i + 1: a mixed pixel says where it came from.
std::vector<float> ConstantImages(int64_t n, const Shape& example) {
  std::vector<float> images;
  for (int64_t i = 0; i < n; ++i) images.insert(images.end(), NumElements(example), i + 1.f);
  return images;
}

TEST(Mix, CutMixPastesABoxOfArea1MinusLamFromThePartner) {
  const Shape example = {2, 13, 17};
  const int64_t n = 4, pixels = 13 * 17;
  int64_t boxes_cut = 0;
  for (int64_t index = 0; index < 200; ++index) {
    const MixDraw draw = DrawMix({0.0, 1.0}, 9, 0, index, n, 13, 17);
    ASSERT_TRUE(draw.cutmix);
    std::vector<float> images = ConstantImages(n, example);
    std::vector<int32_t> labels = {10, 11, 12, 13}, labels_b(n);
    std::vector<float> lam(n);
    ApplyMix(draw, example, n, images.data(), labels.data(), labels_b.data(), lam.data());
    for (int64_t i = 0; i < n; ++i) {
      const int64_t j = draw.perm[i];
      EXPECT_EQ(labels_b[i], labels[j]);
      int64_t pasted = 0;  // pixels of plane 0 that came from the partner (i != j)
      for (int64_t k = 0; k < pixels; ++k) {
        const float v = images[i * 2 * pixels + k];
        ASSERT_TRUE(v == i + 1.f || v == j + 1.f);
        pasted += v == j + 1.f && i != j;
      }
      if (i != j) EXPECT_FLOAT_EQ(1.0 - static_cast<double>(pasted) / pixels, lam[i]);
      EXPECT_FLOAT_EQ(
          lam[i],
          1.0 - static_cast<double>((draw.bottom - draw.top) * (draw.right - draw.left)) / pixels);
    }
    boxes_cut += draw.lam < 1;
  }
  EXPECT_GT(boxes_cut, 150);  // Beta(1, 1): most boxes have pixels
}

TEST(Mix, BothAlphasTakeCutMixOnAboutHalfTheBatches) {
  int64_t cutmix = 0;
  constexpr int64_t kBatches = 20000;
  for (int64_t index = 0; index < kBatches; ++index) {
    cutmix += DrawMix({0.2, 1.0}, 1, 0, index, 2, 4, 4).cutmix;
  }
  EXPECT_NEAR(static_cast<double>(cutmix) / kBatches, 0.5, HoeffdingBound(kBatches));
}

TEST(Mix, BadAlphasAreValueErrorsNamingTheFlag) {
  EXPECT_ERROR(CheckMixOptions({-0.1, 0}), ValueError,
               "mixup_alpha (--mixup-alpha) must be finite and >= 0, got -0.1");
  EXPECT_ERROR(CheckMixOptions({0, std::nan("")}), ValueError,
               "cutmix_alpha (--cutmix-alpha) must be finite and >= 0, got nan");
}

// A loader restored from a saved state mixes the batches after it as the first one did.
TEST(Mix, AResumedLoaderMixesAsTheUninterruptedOneDid) {
  testing::TempDir dir;
  std::vector<std::string> records;
  for (int i = 0; i < 24; ++i) {
    records.push_back(SerializeDatum(testing::RawDatum(
        1, 3, 3, [i](int, int y, int x) { return (i * 11 + y * 3 + x) % 256; }, i % 10)));
  }
  testing::WriteDb(dir / "db", records);
  LoaderOptions o;
  o.path = dir / "db";
  o.batch_size = 4;
  o.seed = 8;
  o.transform.train = true;
  o.mix = {0.0, 1.0};
  auto take = [](ImageLoader* loader) {
    const Batch* b = loader->Acquire();
    std::vector<float> out(b->images, b->images + b->size * 9);
    out.insert(out.end(), b->lam, b->lam + b->size);
    loader->Release(b);
    return out;
  };
  ImageLoader first(o);
  for (int i = 0; i < 4; ++i) take(&first);
  const std::string state = first.SaveState();
  o.workers = 2;
  ImageLoader resumed(o);
  resumed.RestoreState(state);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(take(&resumed), take(&first)) << "batch " << i;
}

// The loader mixes each batch as DrawMix and ApplyMix do to the unmixed batch, whatever the
// worker count, and a test loader refuses to.
TEST(Mix, TheLoaderMixesEachBatchByItsPlaceInTheRun) {
  testing::TempDir dir;
  std::vector<std::string> records;
  for (int i = 0; i < 40; ++i) {
    records.push_back(SerializeDatum(testing::RawDatum(
        1, 4, 4, [i](int, int y, int x) { return (i * 7 + y * 4 + x) % 256; }, i % 10)));
  }
  const std::string path = dir / "db";
  testing::WriteDb(path, records);
  LoaderOptions o;
  o.path = path;
  o.batch_size = 8;
  o.seed = 21;
  o.transform.train = true;
  ImageLoader plain(o);
  o.workers = 3;
  o.mix = {0.5, 1.0};
  ImageLoader mixed(o);
  for (int b = 0; b < 10; ++b) {  // two epochs
    const Batch* p = plain.Acquire();
    const Batch* m = mixed.Acquire();
    ASSERT_EQ(p->size, m->size);
    ASSERT_EQ(m->index_in_epoch, p->index_in_epoch);
    ASSERT_EQ(p->labels_b, nullptr);
    std::vector<float> images(p->images, p->images + p->size * 16);
    std::vector<int32_t> labels_b(p->size);
    std::vector<float> lam(p->size);
    ApplyMix(DrawMix(o.mix, 21, p->epoch, p->index_in_epoch, p->size, 4, 4), {1, 4, 4}, p->size,
             images.data(), p->labels, labels_b.data(), lam.data());
    EXPECT_EQ(std::vector<float>(m->images, m->images + m->size * 16), images);
    EXPECT_EQ(std::vector<int32_t>(m->labels, m->labels + m->size),
              std::vector<int32_t>(p->labels, p->labels + p->size));
    EXPECT_EQ(std::vector<int32_t>(m->labels_b, m->labels_b + m->size), labels_b);
    EXPECT_EQ(std::vector<float>(m->lam, m->lam + m->size), lam);
    plain.Release(p);
    mixed.Release(m);
  }
  o.transform.train = false;
  EXPECT_ERROR(ImageLoader{o}, ValueError, "mix training batches; this loader is an evaluation's");
}

}  // namespace
}  // namespace crossbow::data
