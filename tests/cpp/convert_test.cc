#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "crossbow/core/enforce.h"
#include "data/converters.h"
#include "data/datum.h"
#include "data/lmdb_io.h"
#include "tests/cpp/expect_error.h"

namespace crossbow::data {
namespace {

namespace fs = std::filesystem;

class ConvertTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    root_ = fs::path(::testing::TempDir()) /
            ("convert_" + std::string(test->name()) + "_" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_ / "images");
    quiet_.progress = false;
    imageset_.progress = false;
  }
  void TearDown() override { fs::remove_all(root_); }

  std::string Path(const std::string& name) const { return (root_ / name).string(); }

  void WriteFile(const std::string& name, const std::string& bytes) const {
    std::ofstream(Path(name), std::ios::binary) << bytes;
  }

  // A binary PPM (P6) whose pixel (y, x) is RGB (base + x, base + y, base + 2): easy to
  // write by hand, and read by OpenCV exactly.
  std::string Ppm(int width, int height, int base) const {
    std::string out = "P6\n" + std::to_string(width) + " " + std::to_string(height) + "\n255\n";
    for (int y = 0; y < height; ++y) {
      for (int x = 0; x < width; ++x) {
        for (int v : {base + x, base + y, base + 2}) out.push_back(static_cast<char>(v));
      }
    }
    return out;
  }

  std::vector<std::pair<std::string, Datum>> ReadBack(const std::string& db) const {
    LmdbReader reader(Path(db));
    LmdbReader::Transaction txn(reader);
    std::vector<std::pair<std::string, Datum>> out;
    for (int64_t i = 0; i < reader.size(); ++i) {
      const std::string_view bytes = txn.Get(i);
      Datum datum;
      std::string error;
      EXPECT_TRUE(ParseDatum(bytes.data(), bytes.size(), &datum, &error)) << error;
      out.emplace_back(reader.key(i), datum);
    }
    return out;
  }

  fs::path root_;
  WriteOptions quiet_;
  ImagesetOptions imageset_;
};

std::string Cifar(const std::vector<std::vector<uint8_t>>& labels) {
  std::string out;
  for (size_t r = 0; r < labels.size(); ++r) {
    for (uint8_t label : labels[r]) out.push_back(static_cast<char>(label));
    for (int c = 0; c < 3; ++c) out += std::string(1024, static_cast<char>(10 * r + c));
  }
  return out;
}

TEST_F(ConvertTest, Cifar10RecordsInFileOrderAsBgr) {
  WriteFile("a.bin", Cifar({{3}, {12}}));  // the second label is out of range: skipped
  WriteFile("b.bin", Cifar({{9}}));
  const ConvertSummary summary = ConvertCifar10(Path("db"), {Path("a.bin"), Path("b.bin")}, quiet_);
  EXPECT_EQ(summary.written, 2);
  ASSERT_EQ(summary.skipped.size(), 1u);
  EXPECT_EQ(summary.skipped[0].where, Path("a.bin") + " record 1");
  EXPECT_EQ(summary.skipped[0].reason, "label out of range");
  const auto records = ReadBack("db");
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].first, "00000000");
  EXPECT_EQ(records[1].first, "00000001");
  EXPECT_EQ(records[0].second.label, 3);
  EXPECT_EQ(records[1].second.label, 9);
  const Datum& d = records[0].second;
  EXPECT_EQ(d.channels * d.height * d.width, 3072);
  EXPECT_EQ(d.data[0], 2);                     // B plane first: the file's third plane
  EXPECT_EQ(d.data[2048], 0);                  // R plane last
  EXPECT_EQ(records[1].second.data[1024], 1);  // G stays; record 0 of b.bin
  EXPECT_NE(summary.ToString().find("1 label out of range"), std::string::npos);
}

TEST_F(ConvertTest, Cifar100FineOrCoarse) {
  WriteFile("train.bin", Cifar({{4, 77}, {19, 99}}));
  ConvertCifar100(Path("fine"), {Path("train.bin")}, false, quiet_);
  ConvertCifar100(Path("coarse"), {Path("train.bin")}, true, quiet_);
  EXPECT_EQ(ReadBack("fine")[1].second.label, 99);
  EXPECT_EQ(ReadBack("coarse")[0].second.label, 4);
  EXPECT_EQ(ReadBack("coarse")[1].second.label, 19);
}

