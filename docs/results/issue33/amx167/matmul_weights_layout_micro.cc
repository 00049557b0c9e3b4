// Issue 33, nineteenth session: MatmulConv's products with W in its plain layout (read
// transposed for Y = Xu W^T) against the layout oneDNN's matmul picks ("any"), warm, one
// thread, with the fp32 -> bf16 conversion each needs: why MatmulConv converts W plainly.
// g++ -O2 -march=native -std=c++17 matmul_weights_layout_micro.cc -ldnnl && OMP_NUM_THREADS=1
// ./a.out
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <oneapi/dnnl/dnnl.hpp>
#include <vector>
using namespace dnnl;
using tag = memory::format_tag;
using dt = memory::data_type;
using dims = memory::dims;
static double TimeMs(const std::function<void()>& f, int reps = 20) {
  f();
  f();
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    auto a = std::chrono::steady_clock::now();
    f();
    t.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}
static void Fill(memory& m) {
  auto* p = static_cast<uint8_t*>(m.get_data_handle());
  size_t n = m.get_desc().get_size();
  for (size_t i = 0; i < n; ++i) p[i] = (i * 7919 % 251) & 0x3f;
}
int main() {
  engine eng(engine::kind::cpu, 0);
  stream s(eng);
  for (auto [M, K, N] : std::vector<std::tuple<long, long, long>>{
           {256, 4608, 512}, {256, 2304, 512}, {1024, 1152, 256}}) {
    memory::desc xcol({M, K}, dt::bf16, tag::ab), wTp({K, N}, dt::bf16, dims{1, K}),
        wTany({K, N}, dt::bf16, tag::any), wNp({N, K}, dt::bf16, tag::ab),
        wNany({N, K}, dt::bf16, tag::any), ymd({M, N}, dt::bf16, tag::ab),
        dxcol({M, K}, dt::f32, tag::ab);
    memory::desc wTf32({K, N}, dt::f32, dims{1, K}), wNf32({N, K}, dt::f32, tag::ab);
    matmul::primitive_desc fp({xcol, wTp, ymd}, eng), fa({xcol, wTany, ymd}, eng),
        dp({ymd, wNp, dxcol}, eng), da({ymd, wNany, dxcol}, eng);
    memory XC(xcol, eng), YM(ymd, eng), DXC(dxcol, eng), WF(wNf32, eng), WB(wNp, eng),
        WFA(fa.weights_desc(), eng), WDA(da.weights_desc(), eng);
    Fill(XC);
    Fill(YM);
    Fill(WF);
    reorder rp(memory(wNf32, eng, WF.get_data_handle()), WB),
        rfa(memory(wTf32, eng, WF.get_data_handle()), WFA), rda(WF, WDA);
    memory WFn(wNf32, eng, WF.get_data_handle()), WFt(wTf32, eng, WF.get_data_handle());
    double trp = TimeMs([&] {
      rp.execute(s, WFn, WB);
      s.wait();
    });
    double trfa = TimeMs([&] {
      rfa.execute(s, WFt, WFA);
      s.wait();
    });
    double trda = TimeMs([&] {
      rda.execute(s, WF, WDA);
      s.wait();
    });
    matmul mfp(fp), mfa(fa), mdp(dp), mda(da);
    double a = TimeMs([&] {
      mfp.execute(s, {{DNNL_ARG_SRC, XC},
                      {DNNL_ARG_WEIGHTS, memory(wTp, eng, WB.get_data_handle())},
                      {DNNL_ARG_DST, YM}});
      s.wait();
    });
    double b = TimeMs([&] {
      mfa.execute(s, {{DNNL_ARG_SRC, XC}, {DNNL_ARG_WEIGHTS, WFA}, {DNNL_ARG_DST, YM}});
      s.wait();
    });
    double c = TimeMs([&] {
      mdp.execute(s, {{DNNL_ARG_SRC, YM}, {DNNL_ARG_WEIGHTS, WB}, {DNNL_ARG_DST, DXC}});
      s.wait();
    });
    double d = TimeMs([&] {
      mda.execute(s, {{DNNL_ARG_SRC, YM}, {DNNL_ARG_WEIGHTS, WDA}, {DNNL_ARG_DST, DXC}});
      s.wait();
    });
    printf(
        "M%ld K%ld N%ld: fwd plain %.3f (+conv %.3f) any %.3f (+reorder %.3f); data plain %.3f any "
        "%.3f (+reorder %.3f)\n",
        M, K, N, a, trp, b, trfa, c, d, trda);
  }
}
