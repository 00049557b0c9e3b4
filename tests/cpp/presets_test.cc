// The input presets against torchvision's definitions: the parameters each one sets, and what
// they make of fixed inputs.
#include "data/presets.h"

#include <gtest/gtest.h>

#include "data_test_util.h"
#include "tests/cpp/expect_error.h"

namespace crossbow::data {
namespace {

using crossbow::testing::ErrorOf;

using testing::RawDatum;

// A raw BGR record of one colour: blue 10, green 100, red 200.
Datum Solid(int height, int width) {
  const int bgr[3] = {10, 100, 200};
  return RawDatum(3, height, width, [&](int c, int, int) { return bgr[c]; });
}

TEST(Presets, EveryNameMakesATrainingAndAnEvaluationTransform) {
  EXPECT_EQ(PresetNames(), (std::vector<std::string>{"cifar", "imagenet", "mnist", "none"}));
  for (const std::string& name : PresetNames()) {
    for (bool train : {true, false}) {
      const TransformConfig t = PresetTransform(name, train, 32);
      EXPECT_EQ(t.train, train);
      EXPECT_EQ(t.preset, name);
    }
  }
  const std::string error = ErrorOf([] { PresetTransform("imagenett", true, 224); });
  EXPECT_NE(error.find("unknown input preset 'imagenett'; did you mean 'imagenet'?"),
            std::string::npos)
      << error;
}

TEST(Presets, CifarIsPadFourRandomCropMirrorWithTheCifarStatistics) {
  const TransformConfig train = PresetTransform("cifar", true, 32),
                        test = PresetTransform("cifar", false, 32);
  EXPECT_EQ(train.pad, 4);
  EXPECT_EQ(train.crop, 32);
  EXPECT_TRUE(train.mirror && train.rgb);
  EXPECT_EQ(test.pad, 0);
  EXPECT_FALSE(test.mirror);
  EXPECT_EQ(train.mean, (std::vector<float>{0.4914f, 0.4822f, 0.4465f}));
  EXPECT_EQ(train.std, (std::vector<float>{0.2470f, 0.2435f, 0.2616f}));
  // torchvision: ToTensor() then Normalize(mean, std), channels in RGB order.
  Transformer transformer(test, Solid(32, 32));
  std::vector<float> out(transformer.output_size());
  std::string error;
  ASSERT_TRUE(transformer.Apply(Solid(32, 32), 0, out.data(), &error)) << error;
  EXPECT_FLOAT_EQ(out[0], (200 / 255.f - 0.4914f) / 0.2470f);           // red first
  EXPECT_FLOAT_EQ(out[2 * 32 * 32], (10 / 255.f - 0.4465f) / 0.2616f);  // blue last
}

TEST(Presets, CifarRefusesImagesOfAnotherSizeNamingTheFix) {
  const std::string error =
      ErrorOf([] { Transformer(PresetTransform("cifar", true, 32), Solid(160, 213)); });
  EXPECT_NE(error.find("image is 160x213; preset 'cifar' takes 32x32 images"), std::string::npos)
      << error;
  EXPECT_NE(error.find("--augment imagenet"), std::string::npos) << error;
}

TEST(Presets, ImagenetIsRandomResizedCropAndResizeOverPoint875ThenCentreCrop) {
  const TransformConfig train = PresetTransform("imagenet", true, 224);
  EXPECT_TRUE(train.random_resized_crop && train.mirror && train.rgb);
  EXPECT_EQ(train.crop, 224);
  EXPECT_FLOAT_EQ(train.min_area, 0.08f);
  EXPECT_FLOAT_EQ(train.max_area, 1.0f);
  EXPECT_FLOAT_EQ(train.min_ratio, 3.0f / 4.0f);
  EXPECT_FLOAT_EQ(train.max_ratio, 4.0f / 3.0f);
  EXPECT_EQ(train.mean, (std::vector<float>{0.485f, 0.456f, 0.406f}));
  EXPECT_EQ(train.std, (std::vector<float>{0.229f, 0.224f, 0.225f}));
  EXPECT_EQ(PresetTransform("imagenet", false, 224).resize, 256);  // Resize(256), CenterCrop(224)
  EXPECT_EQ(PresetTransform("imagenet", false, 128).resize, 146);
  EXPECT_FALSE(PresetTransform("imagenet", false, 128).random_resized_crop);
  // Any record size: both transforms give size x size, colour in RGB, normalised.
  for (bool is_train : {true, false}) {
    const TransformConfig t = PresetTransform("imagenet", is_train, 64);
    Transformer transformer(t, Solid(100, 150));
    EXPECT_EQ(transformer.output_shape(), (Shape{3, 64, 64}));
    for (const Datum& datum : {Solid(100, 150), Solid(300, 90), Solid(64, 64)}) {
      std::vector<float> out(transformer.output_size());
      std::string error;
      ASSERT_TRUE(transformer.Apply(datum, 7, out.data(), &error)) << error;
      EXPECT_NEAR(out[64 * 32 + 32], (200 / 255.f - 0.485f) / 0.229f, 1e-5);
    }
  }
}

TEST(Presets, MnistIsOneChannelWithTheMnistStatistics) {
  const TransformConfig t = PresetTransform("mnist", true, 28);
  EXPECT_EQ(t.channels, 1);
  EXPECT_EQ(t.mean, (std::vector<float>{0.1307f}));
  EXPECT_EQ(t.std, (std::vector<float>{0.3081f}));
  EXPECT_FALSE(t.mirror);
}

}  // namespace
}  // namespace crossbow::data