TEST_F(ConvertTest, CifarFileOfPartialRecordsIsAnError) {
  WriteFile("cut.bin", Cifar({{1}}).substr(0, 3000));
  try {
    ConvertCifar10(Path("db"), {Path("cut.bin")}, quiet_);
    FAIL() << "no error";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find(Path("cut.bin") + ": 3000 bytes"), std::string::npos)
        << e.what();
  }
  EXPECT_ERROR(ConvertCifar10(Path("db"), {Path("missing.bin")}, quiet_), Error,
               "cannot open " + Path("missing.bin"));
}

std::string Idx(uint32_t magic, std::vector<uint32_t> dims, const std::string& body) {
  std::string out;
  auto put = [&out](uint32_t v) {
    for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>(v >> shift));
  };
  put(magic);
  for (uint32_t d : dims) put(d);
  return out + body;
}

TEST_F(ConvertTest, MnistIdx) {
  std::string pixels;
  for (int i = 0; i < 3 * 4 * 5; ++i) pixels.push_back(static_cast<char>(i));
  WriteFile("idx_images", Idx(0x803, {3, 4, 5}, pixels));
  WriteFile("labels", Idx(0x801, {3}, std::string("\x07\x00\x02", 3)));
  const ConvertSummary summary =
      ConvertMnist(Path("idx_images"), Path("labels"), Path("db"), quiet_);
  EXPECT_EQ(summary.written, 3);
  const auto records = ReadBack("db");
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[2].first, "00000002");
  const Datum& d = records[2].second;
  EXPECT_EQ(d.channels, 1);
  EXPECT_EQ(d.height, 4);
  EXPECT_EQ(d.width, 5);
  EXPECT_EQ(d.label, 2);
  EXPECT_EQ(d.data, pixels.substr(40, 20));
}

TEST_F(ConvertTest, MnistBadFilesSayWhich) {
  WriteFile("idx_images", Idx(0x803, {2, 2, 2}, std::string(8, 'x')));
  WriteFile("labels", Idx(0x801, {3}, "abc"));
  WriteFile("short", Idx(0x803, {2, 2, 2}, std::string(7, 'x')));
  auto message = [&](const std::string& images, const std::string& labels) {
    try {
      ConvertMnist(Path(images), Path(labels), Path("db"), quiet_);
    } catch (const ValueError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("idx_images", "labels").find("holds 2 images but"), std::string::npos);
  EXPECT_NE(message("short", "labels").find(Path("short") + ": the header promises 8"),
            std::string::npos);
  EXPECT_NE(message("labels", "labels").find("magic number"), std::string::npos);
}

TEST_F(ConvertTest, ImagesetAsConvertImageset) {
  WriteFile("images/a.ppm", Ppm(3, 2, 10));
  WriteFile("images/b b.ppm", Ppm(3, 2, 20));  // a space in the name: the label is the last word
  WriteFile("images/big.ppm", Ppm(4, 2, 30));
  WriteFile("images/corrupt.ppm", "P6\n3 2\n255\nshort");
  WriteFile("list.txt",
            "a.ppm 1\nb b.ppm 2\r\nno_label.ppm\n\ncorrupt.ppm 3\nbig.ppm 4\n"
            "a.ppm x\n");
  imageset_.check_size = true;
  const ConvertSummary summary =
      ConvertImageset(Path("images"), Path("list.txt"), Path("db"), imageset_);
  EXPECT_EQ(summary.written, 2);
  ASSERT_EQ(summary.skipped.size(), 4u);
  EXPECT_EQ(summary.skipped[0].where, "line 3 (no_label.ppm)");
  EXPECT_EQ(summary.skipped[0].reason, "missing label");
  EXPECT_EQ(summary.skipped[1].where, "line 7 (a.ppm)");
  EXPECT_EQ(summary.skipped[1].reason, "bad label");
  EXPECT_EQ(summary.skipped[2].where, "line 5 (corrupt.ppm)");
  EXPECT_EQ(summary.skipped[2].reason, "unreadable image");
  EXPECT_EQ(summary.skipped[3].where, "line 6 (big.ppm)");
  EXPECT_EQ(summary.skipped[3].reason, "wrong size");
  EXPECT_NE(summary.ToString().find("skipped 4: 1 bad label, 1 missing label, 1 unreadable "
                                    "image, 1 wrong size"),
            std::string::npos)
      << summary.ToString();

  const auto records = ReadBack("db");
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].first, "00000000_a.ppm");
  EXPECT_EQ(records[1].first, "00000001_b b.ppm");
  const Datum& d = records[1].second;
  EXPECT_EQ(d.label, 2);
  ASSERT_EQ(d.data.size(), 18u);
  EXPECT_FALSE(d.encoded);
  // CHW, BGR: B plane is 20 + 2, G plane is 20 + y, R plane is 20 + x.
  EXPECT_EQ(d.data[0], 22);
  EXPECT_EQ(d.data[6 + 3], 21);   // G at (1, 0)
  EXPECT_EQ(d.data[12 + 2], 22);  // R at (0, 2)
}

