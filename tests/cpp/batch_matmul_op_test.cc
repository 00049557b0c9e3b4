#include <gtest/gtest.h>

#include "tests/cpp/op_test_util.h"

namespace crossbow::testing {
namespace {

OperatorDef Product(const std::string& a, const std::string& b, bool ta, bool tb,
                    const std::string& y = "Y") {
  return MakeOperator("BatchMatMul", {a, b}, {y},
                      {{"trans_a", int64_t{ta}}, {"trans_b", int64_t{tb}}});
}

// Element (i, j) of matrix n of a batch of [rows, cols] matrices, stored as such or, where
// `trans`, as their transposes [cols, rows].
float At(const std::vector<float>& a, int64_t rows, int64_t cols, bool trans, int64_t n, int64_t i,
         int64_t j) {
  return trans ? a[(n * cols + j) * rows + i] : a[(n * rows + i) * cols + j];
}

TEST(BatchMatMul, EachTransposeMatchesTheNaiveProduct) {
  const int64_t batch = 3, m = 4, k = 5, p = 2;
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      OpHarness h;
      h.Feed("A", ta ? Shape{batch, k, m} : Shape{batch, m, k});
      h.Feed("B", tb ? Shape{batch, p, k} : Shape{batch, k, p});
      h.Run(Product("A", "B", ta, tb));
      ASSERT_EQ(h.ShapeOf("Y"), (Shape{batch, m, p}));
      const std::vector<float> a = h.Fetch("A"), b = h.Fetch("B"), y = h.Fetch("Y");
      for (int64_t n = 0; n < batch; ++n) {
        for (int64_t i = 0; i < m; ++i) {
          for (int64_t j = 0; j < p; ++j) {
            double sum = 0;
            for (int64_t l = 0; l < k; ++l) {
              sum += At(a, m, k, ta, n, i, l) * At(b, k, p, tb, n, l, j);
            }
            EXPECT_NEAR(y[(n * m + i) * p + j], sum, 1e-5) << ta << tb << n << i << j;
          }
        }
      }
    }
  }
}

TEST(BatchMatMul, GradientMatchesNumericForEachTranspose) {
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      OpHarness h;
      h.Feed("A", ta ? Shape{2, 3, 4} : Shape{2, 4, 3});
      h.Feed("B", tb ? Shape{2, 5, 3} : Shape{2, 3, 5});
      CheckGradient(h, Product("A", "B", ta, tb), {0, 1});
    }
  }
}

// SimpleSelfAttention's X X^T reads X twice: autodiff names the two contributions apart and
// sums them, which must give dX = (G + G^T) X for the upstream gradient G.
TEST(BatchMatMul, GradientOfAGramMatrix) {
  const int64_t batch = 2, c = 3, l = 5;
  OpHarness h;
  h.Feed("X", {batch, c, l});
  h.Feed("G", {batch, c, c});
  const OperatorDef gram = Product("X", "X", false, true);
  const std::vector<OperatorDef> grads =
      (*GradientRegistry::Find("BatchMatMul"))(GradientHelper(gram, {"G"}, {"dA", "dB"}));
  h.Run(grads);
  const std::vector<float> x = h.Fetch("X"), g = h.Fetch("G"), da = h.Fetch("dA"),
                           db = h.Fetch("dB");
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t i = 0; i < c; ++i) {
      for (int64_t j = 0; j < l; ++j) {
        double want = 0;
        for (int64_t k = 0; k < c; ++k) {
          want += (g[(n * c + i) * c + k] + g[(n * c + k) * c + i]) * x[(n * c + k) * l + j];
        }
        const int64_t e = (n * c + i) * l + j;
        EXPECT_NEAR(da[e] + db[e], want, 1e-5) << n << " " << i << " " << j;
      }
    }
  }
}

TEST(BatchMatMul, ReadsBlockedInputsAsPlain) {
  OpHarness h;
  h.Feed("A", {2, 16, 3});
  h.Feed("B", {2, 3, 16});
  h.Run(Product("A", "B", false, false));
  const std::vector<float> plain = h.Fetch("Y");
  CopyToBlocked(h, "A", "Ab", dnnl::memory::format_tag::aBc16b);
  h.Run(Product("Ab", "B", false, false, "Yb"));
  EXPECT_LT(MaxAbsDiff(h.Fetch("Yb"), plain), 1e-6f);
}

TEST(BatchMatMul, RefusesShapesThatDoNotMultiply) {
  OpHarness h;
  h.Feed("A", {2, 4, 3});
  h.Feed("B", {2, 4, 5});
  h.Feed("C", {3, 3, 5});
  h.Feed("flat", {4, 3});
  ExpectValueError([&] { h.Run(Product("A", "B", false, false)); },
                   {"BatchMatMul", "A 'A' [2, 4, 3] and B 'B' [2, 4, 5] do not multiply"});
  ExpectValueError([&] { h.Run(Product("A", "C", false, false)); }, "do not multiply");
  ExpectValueError(
      [&] {
        InferShapes(Product("flat", "B", false, false), {{4, 3}, {2, 3, 5}});
      },
      "expected [N, M, K] and [N, K, P]");
  h.Run(Product("A", "B", true, false));
  EXPECT_EQ(h.ShapeOf("Y"), (Shape{2, 3, 5}));
}

}  // namespace
}  // namespace crossbow::testing
