// MakeSource, the LMDB source of `crossbow train` and crossbow_train: what each training option
// does to it, and the table's defaults for those left out.
#include "crossbow/train/make_source.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "crossbow/train/trainer_options.h"
#include "data_test_util.h"
#include "tests/cpp/expect_error.h"

namespace crossbow {
namespace {

using crossbow::testing::ErrorOf;
using nlohmann::json;

// 16 raw 8x8 records, record i of one grey level 10 i and label i.
class MakeSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::vector<std::string> values;
    for (int i = 0; i < 16; ++i) {
      values.push_back(data::SerializeDatum(data::testing::RawDatum(
          3, 8, 8, [i](int, int, int) { return 10 * i; }, i)));
    }
    data::testing::WriteDb(db_, values);
  }

  // The labels of one epoch, batch by batch, and the first pixel of each batch's first image.
  static std::vector<int> EpochLabels(BatchSource* source, std::vector<float>* first_pixels) {
    std::vector<int> labels;
    for (bool last = false; !last;) {
      const Batch* batch = source->Acquire();
      labels.insert(labels.end(), batch->labels, batch->labels + batch->size);
      if (first_pixels) first_pixels->push_back(batch->images[0]);
      last = batch->last_in_epoch;
      source->Release(batch);
    }
    return labels;
  }

  data::testing::TempDir dir_;
  const std::string db_ = dir_ / "db";
};

TEST_F(MakeSourceTest, IsNullWithoutADbAndRefusesAutoForAPresetOnlyTheFrontEndKnows) {
  EXPECT_EQ(MakeSource("", true, R"({"augment": "none"})", 8), nullptr);
  const std::string error = ErrorOf([&] { MakeSource(db_, true, "{}", 8); });  // auto: default
  EXPECT_NE(error.find("--augment auto means the net's preset, and a spec does not name it"),
            std::string::npos)
      << error;
  EXPECT_NE(ErrorOf([&] {
              MakeSource(db_, true, R"({"augment": "cifr"})", 8);
            }).find("unknown input preset 'cifr'; did you mean 'cifar'?"),
            std::string::npos);
}

TEST_F(MakeSourceTest, TrainingShufflesBySeedAndEvaluationReadsInOrder) {
  const std::string options = R"({"augment": "none", "batch_size": 4, "seed": 3})";
  auto test = MakeSource(db_, false, options, 8);
  EXPECT_EQ(test->ExampleShape(), (Shape{3, 8, 8}));
  EXPECT_EQ(test->batch_size(), 4);
  std::vector<int> in_order(16);
  for (int i = 0; i < 16; ++i) in_order[i] = i;
  EXPECT_EQ(EpochLabels(test.get(), nullptr), in_order);
  const std::vector<int> shuffled = EpochLabels(MakeSource(db_, true, options, 8).get(), nullptr);
  EXPECT_NE(shuffled, in_order);
  EXPECT_TRUE(std::is_permutation(shuffled.begin(), shuffled.end(), in_order.begin()));
  EXPECT_EQ(EpochLabels(MakeSource(db_, true, options, 8).get(), nullptr), shuffled);
  const std::string seed_4 = R"({"augment": "none", "batch_size": 4, "seed": 4})";
  EXPECT_NE(EpochLabels(MakeSource(db_, true, seed_4, 8).get(), nullptr), shuffled);
}

TEST_F(MakeSourceTest, OptionsLeftOutAreTheTablesDefaults) {
  int64_t batch_size = 0;
  for (const TrainerOption& o : TrainerOptionTable()) {
    if (o.name == "batch_size") batch_size = json::parse(o.default_json);
  }
  ASSERT_GT(batch_size, 4);
  EXPECT_EQ(MakeSource(db_, false, R"({"augment": "none"})", 8)->batch_size(), batch_size);
}

TEST_F(MakeSourceTest, MeanAndStdOverrideThePresetsStatistics) {
  std::vector<float> plain, normalised;
  auto source = MakeSource(db_, false, R"({"augment": "none", "batch_size": 4})", 8);
  EpochLabels(source.get(), &plain);
  source = MakeSource(
      db_, false,
      R"({"augment": "none", "batch_size": 4, "mean": [0.5, 0.5, 0.5], "std": [0.25, 0.25, 0.25]})",
      8);
  EpochLabels(source.get(), &normalised);
  ASSERT_EQ(plain.size(), 4u);
  ASSERT_EQ(normalised.size(), 4u);
  for (int b = 0; b < 4; ++b) {
    EXPECT_FLOAT_EQ(plain[b], 40 * b / 255.0f);  // records 0, 4, 8, 12 start the batches
    // The loader's fused (pixel * scale - mean) / std rounds otherwise; a grey level is 0.016.
    EXPECT_NEAR(normalised[b], (40 * b / 255.0f - 0.5f) / 0.25f, 1e-5);
  }
}

TEST_F(MakeSourceTest, MinCropAreaIsTrainingsAlone) {
  // imagenet evaluates without a random-resized crop, which would refuse it.
  const std::string imagenet = R"({"augment": "imagenet", "min_crop_area": 0.5})";
  EXPECT_NE(MakeSource(db_, false, imagenet, 8), nullptr);
  EXPECT_NE(MakeSource(db_, true, imagenet, 8), nullptr);
  const std::string error =
      ErrorOf([&] { MakeSource(db_, true, R"({"augment": "cifar", "min_crop_area": 0.5})", 8); });
  EXPECT_NE(error.find("min_crop_area sets the random-resized crop, and this transform has none "
                       "(preset 'cifar', training)"),
            std::string::npos)
      << error;
}

TEST_F(MakeSourceTest, LabelsAreCheckedAgainstNumClasses) {
  auto source = MakeSource(db_, false, R"({"augment": "none", "num_classes": 2})", 8);
  const std::string error = ErrorOf([&] { EpochLabels(source.get(), nullptr); });
  EXPECT_NE(error.find(db_ + ": record 000000"), std::string::npos) << error;
  EXPECT_NE(error.find(", outside [0, 2) for a net of 2 classes"), std::string::npos) << error;
}

}  // namespace
}  // namespace crossbow