TEST_F(ConvertTest, ImagesetResizeGrayShuffleEncoded) {
  std::string list;
  for (int i = 0; i < 6; ++i) {
    WriteFile("images/" + std::to_string(i) + ".ppm", Ppm(4, 4, i));
    list += std::to_string(i) + ".ppm " + std::to_string(i) + "\n";
  }
  WriteFile("list.txt", list);
  imageset_.shuffle = true;
  imageset_.seed = 5;
  imageset_.gray = true;
  imageset_.resize_width = 2;
  imageset_.resize_height = 3;
  ConvertImageset(Path("images"), Path("list.txt"), Path("a"), imageset_);
  ConvertImageset(Path("images"), Path("list.txt"), Path("b"), imageset_);
  const auto a = ReadBack("a"), b = ReadBack("b");
  ASSERT_EQ(a.size(), 6u);
  std::vector<int> labels;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].first, b[i].first);  // the same seed, the same order
    EXPECT_EQ(a[i].first.substr(9), std::to_string(a[i].second.label) + ".ppm");
    EXPECT_EQ(a[i].second.channels * a[i].second.height * a[i].second.width, 6);
    labels.push_back(a[i].second.label);
  }
  EXPECT_NE(labels, (std::vector<int>{0, 1, 2, 3, 4, 5}));

  ImagesetOptions encoded;
  encoded.progress = false;
  encoded.encoded = true;  // the file's own format and bytes
  ConvertImageset(Path("images"), Path("list.txt"), Path("same"), encoded);
  const Datum kept = ReadBack("same")[3].second;
  EXPECT_TRUE(kept.encoded);
  EXPECT_EQ(kept.data, Ppm(4, 4, 3));
  encoded.encode_type = "png";
  ConvertImageset(Path("images"), Path("list.txt"), Path("png"), encoded);
  EXPECT_EQ(ReadBack("png")[0].second.data.substr(1, 3), "PNG");
  encoded.encode_type = "nonsense";
  EXPECT_ERROR(ConvertImageset(Path("images"), Path("list.txt"), Path("x"), encoded), ValueError,
               "encode_type 'nonsense' is not an image format");
  imageset_.resize_height = 0;
  EXPECT_ERROR(ConvertImageset(Path("images"), Path("list.txt"), Path("x"), imageset_), ValueError,
               "resize_width and resize_height must be given together");
}

