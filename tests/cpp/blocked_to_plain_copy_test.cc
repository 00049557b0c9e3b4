#include "operators/blocked_to_plain_copy.h"

#include <gtest/gtest.h>

#include <numeric>

namespace crossbow {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;

// `values` laid out as `from`, copied to plain float32 by oneDNN's reorder or by this copy.
std::vector<float> ToPlain(const std::vector<float>& values, const memory::desc& from, bool own) {
  const memory::desc plain(from.dims(), memory::data_type::f32, Tag::abcd);
  std::vector<float> out(plain.get_size() / sizeof(float), -1.f);
  if (own) {
    auto copy = BlockedToPlainCopy::For(from, plain);
    EXPECT_TRUE(copy.has_value());
    if (copy) copy->Run(values.data(), out.data());
    return out;
  }
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  memory a(from, engine, const_cast<float*>(values.data())), b(plain, engine, out.data());
  dnnl::reorder(a, b).execute(stream, a, b);
  stream.wait();
  return out;
}

struct Case {
  memory::dims dims;
  Tag blocked;
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.dims[0] << "x" << c.dims[1] << "x" << c.dims[2] << "x" << c.dims[3] << " in layout "
      << static_cast<int>(c.blocked);
}

class BlockedToPlainCopyTest : public ::testing::TestWithParam<Case> {};

// Every element (each a distinct value: its index) lands where oneDNN's reorder puts it.
TEST_P(BlockedToPlainCopyTest, WritesWhatOneDnnsReorderWrites) {
  const Case& c = GetParam();
  const memory::desc blocked(c.dims, memory::data_type::f32, c.blocked);
  std::vector<float> values(blocked.get_size() / sizeof(float));
  std::iota(values.begin(), values.end(), 0.f);
  EXPECT_EQ(ToPlain(values, blocked, true), ToPlain(values, blocked, false));
}

// Layouts oneDNN picks for weights and their gradients (AVX-512's 16b16a, AVX2's 8b8a, the
// bf16 kernels' 8b16a2b and 8a16b2a, AMX's 4b16a4b), rows of 1,024 and 2,048 floats as 1x1 or
// 3x3 kernels would have them, M != C.
INSTANTIATE_TEST_SUITE_P(Layouts, BlockedToPlainCopyTest,
                         ::testing::Values(Case{{32, 1024, 1, 1}, Tag::ABcd16b16a},
                                           Case{{48, 2048, 1, 1}, Tag::ABcd16b16a},
                                           Case{{32, 1024, 1, 1}, Tag::ABcd8b8a},
                                           Case{{64, 1024, 1, 1}, Tag::ABcd8b16a2b},
                                           Case{{32, 1024, 1, 1}, Tag::BAcd8a16b2a},
                                           Case{{16, 1024, 1, 1}, Tag::BAcd16a16b},
                                           Case{{32, 512, 2, 2}, Tag::ABcd16b16a},
                                           Case{{32, 1024, 1, 1}, Tag::ABcd4b16a4b}));

// What it declines goes to oneDNN: rows that are not a multiple of 4 KiB (the copies oneDNN
// does well), a padded block (20 rows in blocks of 16), one blocked dimension (activations'
// aBcd16b), a bfloat16 source or destination, 2-D, plain to blocked.
TEST(BlockedToPlainCopy, DeclinesWhatItDoesNotDo) {
  const auto f32 = memory::data_type::f32, bf16 = memory::data_type::bf16;
  auto copy = [](const memory::desc& from, const memory::desc& to) {
    return BlockedToPlainCopy::For(from, to).has_value();
  };
  auto pair = [&](memory::dims dims, Tag tag, memory::data_type from_type = memory::data_type::f32,
                  memory::data_type to_type = memory::data_type::f32) {
    return copy(memory::desc(dims, from_type, tag), memory::desc(dims, to_type, Tag::abcd));
  };
  EXPECT_TRUE(pair({32, 1024, 1, 1}, Tag::ABcd16b16a));
  EXPECT_FALSE(pair({32, 512, 1, 1}, Tag::ABcd16b16a));
  EXPECT_FALSE(pair({32, 512, 3, 3}, Tag::ABcd16b16a));
  EXPECT_FALSE(pair({20, 1024, 1, 1}, Tag::ABcd16b16a));
  EXPECT_FALSE(pair({32, 1024, 1, 1}, Tag::aBcd16b));
  EXPECT_FALSE(pair({32, 1024, 1, 1}, Tag::ABcd16b16a, bf16, f32));
  EXPECT_FALSE(pair({32, 1024, 1, 1}, Tag::ABcd16b16a, f32, bf16));
  EXPECT_FALSE(
      copy(memory::desc({32, 1024}, f32, Tag::AB16b16a), memory::desc({32, 1024}, f32, Tag::ab)));
  EXPECT_FALSE(copy(memory::desc({32, 1024, 1, 1}, f32, Tag::abcd),
                    memory::desc({32, 1024, 1, 1}, f32, Tag::ABcd16b16a)));
}

}  // namespace
}  // namespace crossbow
