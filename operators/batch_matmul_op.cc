#include "operators/batch_matmul_op.h"

#include <algorithm>

namespace crossbow {

using namespace dnnl_utils;

BatchMatMulDims BatchMatMulShape(const OperatorDef& def, const Shape& a, const Shape& b) {
  const bool trans_a = def.Arg<int64_t>("trans_a", 0) != 0;
  const bool trans_b = def.Arg<int64_t>("trans_b", 0) != 0;
  const bool ranks = a.size() == 3 && b.size() == 3;
  const bool fits = ranks && a[0] == b[0] && a[trans_a ? 1 : 2] == b[trans_b ? 2 : 1];
  CROSSBOW_ENFORCE_VALUE(fits, def.Label(), ": A '", def.inputs[0], "' ", ShapeString(a),
                         (trans_a ? " transposed" : ""), " and B '", def.inputs[1], "' ",
                         ShapeString(b), (trans_b ? " transposed" : ""),
                         " do not multiply: expected [N, M, K] and [N, K, P]");
  return {a[0], a[trans_a ? 2 : 1], a[trans_a ? 1 : 2], b[trans_b ? 1 : 2], trans_a, trans_b};
}

namespace {

// A [batch, rows, cols] logically, stored transposed ([batch, cols, rows]) where `trans`.
memory::desc MatrixDesc(int64_t batch, int64_t rows, int64_t cols, bool trans) {
  return memory::desc({batch, rows, cols}, memory::data_type::f32,
                      trans ? memory::format_tag::acb : memory::format_tag::abc);
}

}  // namespace

void BatchMatMulOp::Run() {
  const BatchMatMulDims d = BatchMatMulShape(def(), Input(0).shape(), Input(1).shape());
  const memory::desc a_md = MatrixDesc(d.batch, d.m, d.k, d.trans_a);
  const memory::desc b_md = MatrixDesc(d.batch, d.k, d.p, d.trans_b);
  const memory::desc y_md = MatrixDesc(d.batch, d.m, d.p, false);
  if (a_md != a_md_ || b_md != b_md_) {
    a_md_ = a_md;
    b_md_ = b_md;
    primitive_ = dnnl::matmul({{a_md, b_md, y_md}, Attributes(), context_->engine()});
  }
  const Tensor& a = a_plain_.AsPlain(Input(0), context_);
  const Tensor& b = b_plain_.AsPlain(Input(1), context_);
  Tensor* y = Output(0);
  y->Resize({d.batch, d.m, d.p});
  if (y->numel() == 0) return;
  if (d.k == 0) {
    std::fill_n(y->mutable_data<float>(), y->numel(), 0.f);
    return;
  }
  Execute(primitive_,
          {{DNNL_ARG_SRC, Wrap(a, a_md, context_)},
           {DNNL_ARG_WEIGHTS, Wrap(b, b_md, context_)},
           {DNNL_ARG_DST, Wrap(*y, y_md, context_)}},
          context_);
}

OPERATOR_SCHEMA(BatchMatMul)
    .NumInputs(2)
    .NumOutputs(1)
    .ShapeInference([](const OperatorDef& def, const std::vector<TensorShape>& in) {
      const BatchMatMulDims d = BatchMatMulShape(def, in[0].dims, in[1].dims);
      return std::vector<TensorShape>{{{d.batch, d.m, d.p}}};
    })
    .Doc("Batched matrix product: Y[n] = op(A[n]) op(B[n]), op transposing where asked.")
    .Input(0, "A", "[N, M, K], or [N, K, M] with trans_a")
    .Input(1, "B", "[N, K, P], or [N, P, K] with trans_b")
    .Output(0, "Y", "[N, M, P]")
    .Arg("trans_a", "int, default 0: 1 multiplies by A[n]^T")
    .Arg("trans_b", "int, default 0: 1 multiplies by B[n]^T");
REGISTER_CPU_OPERATOR(BatchMatMul, BatchMatMulOp);

namespace {

// dA and dB of Y = op(A) op(B) as two more products, by the four cases of op:
//   Y = A B:     dA = dY B^T,   dB = A^T dY
//   Y = A B^T:   dA = dY B,     dB = dY^T A
//   Y = A^T B:   dA = B dY^T,   dB = A dY
//   Y = A^T B^T: dA = B^T dY^T, dB = dY^T A^T
OperatorDef Product(const std::string& a, const std::string& b, bool ta, bool tb,
                    const std::string& out) {
  return MakeOperator("BatchMatMul", {a, b}, {out},
                      {{"trans_a", int64_t{ta}}, {"trans_b", int64_t{tb}}});
}

}  // namespace

REGISTER_GRADIENT(BatchMatMul, [](const GradientHelper& g) {
  const bool ta = g.def().Arg<int64_t>("trans_a", 0) != 0;
  const bool tb = g.def().Arg<int64_t>("trans_b", 0) != 0;
  const std::string& a = g.I(0);
  const std::string& b = g.I(1);
  const std::string& dy = g.GO(0);
  std::vector<OperatorDef> ops;
  if (!g.GI(0).empty()) {
    ops.push_back(ta ? Product(b, dy, tb, true, g.GI(0)) : Product(dy, b, false, !tb, g.GI(0)));
  }
  if (!g.GI(1).empty()) {
    ops.push_back(tb ? Product(dy, a, true, ta, g.GI(1)) : Product(a, dy, !ta, false, g.GI(1)));
  }
  return ops;
});

}  // namespace crossbow
