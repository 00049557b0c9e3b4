// JPEGs decoded in part: the header read, the reduction chosen, the region decoder's pixels
// against OpenCV's whole decode, and transform outputs that agree with decoding the whole image.
#include <gtest/gtest.h>

#include <cmath>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include "data/image_decode.h"
#include "data/jpeg_region.h"
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

TEST(PartialDecode, JpegSizeReadsTheFrameHeader) {
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

TEST(PartialDecode, TheReductionKeepsAtLeastTheNeededSide) {
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

TEST(PartialDecode, OutputsAgreeWithDecodingTheWholeImage) {
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
      // seed's window differs by more. Neither is equal: the smallest window (8% of the image,
      // 136 pixels a side) is decoded at half size or less for a crop of 64.
      const double difference = MeanAbsDifference(reduced, full);
      EXPECT_LT(difference, (base.train ? 5.0 : 1.5) / 255)
          << "train " << base.train << ", seed " << seed;
      EXPECT_GT(difference, 0) << "the reduced path was not taken; train " << base.train;
      if (base.train) {
        EXPECT_GT(MeanAbsDifference(reduced, Apply(whole, datum, seed + 1)), 5.0 / 255);
      }
    }
  }
}

// OpenCV's whole decode at the region's reduction, in its channel order, cropped to its window.
cv::Mat WholeThenCropped(const std::vector<unsigned char>& bytes, const JpegRegion& region) {
  const int flags = region.channels == 1   ? cv::IMREAD_GRAYSCALE
                    : region.channels == 3 ? cv::IMREAD_COLOR
                                           : cv::IMREAD_ANYCOLOR;
  const int reduced = region.reduction == 1 ? 0 : region.reduction * 8;  // IMREAD_REDUCED_*
  cv::Mat whole = cv::imdecode(bytes, flags | reduced);
  EXPECT_EQ(whole.rows, region.rows);
  EXPECT_EQ(whole.cols, region.cols);
  if (region.rgb && whole.channels() == 3) cv::cvtColor(whole, whole, cv::COLOR_BGR2RGB);
  return whole(region.window).clone();
}

JpegRegion Region(int height, int width, int reduction, cv::Rect window, int channels = 3,
                  bool rgb = false) {
  JpegRegion region;
  region.reduction = reduction;
  region.rows = (height + reduction - 1) / reduction;
  region.cols = (width + reduction - 1) / reduction;
  region.window = window & cv::Rect(0, 0, region.cols, region.rows);
  region.channels = channels;
  region.rgb = rgb;
  return region;
}

bool DecodeRegion(const std::vector<unsigned char>& bytes, const JpegRegion& region, cv::Mat* out) {
  return DecodeJpegRegion(AsString(bytes), region, out);
}

std::vector<unsigned char> GrayJpeg(int height, int width) {
  cv::Mat colour = cv::imdecode(Jpeg(height, width), cv::IMREAD_COLOR), gray;
  cv::cvtColor(colour, gray, cv::COLOR_BGR2GRAY);
  std::vector<unsigned char> bytes;
  cv::imencode(".jpg", gray, bytes);
  return bytes;
}

TEST(PartialDecode, RegionsHoldTheWholeDecodesPixelsExactly) {
  const int height = 389, width = 523;  // no side a multiple of an iMCU
  const std::vector<std::pair<std::string, std::vector<unsigned char>>> images = {
      {"baseline 4:2:0", Jpeg(height, width)},
      {"progressive", Jpeg(height, width, {cv::IMWRITE_JPEG_PROGRESSIVE, 1})},
      {"grayscale", GrayJpeg(height, width)}};
  // Whole, corners, an interior window off every iMCU boundary, one pixel, a full-width band.
  const std::vector<cv::Rect> windows = {{0, 0, 600, 400},  {0, 0, 37, 21}, {300, 200, 300, 200},
                                         {13, 29, 101, 77}, {7, 11, 1, 1},  {0, 150, 600, 9}};
  for (const auto& [name, bytes] : images) {
    for (int reduction : {1, 2, 4, 8}) {
      for (const cv::Rect& w : windows) {
        for (auto [channels, rgb] : {std::pair{3, false}, {3, true}, {1, false}, {0, false}}) {
          const cv::Rect scaled(w.x / reduction, w.y / reduction, std::max(1, w.width / reduction),
                                std::max(1, w.height / reduction));
          const JpegRegion region = Region(height, width, reduction, scaled, channels, rgb);
          cv::Mat part;
          ASSERT_TRUE(DecodeRegion(bytes, region, &part))
              << name << ", 1/" << reduction << ", window " << region.window;
          const cv::Mat expected = WholeThenCropped(bytes, region);
          ASSERT_EQ(part.size(), expected.size());
          ASSERT_EQ(part.channels(), expected.channels()) << name << ", channels " << channels;
          EXPECT_EQ(cv::norm(part, expected, cv::NORM_INF), 0)
              << name << ", 1/" << reduction << ", window " << region.window << ", channels "
              << channels << (rgb ? " RGB" : " BGR");
        }
      }
    }
  }
}

