// The engine on the real LMDB loader with many learners: every learner count trains, and the
// model equals the one trained on the same batches from memory.
#include <gtest/gtest.h>

#include "data/loader.h"
#include "data_test_util.h"
#include "engine_test_util.h"

namespace crossbow {
namespace {

constexpr int kRecords = 1024;

float Pixel(int record, int element) { return static_cast<float>((record * 7 + element) % 5); }
int Label(int record) { return record % 4; }

void WriteRecords(const std::string& path) {
  std::vector<std::string> values;
  for (int i = 0; i < kRecords; ++i) {
    values.push_back(data::SerializeDatum(data::testing::RawDatum(
        3, 8, 8,
        [i](int c, int y, int x) { return static_cast<int>(Pixel(i, c * 64 + y * 8 + x)); },
        Label(i))));
  }
  data::testing::WriteDb(path, values);
}

ArraySource SameRecordsInMemory(int64_t batch) {
  std::vector<float> images(kRecords * 192);
  std::vector<int32_t> labels(kRecords);
  for (int i = 0; i < kRecords; ++i) {
    labels[i] = Label(i);
    for (int j = 0; j < 192; ++j) images[i * 192 + j] = Pixel(i, j);
  }
  return ArraySource(std::move(images), std::move(labels), Shape{3, 8, 8}, batch);
}

class EngineOnLoader : public ::testing::TestWithParam<int> {};

TEST_P(EngineOnLoader, AnyLearnerCountTrainsAndMatchesTheMemorySource) {
  const int learners = GetParam();
  data::testing::TempDir dir;
  WriteRecords(dir / "db");
  data::LoaderOptions options;
  options.path = dir / "db";
  options.batch_size = 4;
  options.workers = 2;
  options.shuffle = false;  // the records' order, as the memory source serves them
  options.transform.scale = 1;
  options.num_classes = 4;
  data::ImageLoader loader(options);
  ArraySource memory = SameRecordsInMemory(4);
  Engine on_loader(Spec(true), Options("cpu", learners), &loader);
  Engine in_memory(Spec(true), Options("cpu", learners), &memory);
  for (int t = 0; t < 3; ++t) {
    const IterationResult a = on_loader.Iterate(), b = in_memory.Iterate();
    EXPECT_EQ(a.images, 4 * learners);
    EXPECT_EQ(a.loss, b.loss) << "iteration " << t;
  }
  const auto trained = Snapshot(on_loader), expected = Snapshot(in_memory);
  for (const auto& [name, tensor] : expected) {
    if (name.rfind("z/", 0) == 0) ExpectNear(trained.at(name), tensor, 0.f, name);
  }
}

INSTANTIATE_TEST_SUITE_P(Learners, EngineOnLoader, ::testing::Values(1, 7, 16, 64));

TEST(EngineOnLoader, TheAutotunerCanGrowPastTheDefaultRing) {
  data::testing::TempDir dir;
  WriteRecords(dir / "db");
  data::LoaderOptions options;
  options.path = dir / "db";
  options.batch_size = 2;
  options.workers = 1;  // a default ring of 4 slots
  data::ImageLoader loader(options);
  Engine engine(Spec(false), Options("cpu", 1), &loader);
  for (int k : {3, 9, 12}) {
    engine.SetLearnersPerDevice(k);
    EXPECT_EQ(engine.Iterate().images, 2 * k);
  }
}

}  // namespace
}  // namespace crossbow