// --resize_shorter and --max_side keep the aspect ratio, raw or encoded; an image they leave as
// it is keeps its own bytes when encoded.
TEST_F(ConvertTest, ImagesetResizeKeepingTheAspectRatio) {
  const std::vector<std::pair<int, int>> sizes = {{40, 20}, {10, 30}, {12, 12}};  // w x h
  std::string list;
  for (size_t i = 0; i < sizes.size(); ++i) {
    WriteFile("images/" + std::to_string(i) + ".ppm", Ppm(sizes[i].first, sizes[i].second, 9));
    list += std::to_string(i) + ".ppm " + std::to_string(i) + "\n";
  }
  WriteFile("list.txt", list);
  struct Case {
    int shorter, max_side;
    std::vector<std::pair<int, int>> expected;  // w x h
  };
  for (const Case& c :
       {Case{10, 0, {{20, 10}, {10, 30}, {10, 10}}}, Case{0, 24, {{24, 12}, {8, 24}, {12, 12}}}}) {
    for (bool encoded : {false, true}) {
      ImagesetOptions options = imageset_;
      options.resize_shorter = c.shorter;
      options.max_side = c.max_side;
      options.encoded = encoded;
      const std::string db = "db" + std::to_string(c.shorter) + std::to_string(encoded);
      ConvertImageset(Path("images"), Path("list.txt"), Path(db), options);
      const auto records = ReadBack(db);
      ASSERT_EQ(records.size(), sizes.size());
      for (size_t i = 0; i < sizes.size(); ++i) {
        const Datum& d = records[i].second;
        SCOPED_TRACE(db + " record " + std::to_string(i));
        EXPECT_EQ(d.encoded, encoded);
        EXPECT_EQ(d.width, c.expected[i].first);
        EXPECT_EQ(d.height, c.expected[i].second);
        if (!encoded) EXPECT_EQ(d.data.size(), 3u * d.width * d.height);
        const bool kept = c.expected[i] == sizes[i];
        if (encoded) EXPECT_EQ(d.data == Ppm(sizes[i].first, sizes[i].second, 9), kept);
        if (encoded && !kept) {  // re-encoded at the new size
          EXPECT_EQ(d.data.substr(0, 2), "P6");
          EXPECT_NE(d.data.find(std::to_string(d.width) + " " + std::to_string(d.height)),
                    std::string::npos);
        }
      }
      const std::optional<DbMeta> meta = ReadMeta(Path(db));
      ASSERT_TRUE(meta.has_value());
      EXPECT_EQ(meta->height.max, c.shorter ? 30 : 24);
    }
  }
  imageset_.resize_shorter = 10;
  imageset_.max_side = 20;
  EXPECT_ERROR(ConvertImageset(Path("images"), Path("list.txt"), Path("x"), imageset_), ValueError,
               "give one of resize_width/resize_height, resize_shorter and max_side");
}

TEST_F(ConvertTest, ImageFoldersSortedClassesAndLabelList) {
  for (const std::string cls : {"zebra", "ant", "moth"})
    fs::create_directories(root_ / "images" / cls);
  WriteFile("images/zebra/2.ppm", Ppm(2, 2, 1));
  WriteFile("images/zebra/1.ppm", Ppm(2, 2, 2));
  WriteFile("images/ant/1.ppm", Ppm(2, 2, 3));
  WriteFile("images/moth/.hidden", "not an image");
  const ConvertSummary summary = ConvertImageFolders(Path("images"), Path("db"), imageset_);
  EXPECT_EQ(summary.written, 3);
  const auto records = ReadBack("db");
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0].first, "00000000_ant/1.ppm");
  EXPECT_EQ(records[1].first, "00000001_zebra/1.ppm");
  EXPECT_EQ(records[0].second.label, 0);
  EXPECT_EQ(records[2].second.label, 2);
  std::ifstream labels(Path("db/labels.txt"));
  std::string text(std::istreambuf_iterator<char>(labels), {});
  EXPECT_EQ(text, "ant\nmoth\nzebra\n");
  EXPECT_ERROR(ConvertImageFolders(Path("images/ant"), Path("db2"), imageset_), Error,
               "image folder root " + Path("images/ant") + " has no class sub-folders");
}

TEST_F(ConvertTest, ChannelStatsOfRawRecordsSkipsCorruptOnes) {
  {
    LmdbWriter writer(Path("db"));
    Datum d;
    d.channels = 2;
    d.height = 1;
    d.width = 2;
    d.data = std::string("\x00\x02\x0a\x0a", 4);  // channel 0: 0, 2; channel 1: 10, 10
    writer.Put("a", SerializeDatum(d));
    d.data = std::string("\x04\x06\x14\x14", 4);  // channel 0: 4, 6; channel 1: 20, 20
    writer.Put("b", SerializeDatum(d));
    d.data = "abc";  // sizes disagree with the bytes
    writer.Put("c", SerializeDatum(d));
    writer.Put("d", "\xff\xff");  // not a Datum
  }
  const ChannelStats stats = ComputeChannelStats(Path("db"), false);
  EXPECT_EQ(stats.records, 2);
  ASSERT_EQ(stats.mean.size(), 2u);
  EXPECT_DOUBLE_EQ(stats.mean[0], 3.0);
  EXPECT_DOUBLE_EQ(stats.std[0], std::sqrt(5.0));
  EXPECT_DOUBLE_EQ(stats.mean[1], 15.0);
  EXPECT_DOUBLE_EQ(stats.std[1], 5.0);
  ASSERT_EQ(stats.skipped.size(), 2u);
  EXPECT_EQ(stats.skipped[0].where, "key c");
  EXPECT_EQ(stats.skipped[1].where, "key d");
}

}  // namespace
}  // namespace crossbow::data
