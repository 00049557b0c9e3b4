// JPEGs decoded at a fraction of their size: the header read, the reduction chosen, and
// outputs that agree with decoding the whole image.
#include <gtest/gtest.h>

#include <cmath>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include "data/image_decode.h"
#include "data/transforms.h"
#include "data_test_util.h"

namespace crossbow::data {
namespace {

// A smooth colour picture with some texture, the kind of content photographs have.
std::vector<unsigned char> Jpeg(int height, int width, std::vector<int> params = {}) {
  cv::Mat image(height, width, CV_8UC3);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      image.at<cv::Vec3b>(y, x) =
          cv::Vec3b(static_cast<uchar>(128 + 100 * std::sin(x * 0.02)),
                    static_cast<uchar>(128 + 100 * std::cos(y * 0.03)),
                    static_cast<uchar>((x + 2 * y) % 256 / 2 + 60 + 20 * std::sin(x * y * 0.001)));
    }
  }
  std::vector<unsigned char> bytes;
  cv::imencode(".jpg", image, bytes, params);
  return bytes;
}

std::string AsString(const std::vector<unsigned char>& bytes) {
  return std::string(bytes.begin(), bytes.end());
}

TEST(ReducedDecode, JpegSizeReadsTheFrameHeader) {
  int height = 0, width = 0;
  ASSERT_TRUE(JpegSize(AsString(Jpeg(200, 333)), &height, &width));
  EXPECT_EQ(height, 200);
  EXPECT_EQ(width, 333);
  ASSERT_TRUE(JpegSize(AsString(Jpeg(64, 48, {cv::IMWRITE_JPEG_PROGRESSIVE, 1})), &height, &width));
  EXPECT_EQ(height, 64);
  EXPECT_EQ(width, 48);
  EXPECT_FALSE(JpegSize(AsString(testing::TinyPng()), &height, &width));
  EXPECT_FALSE(JpegSize(AsString(Jpeg(200, 333)).substr(0, 20), &height, &width)) << "cut short";
}

TEST(ReducedDecode, TheReductionKeepsAtLeastTheNeededSide) {
  EXPECT_EQ(JpegReduction(500, 146), 2);   // 250 >= 146 > 125
  EXPECT_EQ(JpegReduction(1200, 146), 8);  // 150
  EXPECT_EQ(JpegReduction(160, 146), 1);
  EXPECT_EQ(JpegReduction(581, 146), 4);  // ceil(581 / 4) = 146, rounded up as libjpeg does
  EXPECT_EQ(JpegReduction(580, 146), 2);  // 145
}

std::vector<float> Apply(const TransformConfig& config, const Datum& datum, uint64_t seed) {
  Transformer transformer(config, datum);
  std::vector<float> out(transformer.output_size());
  std::string error;
  EXPECT_TRUE(transformer.Apply(datum, seed, out.data(), &error)) << error;
  return out;
}

double MeanAbsDifference(const std::vector<float>& a, const std::vector<float>& b) {
  double sum = 0;
  for (size_t i = 0; i < a.size(); ++i) sum += std::abs(a[i] - b[i]);
  return sum / a.size();
}

TEST(ReducedDecode, OutputsAgreeWithDecodingTheWholeImage) {
  const Datum datum = testing::EncodedDatum(Jpeg(640, 480));
  TransformConfig eval;
  eval.train = false;
  eval.resize = 146;
  eval.crop = 128;
  TransformConfig train;
  train.crop = 64;
  train.random_resized_crop = true;
  train.mirror = true;
  for (const TransformConfig& base : {eval, train}) {
    for (uint64_t seed = 0; seed < 6; ++seed) {
      TransformConfig whole = base;
      whole.reduced_decode = false;
      const std::vector<float> reduced = Apply(base, datum, seed), full = Apply(whole, datum, seed);
      ASSERT_EQ(reduced.size(), full.size());
      // Pixels in [0, 1]. The two differ by the filtering: libjpeg's DCT scaling against
      // area interpolation, and window edges rounded to a reduced pixel. Evaluation shrinks a
      // further 2x after the reduced decode and agrees within 1.5/255 on average; a
      // random-resized window, resized by as little as 1x after it, within 5/255; another
      // seed's window differs by more.
      const double difference = MeanAbsDifference(reduced, full);
      EXPECT_LT(difference, (base.train ? 5.0 : 1.5) / 255)
          << "train " << base.train << ", seed " << seed;
      if (!base.train) EXPECT_GT(difference, 0) << "the reduced path was not taken";
      if (base.train) {
        EXPECT_GT(MeanAbsDifference(reduced, Apply(whole, datum, seed + 1)), 5.0 / 255);
      }
    }
  }
  // The evaluation transform of this image does decode reduced: at 1/2, 320 >= 146.
  cv::Mat image;
  std::string error;
  ASSERT_TRUE(DecodeDatum(datum, 3, false, &image, &error, 2)) << error;
  EXPECT_EQ(image.rows, 320);
  EXPECT_EQ(image.cols, 240);
}

}  // namespace
}  // namespace crossbow::data
