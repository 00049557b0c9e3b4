#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

#include "operators/dnnl_utils.h"
#include "tests/cpp/expect_error.h"
#include "tests/cpp/op_test_util.h"

namespace crossbow::testing {
namespace {

using dnnl::memory;

enum class Mode { kMax, kAverageExcludePad, kAverageIncludePad };

struct Window {
  int64_t kernel, stride, pad;
};

// Naive pooling over [N, C, H, W]; for max pooling also records each output's winning input
// in `argmax`, so that the gradient reference is dX[argmax[o]] += dY[o].
std::vector<float> NaivePool(const std::vector<float>& x, const Shape& s, Window win, Mode mode,
                             std::vector<int64_t>* argmax = nullptr) {
  const int64_t oh = (s[2] + 2 * win.pad - win.kernel) / win.stride + 1;
  const int64_t ow = (s[3] + 2 * win.pad - win.kernel) / win.stride + 1;
  std::vector<float> y;
  for (int64_t nc = 0; nc < s[0] * s[1]; ++nc) {
    for (int64_t i = 0; i < oh; ++i) {
      for (int64_t j = 0; j < ow; ++j) {
        float best = -std::numeric_limits<float>::infinity(), sum = 0.f;
        int64_t best_at = -1, taps = 0;
        for (int64_t a = 0; a < win.kernel; ++a) {
          for (int64_t b = 0; b < win.kernel; ++b) {
            const int64_t h = i * win.stride - win.pad + a, w = j * win.stride - win.pad + b;
            if (h < 0 || h >= s[2] || w < 0 || w >= s[3]) continue;
            const int64_t at = (nc * s[2] + h) * s[3] + w;
            if (x[at] > best) best = x[at], best_at = at;
            sum += x[at];
            ++taps;
          }
        }
        if (argmax) argmax->push_back(best_at);
        if (mode == Mode::kMax) y.push_back(best);
        if (mode == Mode::kAverageExcludePad) y.push_back(sum / taps);
        if (mode == Mode::kAverageIncludePad) y.push_back(sum / (win.kernel * win.kernel));
      }
    }
  }
  return y;
}

// Distinct values 0.05 apart, shuffled: no ties that a numeric gradient step could flip.
std::vector<float> DistinctValues(int64_t n, uint64_t seed) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = 0.05f * static_cast<float>(i - (n / 2));
  std::shuffle(v.begin(), v.end(), std::mt19937_64(seed));
  return v;
}

std::map<std::string, Argument> Args(Window win) {
  return {{"kernel", win.kernel}, {"stride", win.stride}, {"pad", win.pad}};
}

struct PoolCase {
  Shape shape;
  Window win;
};

const std::vector<PoolCase> kCases = {
    {{1, 3, 5, 5}, {3, 2, 1}},   // batch 1, padded, last window stops short of the padding
    {{2, 17, 6, 6}, {2, 2, 0}},  // channels not a multiple of 16
    {{2, 5, 6, 7}, {1, 2, 0}},   // ResNet shortcut subsample
    {{2, 4, 7, 7}, {3, 1, 1}},
};

TEST(MaxPool, ForwardMatchesReference) {
  for (const auto& c : kCases) {
    OpHarness h;
    std::vector<float> x = DistinctValues(NumElements(c.shape), 1);
    h.Feed("X", c.shape, x);
    h.Run(MakeOperator("MaxPool", {"X"}, {"Y"}, Args(c.win)));
    EXPECT_EQ(h.Fetch("Y"), NaivePool(x, c.shape, c.win, Mode::kMax))
        << ShapeString(c.shape) << " kernel " << c.win.kernel;
  }
}

TEST(AveragePool, ForwardMatchesReference) {
  for (const auto& c : kCases) {
    for (int64_t include : {0, 1}) {
      OpHarness h;
      h.Feed("X", c.shape);
      std::vector<float> x = h.Fetch("X");
      auto args = Args(c.win);
      args["count_include_pad"] = include;
      h.Run(MakeOperator("AveragePool", {"X"}, {"Y"}, args));
      Mode mode = include ? Mode::kAverageIncludePad : Mode::kAverageExcludePad;
      EXPECT_LT(MaxAbsDiff(h.Fetch("Y"), NaivePool(x, c.shape, c.win, mode)), 1e-5f)
          << ShapeString(c.shape) << " kernel " << c.win.kernel << " include " << include;
    }
  }
}

TEST(GlobalAveragePool, ForwardMatchesReference) {
  for (const Shape& shape : {Shape{1, 3, 4, 5}, Shape{2, 17, 3, 3}}) {
    OpHarness h;
    h.Feed("X", shape);
    std::vector<float> x = h.Fetch("X");
    h.Run(MakeOperator("GlobalAveragePool", {"X"}, {"Y"}));
    EXPECT_EQ(h.ShapeOf("Y"), (Shape{shape[0], shape[1], 1, 1}));
    const int64_t hw = shape[2] * shape[3];
    std::vector<float> expected;
    for (auto image = x.begin(); image != x.end(); image += hw) {
      expected.push_back(std::accumulate(image, image + hw, 0.f) / static_cast<float>(hw));
    }
    EXPECT_LT(MaxAbsDiff(h.Fetch("Y"), expected), 1e-5f);
  }
}

TEST(MaxPool, GradientMatchesNumeric) {
  for (const auto& c : kCases) {
    OpHarness h;
    h.Feed("X", c.shape, DistinctValues(NumElements(c.shape), 2));
    CheckGradient(h, MakeOperator("MaxPool", {"X"}, {"Y", "Y_workspace"}, Args(c.win)), {0});
  }
}

TEST(AveragePool, GradientMatchesNumeric) {
  for (const auto& c : kCases) {
    for (int64_t include : {0, 1}) {
      OpHarness h;
      h.Feed("X", c.shape);
      auto args = Args(c.win);
      args["count_include_pad"] = include;
      CheckGradient(h, MakeOperator("AveragePool", {"X"}, {"Y"}, args), {0});
    }
  }
}

TEST(GlobalAveragePool, GradientMatchesNumeric) {
  OpHarness h;
  h.Feed("X", {2, 17, 3, 4});
  CheckGradient(h, MakeOperator("GlobalAveragePool", {"X"}, {"Y"}), {0});
}

TEST(MaxPool, BlockedInputAndMismatchedGradientLayout) {
  const Shape shape{2, 17, 6, 6};
  const Window win{3, 2, 1};
  OpHarness h;
  std::vector<float> x = DistinctValues(NumElements(shape), 3);
  h.Feed("X", shape, x);
  MakeBlocked(h, "X");
  auto pool = MakeOperator("MaxPool", {"X"}, {"Y", "ws"}, Args(win));
  h.Run(pool);
  std::vector<int64_t> argmax;
  EXPECT_EQ(h.Fetch("Y"), NaivePool(x, shape, win, Mode::kMax, &argmax));
  EXPECT_FALSE(h.ws().GetTensor("Y")->is_plain()) << "Y should keep X's blocked layout";

  h.Feed("dY", h.ShapeOf("Y"));  // plain, unlike Y
  std::vector<float> dy = h.Fetch("dY");
  h.Run(MakeOperator("MaxPoolGradient", {"X", "Y", "dY", "ws"}, {"dX"}, Args(win)));
  std::vector<float> expected(x.size(), 0.f);
  for (size_t o = 0; o < dy.size(); ++o) expected[argmax[o]] += dy[o];
  EXPECT_LT(MaxAbsDiff(h.Fetch("dX"), expected), 1e-6f);
}

// Channels-last X runs in ChannelsLastMaxPool rather than oneDNN: Y and dX must be the
// reference's, bit for bit in fp32 (dX sums each input's winning dY in Y's order, as the
// reference does), and stay channels-last. The last cases cross the 64-channel chunk and pad a
// larger window.
TEST(MaxPool, ChannelsLastMatchesReference) {
  std::vector<PoolCase> cases = kCases;
  cases.push_back({{2, 70, 7, 6}, {3, 2, 1}});
  cases.push_back({{1, 3, 9, 9}, {5, 3, 2}});
  const memory::format_tag nhwc = memory::format_tag::acdb;
  for (const auto& c : cases) {
    SCOPED_TRACE(ShapeString(c.shape) + " kernel " + std::to_string(c.win.kernel));
    OpHarness h;
    std::vector<float> x = DistinctValues(NumElements(c.shape), 4);
    h.Feed("X", c.shape, x);
    MakeBlocked(h, "X", nhwc);
    h.Run(MakeOperator("MaxPool", {"X"}, {"Y", "ws"}, Args(c.win)));
    std::vector<int64_t> argmax;
    EXPECT_EQ(h.Fetch("Y"), NaivePool(x, c.shape, c.win, Mode::kMax, &argmax));
    EXPECT_TRUE(HasLayout(h, "Y", nhwc));

    h.Feed("dY", h.ShapeOf("Y"));  // plain: the gradient brings it to Y's layout
    std::vector<float> dy = h.Fetch("dY");
    h.Run(MakeOperator("MaxPoolGradient", {"X", "Y", "dY", "ws"}, {"dX"}, Args(c.win)));
    std::vector<float> expected(x.size(), 0.f);
    for (size_t o = 0; o < dy.size(); ++o) expected[argmax[o]] += dy[o];
    EXPECT_EQ(h.Fetch("dX"), expected);
    EXPECT_TRUE(HasLayout(h, "dX", nhwc));

    h.Run(MakeOperator("MaxPool", {"X"}, {"Y_inference"}, Args(c.win)));
    EXPECT_EQ(h.Fetch("Y_inference"), h.Fetch("Y"));
  }
}

// Among equal values the first in the window wins, as in oneDNN; a NaN wins its windows, as in
// PyTorch, so that a diverging net's NaN is not pooled away.
TEST(MaxPool, ChannelsLastTiesAndNaN) {
  const Shape shape{1, 2, 4, 4};
  const Window win{2, 2, 0};
  std::vector<float> x(NumElements(shape), 1.f);  // channel 0 all ties
  for (int i = 16; i < 32; ++i) x[i] = static_cast<float>(i);
  x[16 + 5] = std::numeric_limits<float>::quiet_NaN();  // channel 1, row 1, column 1
  OpHarness h;
  h.Feed("X", shape, x);
  MakeBlocked(h, "X", memory::format_tag::acdb);
  h.Run(MakeOperator("MaxPool", {"X"}, {"Y", "ws"}, Args(win)));
  const std::vector<float> y = h.Fetch("Y");
  EXPECT_TRUE(std::isnan(y[4])) << "channel 1's first window holds the NaN";
  EXPECT_EQ(y[5], 23.f);
  h.Feed("dY", h.ShapeOf("Y"), std::vector<float>(8, 1.f));
  h.Run(MakeOperator("MaxPoolGradient", {"X", "Y", "dY", "ws"}, {"dX"}, Args(win)));
  const std::vector<float> dx = h.Fetch("dX");
  for (int r : {0, 2}) {
    for (int col : {0, 2}) {
      EXPECT_EQ(dx[r * 4 + col], 1.f) << "tie: the window's first element";
      EXPECT_EQ(dx[r * 4 + col + 1] + dx[(r + 1) * 4 + col] + dx[(r + 1) * 4 + col + 1], 0.f);
    }
  }
  EXPECT_EQ(dx[16 + 5], 1.f) << "the NaN won its window";
  EXPECT_EQ(dx[16 + 0], 0.f);
}

TEST(AveragePool, BlockedInputMatchesPlain) {
  const Shape shape{1, 20, 5, 5};
  const Window win{3, 2, 1};
  OpHarness h;
  h.Feed("X", shape);
  std::vector<float> x = h.Fetch("X");
  MakeBlocked(h, "X");
  h.Run(MakeOperator("AveragePool", {"X"}, {"Y"}, Args(win)));
  EXPECT_LT(MaxAbsDiff(h.Fetch("Y"), NaivePool(x, shape, win, Mode::kAverageExcludePad)), 1e-5f);

  // The gradient is linear in dY: compare a blocked dY with its plain copy.
  h.Feed("dY", h.ShapeOf("Y"));
  h.Run(MakeOperator("AveragePoolGradient", {"X", "dY"}, {"dX_plain_dy"}, Args(win)));
  MakeBlocked(h, "dY");
  h.Run(MakeOperator("AveragePoolGradient", {"X", "dY"}, {"dX_blocked_dy"}, Args(win)));
  EXPECT_LT(MaxAbsDiff(h.Fetch("dX_plain_dy"), h.Fetch("dX_blocked_dy")), 1e-6f);
}

TEST(GlobalAveragePool, BlockedInput) {
  OpHarness h;
  h.Feed("X", {2, 17, 3, 3});
  std::vector<float> x = h.Fetch("X");
  h.Run(MakeOperator("GlobalAveragePool", {"X"}, {"Y_plain"}));
  MakeBlocked(h, "X");
  h.Run(MakeOperator("GlobalAveragePool", {"X"}, {"Y_blocked"}));
  EXPECT_LT(MaxAbsDiff(h.Fetch("Y_plain"), h.Fetch("Y_blocked")), 1e-6f);
}

TEST(MaxPool, RejectsKernelLargerThanPaddedInput) {
  OpHarness h;
  h.Feed("X", {1, 2, 3, 3});
  auto op = MakeOperator("MaxPool", {"X"}, {"Y"}, Args({6, 1, 1}));
  op.name = "pool1";
  ExpectValueError([&] { h.Run(op); }, "MaxPool 'pool1'");
  const OpSchema* schema = SchemaRegistry::Find("MaxPool");
  ExpectValueError([&] { schema->InferShapes(op, {{{1, 2, 3, 3}}}); }, "[1, 2, 3, 3]");
}

TEST(AveragePool, RejectsBadArguments) {
  OpHarness h;
  h.Feed("X", {1, 2, 5, 5});
  ExpectValueError(
      [&] {
        h.Run(MakeOperator("AveragePool", {"X"}, {"Y"}, Args({2, 1, 2})));
      },
      "AveragePool");
  ExpectValueError(
      [&] {
        h.Run(MakeOperator("AveragePool", {"X"}, {"Y"}, {{"stride", 1}}));
      },
      "kernel");
  h.Feed("X3", {2, 5, 5});
  ExpectValueError(
      [&] {
        h.Run(MakeOperator("AveragePool", {"X3"}, {"Y"}, Args({2, 1, 0})));
      },
      "[2, 5, 5]");
}

TEST(MaxPool, GradientNeedsWorkspace) {
  auto op = MakeOperator("MaxPool", {"X"}, {"Y"}, Args({2, 2, 0}));
  GradientHelper g(op, {"dY"}, {"dX"});
  EXPECT_ERROR((*GradientRegistry::Find("MaxPool"))(g), ValueError,
               "MaxPool: its gradient needs the workspace");
}

TEST(MaxPoolGradient, RejectsWrongGradientShape) {
  OpHarness h;
  h.Feed("X", {1, 2, 4, 4});
  h.Run(MakeOperator("MaxPool", {"X"}, {"Y", "ws"}, Args({2, 2, 0})));
  h.Feed("dY", {1, 2, 3, 3});
  ExpectValueError(
      [&] {
        h.Run(MakeOperator("MaxPoolGradient", {"X", "Y", "dY", "ws"}, {"dX"}, Args({2, 2, 0})));
      },
      "'dY' has shape [1, 2, 3, 3], expected [1, 2, 2, 2]");
  ExpectValueError(
      [&] {
        h.Run(MakeOperator("AveragePoolGradient", {"X", "dY"}, {"dX"}, Args({2, 2, 0})));
      },
      "AveragePoolGradient: input 1 'dY' has shape [1, 2, 3, 3], expected [1, 2, 2, 2]");
}

}  // namespace
}  // namespace crossbow::testing