// An APP1 Exif segment whose first IFD holds only the orientation tag, after the SOI marker.
std::vector<unsigned char> WithOrientation(std::vector<unsigned char> jpeg, int orientation) {
  const std::vector<unsigned char> tiff = {'I',
                                           'I',
                                           42,
                                           0,
                                           8,
                                           0,
                                           0,
                                           0,  // little-endian header
                                           1,
                                           0,  // one entry
                                           0x12,
                                           0x01,
                                           3,
                                           0,
                                           1,
                                           0,
                                           0,
                                           0,  // tag, SHORT, count 1
                                           static_cast<unsigned char>(orientation),
                                           0,
                                           0,
                                           0,
                                           0,
                                           0,
                                           0,
                                           0};  // no next IFD
  std::vector<unsigned char> segment = {0xFF, 0xE1, 0, 0, 'E', 'x', 'i', 'f', 0, 0};
  segment.insert(segment.end(), tiff.begin(), tiff.end());
  segment[3] = static_cast<unsigned char>(segment.size() - 2);
  jpeg.insert(jpeg.begin() + 2, segment.begin(), segment.end());
  return jpeg;
}

TEST(PartialDecode, DeclinesWhatOnlyTheWholeDecodeGetsRight) {
  const std::vector<unsigned char> jpeg = Jpeg(120, 160);
  const JpegRegion region = Region(120, 160, 1, {10, 10, 50, 40});
  cv::Mat part;
  EXPECT_TRUE(DecodeRegion(WithOrientation(jpeg, 1), region, &part)) << "upright";
  // OpenCV turns an image by its EXIF orientation; the window is of the stored pixels.
  EXPECT_FALSE(DecodeRegion(WithOrientation(jpeg, 6), region, &part)) << "rotated";
  EXPECT_FALSE(DecodeRegion(testing::TinyPng(), region, &part)) << "not a JPEG";
  const std::vector<unsigned char> cut(jpeg.begin(), jpeg.begin() + jpeg.size() / 2);
  EXPECT_FALSE(DecodeRegion(cut, Region(120, 160, 1, {10, 100, 50, 20}), &part))
      << "the window lies past the end of a cut-short file (libjpeg warns and fills grey)";
  JpegRegion wrong_size = region;
  wrong_size.rows = 119;
  EXPECT_FALSE(DecodeRegion(jpeg, wrong_size, &part)) << "a size other than the header's";
  JpegRegion outside = region;
  outside.window = {150, 10, 20, 20};
  EXPECT_FALSE(DecodeRegion(jpeg, outside, &part)) << "a window past the right edge";
}

TEST(PartialDecode, TheTransformsOutputIsTheWholeImagesExactly) {
  // The same pixels as a PNG, which only the whole-image path decodes: at reduction 1 the
  // partial decode must give the very same floats, crop for crop.
  const std::vector<unsigned char> jpeg = Jpeg(333, 250);
  std::vector<unsigned char> png;
  cv::imencode(".png", cv::imdecode(jpeg, cv::IMREAD_COLOR), png);
  TransformConfig train;
  train.crop = 96;
  train.random_resized_crop = true;
  train.mirror = true;
  train.rgb = true;
  train.reduced_decode = false;
  for (uint64_t seed = 0; seed < 8; ++seed) {
    EXPECT_EQ(Apply(train, testing::EncodedDatum(jpeg), seed),
              Apply(train, testing::EncodedDatum(png), seed))
        << "seed " << seed;
  }
}

}  // namespace
}  // namespace crossbow::data
