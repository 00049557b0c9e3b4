#include "data/datum.h"

#include <gtest/gtest.h>

#include <random>

namespace crossbow::data {
namespace {

Datum Sample() {
  Datum d;
  d.channels = 3;
  d.height = 2;
  d.width = 1;
  d.data = std::string("\x00\x7f\x80\xff\x01\x02", 6);
  d.label = -7;  // negative: ten varint bytes on the wire
  d.float_data = {1.5f, -2.25f};
  d.encoded = true;
  return d;
}

void ExpectEqual(const Datum& a, const Datum& b) {
  EXPECT_EQ(a.channels, b.channels);
  EXPECT_EQ(a.height, b.height);
  EXPECT_EQ(a.width, b.width);
  EXPECT_EQ(a.data, b.data);
  EXPECT_EQ(a.label, b.label);
  EXPECT_EQ(a.float_data, b.float_data);
  EXPECT_EQ(a.encoded, b.encoded);
}

TEST(DatumTest, RoundTrip) {
  const std::string bytes = SerializeDatum(Sample());
  Datum parsed;
  std::string error;
  ASSERT_TRUE(ParseDatum(bytes.data(), bytes.size(), &parsed, &error)) << error;
  ExpectEqual(parsed, Sample());
}

TEST(DatumTest, WritesFieldsInOrderAsProtobuf) {
  Datum d;
  d.channels = 1;
  d.height = 2;
  d.width = 300;
  d.data = "ab";
  d.label = 5;
  d.float_data = {1.0f};
  const std::string expected(
      "\x08\x01\x10\x02\x18\xac\x02\x22\x02"
      "ab"
      "\x28\x05"
      "\x35\x00\x00\x80\x3f\x38\x00",
      20);
  EXPECT_EQ(SerializeDatum(d), expected);
}

TEST(DatumTest, ReadsPackedFloatsAndSkipsUnknownFields) {
  // float_data packed (field 6, wire type 2), then unknown fields of every wire type:
  // 9 varint, 10 fixed64, 11 bytes, 12 fixed32, 13 a group holding a varint; then label 4.
  const std::string bytes(
      "\x32\x08\x00\x00\x80\x3f\x00\x00\x00\x40"
      "\x48\x96\x01"
      "\x51\x01\x02\x03\x04\x05\x06\x07\x08"
      "\x5a\x03xyz"
      "\x65\x01\x02\x03\x04"
      "\x6b\x08\x01\x6c"
      "\x28\x04",
      38);
  Datum d;
  std::string error;
  ASSERT_TRUE(ParseDatum(bytes.data(), bytes.size(), &d, &error)) << error;
  EXPECT_EQ(d.float_data, (std::vector<float>{1.0f, 2.0f}));
  EXPECT_EQ(d.label, 4);
}

TEST(DatumTest, EveryTruncationIsAnErrorNotACrash) {
  const std::string bytes = SerializeDatum(Sample());
  for (size_t size = 1; size < bytes.size(); ++size) {
    const std::string cut = bytes.substr(0, size);
    Datum d;
    std::string error;
    // A cut between fields parses (as protobuf would); a cut inside one must fail and say why.
    if (!ParseDatum(cut.data(), cut.size(), &d, &error)) EXPECT_FALSE(error.empty()) << size;
  }
  Datum d;
  std::string error;
  EXPECT_FALSE(ParseDatum(bytes.data(), 3, &d, &error));  // inside the height field
  EXPECT_FALSE(error.empty());
}

TEST(DatumTest, BadBytesSayWhy) {
  const std::pair<std::string, const char*> cases[] = {
      {std::string("\x22\x05"
                   "ab",
                   4),
       "data"},                                           // length past the end
      {std::string("\x00", 1), "field number"},           // field 0
      {std::string("\x0f\x01", 2), "wire type"},          // wire type 7
      {std::string("\x32\x03\x00\x00\x00", 5), "float"},  // packed floats not a multiple of 4
      {std::string(11, '\xff'), "tag"},                   // an over-long varint
      {std::string("\x6b\x08\x01", 3), "group"},          // unterminated group
      {std::string("\x6c", 1), "group"},                  // end group without a start
  };
  for (const auto& [bytes, what] : cases) {
    Datum d;
    std::string error;
    EXPECT_FALSE(ParseDatum(bytes.data(), bytes.size(), &d, &error)) << what;
    EXPECT_NE(error.find(what), std::string::npos) << error;
  }
}

TEST(DatumTest, RandomBytesNeverCrash) {
  std::mt19937 rng(7);
  const std::string valid = SerializeDatum(Sample());
  for (int trial = 0; trial < 20000; ++trial) {
    std::string bytes = valid;
    if (trial % 2 == 0) {
      bytes.resize(rng() % 64);
      for (auto& b : bytes) b = static_cast<char>(rng());
    } else {
      for (int flips = 0; flips < 3; ++flips)
        bytes[rng() % bytes.size()] = static_cast<char>(rng());
    }
    Datum d;
    std::string error;
    ParseDatum(bytes.data(), bytes.size(), &d, &error);
  }
  Datum d;
  EXPECT_TRUE(ParseDatum(nullptr, 0, &d, nullptr));
}

TEST(DatumTest, CheckRawDatum) {
  Datum d;
  d.channels = 2;
  d.height = 2;
  d.width = 3;
  d.data.assign(12, 'x');
  std::string error;
  EXPECT_TRUE(CheckRawDatum(d, &error)) << error;
  d.data.resize(11);
  EXPECT_FALSE(CheckRawDatum(d, &error));
  EXPECT_NE(error.find("needs 12"), std::string::npos) << error;
  d.data.clear();
  d.float_data.assign(12, 0.5f);
  EXPECT_TRUE(CheckRawDatum(d, &error)) << error;
  d.width = 0;
  EXPECT_FALSE(CheckRawDatum(d, &error));
  EXPECT_NE(error.find("positive"), std::string::npos) << error;
}

}  // namespace
}  // namespace crossbow::data
