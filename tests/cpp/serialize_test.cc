#include "crossbow/core/serialize.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "tests/cpp/expect_error.h"
#include "tests/cpp/scratch_dir.h"

namespace crossbow {
namespace {

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void WriteAll(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

class SerializeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    w_.Resize({2, 3});
    for (int i = 0; i < 6; ++i) w_.mutable_data<float>()[i] = 0.5f * i;
    n_.Resize({4}, DataType::kInt32);
    for (int i = 0; i < 4; ++i) n_.mutable_data<int32_t>()[i] = -i;
    path_ = ScratchDir("tensors") + "/tensors.cbt";
    SaveTensors(path_, {{"w", &w_}, {"n", &n_}});
  }
  Tensor w_, n_;
  std::string path_;
};

TEST_F(SerializeTest, RoundTrip) {
  auto loaded = LoadTensors(path_);
  ASSERT_EQ(loaded.size(), 2u);
  EXPECT_EQ(loaded["w"].shape(), (Shape{2, 3}));
  EXPECT_EQ(loaded["w"].data<float>()[5], 2.5f);
  EXPECT_EQ(loaded["n"].dtype(), DataType::kInt32);
  EXPECT_EQ(loaded["n"].data<int32_t>()[3], -3);
}

TEST_F(SerializeTest, TruncatedFileIsACleanError) {
  std::string bytes = ReadAll(path_);
  for (size_t keep : {bytes.size() - 1, bytes.size() / 2, size_t{12}, size_t{3}}) {
    WriteAll(path_, bytes.substr(0, keep));
    SCOPED_TRACE(::testing::Message() << "kept " << keep << " bytes");
    EXPECT_ERROR(LoadTensors(path_), Error, "'" + path_ + "'");
  }
}

TEST_F(SerializeTest, FlippedByteIsDetected) {
  std::string bytes = ReadAll(path_);
  bytes[bytes.size() / 2] ^= 0x40;
  WriteAll(path_, bytes);
  try {
    LoadTensors(path_);
    FAIL() << "corruption went unnoticed";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("corrupt"), std::string::npos) << e.what();
  }
}

TEST_F(SerializeTest, ForeignAndMissingFiles) {
  WriteAll(path_, "this is not a checkpoint at all, just some text");
  EXPECT_ERROR(LoadTensors(path_), Error, "'" + path_ + "' is not a Crossbow tensor file");
  EXPECT_ERROR(LoadTensors(path_ + ".does-not-exist"), Error,
               "cannot open tensor file '" + path_ + ".does-not-exist'");
}

TEST_F(SerializeTest, FailedWriteKeepsThePreviousFile) {
  Tensor blocked;
  blocked.ResizeBlocked({1, 16, 2, 2},
                        dnnl::memory::desc({1, 16, 2, 2}, dnnl::memory::data_type::f32,
                                           dnnl::memory::format_tag::nChw16c));
  EXPECT_ERROR(SaveTensors(path_, {{"w", &w_}, {"b", &blocked}}), Error,
               "tensor 'b' is not in plain layout");
  EXPECT_EQ(LoadTensors(path_).size(), 2u);
}

}  // namespace
}  // namespace crossbow
