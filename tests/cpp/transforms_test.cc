#include "data/transforms.h"

#include <gtest/gtest.h>

#include <set>

#include "data_test_util.h"

namespace crossbow::data {
namespace {

using testing::EncodedDatum;
using testing::RawDatum;
using testing::TinyPng;

std::vector<float> Transform(const TransformConfig& config, const Datum& datum, uint64_t seed = 0) {
  Transformer transformer(config, datum);
  std::vector<float> out(transformer.output_size());
  std::string error;
  EXPECT_TRUE(transformer.Apply(datum, seed, out.data(), &error)) << error;
  return out;
}

TransformConfig Plain(bool train) {
  TransformConfig config;
  config.train = train;
  config.scale = 1;
  return config;
}

const auto kIndex = [](int c, int y, int x) { return 100 * c + 10 * y + x; };

TEST(TransformsTest, CentreCropAtTestTime) {
  TransformConfig config = Plain(false);
  config.crop = 3;
  EXPECT_EQ(Transform(config, RawDatum(1, 5, 5, kIndex)),
            (std::vector<float>{11, 12, 13, 21, 22, 23, 31, 32, 33}));
}

// With pad 1 and crop 4 of a 4x4 image every random crop is one of 9 shifted windows whose
// uncovered part is zero, and over many seeds each of them occurs.
TEST(TransformsTest, PaddedRandomCropTakesEveryPosition) {
  TransformConfig config = Plain(true);
  config.pad = 1;
  config.crop = 4;
  const Datum datum = RawDatum(1, 4, 4, kIndex);
  std::set<std::pair<int, int>> seen;
  for (uint64_t seed = 0; seed < 200; ++seed) {
    const std::vector<float> out = Transform(config, datum, seed);
    bool matched = false;
    for (int dy = -1; dy <= 1; ++dy) {
      for (int dx = -1; dx <= 1; ++dx) {
        std::vector<float> expected;
        for (int y = 0; y < 4; ++y) {
          for (int x = 0; x < 4; ++x) {
            const int sy = y + dy, sx = x + dx;
            expected.push_back(sy >= 0 && sy < 4 && sx >= 0 && sx < 4 ? kIndex(0, sy, sx) : 0);
          }
        }
        if (out == expected) {
          seen.insert({dy, dx});
          matched = true;
        }
      }
    }
    EXPECT_TRUE(matched) << "seed " << seed << " gave a crop that is no padded window";
  }
  EXPECT_EQ(seen.size(), 9u);
}

TEST(TransformsTest, MirrorFlipsHalfTheTime) {
  TransformConfig config = Plain(true);
  config.mirror = true;
  const Datum datum = RawDatum(3, 1, 3, kIndex);
  const std::vector<float> identity = {0, 1, 2, 100, 101, 102, 200, 201, 202};
  const std::vector<float> flipped = {2, 1, 0, 102, 101, 100, 202, 201, 200};
  int flips = 0;
  for (uint64_t seed = 0; seed < 100; ++seed) {
    const std::vector<float> out = Transform(config, datum, seed);
    ASSERT_TRUE(out == identity || out == flipped) << "seed " << seed;
    flips += out == flipped;
  }
  EXPECT_GT(flips, 30);
  EXPECT_LT(flips, 70);
  config.train = false;  // never at test time
  for (uint64_t seed = 0; seed < 20; ++seed) EXPECT_EQ(Transform(config, datum, seed), identity);
}

TEST(TransformsTest, PerChannelMeanStdAndMeanImage) {
  TransformConfig config = Plain(false);
  config.scale = 0.5f;
  config.mean = {1, 2, 4};
  config.std = {2, 4, 8};
  const Datum datum = RawDatum(3, 1, 2, kIndex);  // pixels 0 1 | 100 101 | 200 201
  EXPECT_EQ(Transform(config, datum),
            (std::vector<float>{-0.5f, -0.25f, 12, 12.125f, 12, 12.0625f}));
  config.mean.clear();
  config.mean_image = {0, 1, 2, 3, 4, 5};
  EXPECT_EQ(Transform(config, datum), (std::vector<float>{0, -0.25f, 12, 11.875f, 12, 11.9375f}));
}

TEST(TransformsTest, ResizeShorterSideThenCentreCrop) {
  TransformConfig config = Plain(false);
  config.resize = 2;
  config.crop = 2;
  // 2x2 blocks of one value each: shrinking by 2 (area interpolation) gives those values.
  const Datum datum = RawDatum(1, 4, 8, [](int, int y, int x) { return 10 * (y / 2) + x / 2; });
  EXPECT_EQ(Transform(config, datum), (std::vector<float>{1, 2, 11, 12}));
}

TEST(TransformsTest, DecodesPngInColourOrderAndGray) {
  TransformConfig config = Plain(false);
  const Datum png = EncodedDatum(TinyPng());
  config.rgb = true;
  const std::vector<float> rgb = Transform(config, png);
  ASSERT_EQ(rgb.size(), 18u);
  EXPECT_EQ(std::vector<float>(rgb.begin(), rgb.begin() + 6),
            (std::vector<float>{0, 1, 2, 10, 11, 12}));  // R plane
  EXPECT_EQ(rgb[6 + 4], 111);                            // G at (1, 1)
  EXPECT_EQ(rgb[12 + 5], 203);                           // B at (1, 2)
  config.rgb = false;
  EXPECT_EQ(Transform(config, png)[5], 203);  // B plane first, as Caffe decodes
  config.channels = 1;
  const std::vector<float> gray = Transform(config, png);
  ASSERT_EQ(gray.size(), 6u);
  EXPECT_NEAR(gray[0], 0.299 * 0 + 0.587 * 100 + 0.114 * 200, 1.0);
}

TEST(TransformsTest, RawAndEncodedRecordsOfTheSamePixelsFollowRgbAlike) {
  // TinyPng's pixels as a raw record holds them: B, G, R planes (Caffe's order).
  const int bgr[3][2][3] = {{{200, 201, 202}, {201, 202, 203}},
                            {{100, 101, 102}, {110, 111, 112}},
                            {{0, 1, 2}, {10, 11, 12}}};
  const Datum raw = RawDatum(3, 2, 3, [&](int c, int y, int x) { return bgr[c][y][x]; });
  const Datum png = EncodedDatum(TinyPng());
  for (bool rgb : {false, true}) {
    TransformConfig config = Plain(false);
    config.rgb = rgb;
    EXPECT_EQ(Transform(config, raw), Transform(config, png)) << "rgb " << rgb;
    config.resize = 2;  // through OpenCV rather than read in place
    EXPECT_EQ(Transform(config, raw), Transform(config, png)) << "rgb " << rgb << ", resized";
  }
  TransformConfig config = Plain(false);
  config.rgb = true;
  EXPECT_EQ(Transform(config, raw)[0], 0) << "R plane first";
}

TEST(TransformsTest, RandomResizedCropIsDeterministicForASeed) {
  TransformConfig config;
  config.crop = 8;
  config.random_resized_crop = true;
  config.mirror = true;
  config.brightness = config.contrast = config.saturation = 0.4f;
  const Datum datum =
      RawDatum(3, 20, 30, [](int c, int y, int x) { return (c * 50 + y * x) % 256; });
  const std::vector<float> a = Transform(config, datum, 7);
  EXPECT_EQ(a.size(), 3u * 8 * 8);
  EXPECT_EQ(a, Transform(config, datum, 7));
  EXPECT_NE(a, Transform(config, datum, 8));
  // A constant image stays constant whatever the window.
  config.brightness = config.contrast = config.saturation = 0;
  for (float v : Transform(config, RawDatum(3, 20, 30, [](int, int, int) { return 51; }), 3)) {
    EXPECT_FLOAT_EQ(v, 0.2f);
  }
}

TEST(TransformsTest, CorruptRecordsAreReportedNotDecoded) {
  TransformConfig config = Plain(false);
  Transformer transformer(config, RawDatum(1, 2, 2, kIndex));
  std::vector<float> out(4);
  std::string error;
  Datum short_raw = RawDatum(1, 2, 2, kIndex);
  short_raw.data.pop_back();
  EXPECT_FALSE(transformer.Apply(short_raw, 0, out.data(), &error));
  EXPECT_FALSE(error.empty());
  std::vector<unsigned char> truncated(TinyPng().begin(), TinyPng().begin() + 50);
  EXPECT_FALSE(transformer.Apply(EncodedDatum(truncated), 0, out.data(), &error));
  EXPECT_NE(error.find("decode"), std::string::npos) << error;
  EXPECT_FALSE(transformer.Apply(RawDatum(1, 3, 3, kIndex), 0, out.data(), &error));
  EXPECT_NE(error.find("3x3"), std::string::npos) << error;
  // A DICOM preamble: OpenCV would hand it to a decoder that aborts on corrupt input.
  std::vector<unsigned char> dicom(128, 0);
  for (char c : std::string("DICM\x02\x00\x00\x00UL")) dicom.push_back(c);
  EXPECT_FALSE(transformer.Apply(EncodedDatum(dicom), 0, out.data(), &error));
  EXPECT_NE(error.find("not a JPEG, PNG, BMP, PNM, TIFF or WebP"), std::string::npos) << error;
}

TEST(TransformsTest, BadConfigNamesTheOption) {
  TransformConfig config = Plain(false);
  config.mean = {1, 2};
  try {
    Transformer(config, RawDatum(1, 2, 2, kIndex));
    FAIL() << "a 2-value mean for a 1-channel DB was accepted";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("mean"), std::string::npos) << e.what();
  }
  config.mean.clear();
  config.random_resized_crop = true;
  EXPECT_THROW(Transformer(config, RawDatum(1, 2, 2, kIndex)), ValueError);
}

}  // namespace
}  // namespace crossbow::data
