// One thread: the evidence behind PrefersMatmul and MatmulConv
// (operators/conv_op.h, matmul_conv.h), three parts:
//  1. bf16 3x3 convolutions of ResNet-18/50 at batch 16 as oneDNN 2.6's convolution primitives
//     against im2col + its matmul, each pass alone and warm (median of 20; im2col a plain loop);
//  2. the products with W in its plain layout (read transposed for Y = Xu W^T) against the
//     layout the matmul picks ("any"), with the fp32 -> bf16 conversion each needs;
//  3. that conversion of 3x3 weights into the plain oihw and into ohwi (the order Xu's columns
//     would need for a memcpy unfolding), warm and cold (64 MiB written between runs).
// g++ -O2 -march=native -std=c++17 matmul_conv_micro.cc -ldnnl && OMP_NUM_THREADS=1 ./a.out
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <oneapi/dnnl/dnnl.hpp>
#include <tuple>
#include <vector>
using namespace dnnl;
using tag = memory::format_tag;
using dt = memory::data_type;
using dims = memory::dims;
static double TimeMs(
    const std::function<void()>& f, const std::function<void()>& before = [] {}) {
  f();
  f();
  std::vector<double> t;
  for (int r = 0; r < 20; ++r) {
    before();
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
  for (size_t i = 0; i < n; ++i) p[i] = (i * 7919 % 251) & 0x3f;  // small bf16/f32 bit patterns
}
static void ConvAgainstMatmul(engine& eng, stream& s) {
  struct S {
    int mb, c, m, h, stride;
  };
  for (S sh :
       {S{16, 512, 512, 4, 1}, S{16, 256, 512, 8, 2}, S{16, 512, 512, 8, 2}, S{16, 128, 256, 16, 2},
        S{16, 128, 256, 8, 2}, S{16, 256, 256, 4, 1}, S{16, 256, 256, 8, 1}, S{16, 128, 128, 8, 1},
        S{16, 512, 512, 7, 1}, S{16, 256, 512, 14, 2}, S{16, 128, 256, 28, 2},
        S{16, 64, 128, 32, 2}, S{16, 64, 128, 56, 2}, S{16, 256, 256, 14, 1}}) {
    int oh = (sh.h + 2 - 3) / sh.stride + 1;
    long M = long(sh.mb) * oh * oh, K = long(sh.c) * 9, N = sh.m;
    double gflop = 2.0 * M * K * N / 1e9;
    memory::desc x({sh.mb, sh.c, sh.h, sh.h}, dt::bf16, tag::any),
        w({sh.m, sh.c, 3, 3}, dt::bf16, tag::any), wf({sh.m, sh.c, 3, 3}, dt::f32, tag::any),
        y({sh.mb, sh.m, oh, oh}, dt::bf16, tag::any);
    convolution_forward::primitive_desc fpd({prop_kind::forward_training,
                                             algorithm::convolution_direct,
                                             x,
                                             w,
                                             y,
                                             {sh.stride, sh.stride},
                                             {1, 1},
                                             {1, 1}},
                                            eng);
    convolution_backward_data::primitive_desc dpd(
        {algorithm::convolution_direct, x, w, y, {sh.stride, sh.stride}, {1, 1}, {1, 1}}, eng, fpd);
    convolution_backward_weights::primitive_desc wpd(
        {algorithm::convolution_direct, x, wf, y, {sh.stride, sh.stride}, {1, 1}, {1, 1}}, eng,
        fpd);
    memory X(fpd.src_desc(), eng), W(fpd.weights_desc(), eng), Y(fpd.dst_desc(), eng),
        WD(dpd.weights_desc(), eng), DX(dpd.diff_src_desc(), eng), DY(dpd.diff_dst_desc(), eng),
        DW(wpd.diff_weights_desc(), eng), X2(wpd.src_desc(), eng), DY2(wpd.diff_dst_desc(), eng);
    for (memory* m : {&X, &W, &Y, &WD, &DX, &DY, &DW, &X2, &DY2}) Fill(*m);
    convolution_forward cf(fpd);
    convolution_backward_data cd(dpd);
    convolution_backward_weights cw(wpd);
    double tf = TimeMs([&] {
      cf.execute(s, {{DNNL_ARG_SRC, X}, {DNNL_ARG_WEIGHTS, W}, {DNNL_ARG_DST, Y}});
      s.wait();
    });
    double td = TimeMs([&] {
      cd.execute(s, {{DNNL_ARG_DIFF_DST, DY}, {DNNL_ARG_WEIGHTS, WD}, {DNNL_ARG_DIFF_SRC, DX}});
      s.wait();
    });
    double tw = TimeMs([&] {
      cw.execute(s, {{DNNL_ARG_SRC, X2}, {DNNL_ARG_DIFF_DST, DY2}, {DNNL_ARG_DIFF_WEIGHTS, DW}});
      s.wait();
    });
    // Weight conversions as today: fp32 oihw -> bf16 forward layout, -> bf16 backward-data layout.
    memory WP({{sh.m, sh.c, 3, 3}, dt::f32, tag::oihw}, eng),
        WPB({{sh.m, sh.c, 3, 3}, dt::bf16, tag::oihw}, eng);
    Fill(WP);
    reorder r1(WP, W), r2(WP, WD), r3(WP, WPB);
    double tr1 = TimeMs([&] {
      r1.execute(s, WP, W);
      s.wait();
    });
    double tr2 = TimeMs([&] {
      r2.execute(s, WP, WD);
      s.wait();
    });
    double tr3 = TimeMs([&] {
      r3.execute(s, WP, WPB);
      s.wait();
    });
    // im2col + matmul: Xcol [M, K] with K in (c, kh, kw) order, W plain [N, K] bf16.
    memory::desc xcol({M, K}, dt::bf16, tag::ab), wT({K, N}, dt::bf16, dims{1, K}),
        wN({N, K}, dt::bf16, tag::ab), ymd({M, N}, dt::bf16, tag::ab),
        dyT({N, M}, dt::bf16, dims{1, N}), dxcol({M, K}, dt::f32, tag::ab),
        dwmd({N, K}, dt::f32, tag::ab);
    matmul::primitive_desc mf({xcol, wT, ymd}, eng), md({ymd, wN, dxcol}, eng),
        mw({dyT, xcol, dwmd}, eng);
    memory XC(xcol, eng), YM(ymd, eng), DXC(dxcol, eng), DWM(dwmd, eng);
    Fill(XC);
    Fill(YM);
    matmul pf(mf), pd(md), pw(mw);
    double mtf = TimeMs([&] {
      pf.execute(s, {{DNNL_ARG_SRC, XC},
                     {DNNL_ARG_WEIGHTS, memory(wT, eng, WPB.get_data_handle())},
                     {DNNL_ARG_DST, YM}});
      s.wait();
    });
    double mtd = TimeMs([&] {
      pd.execute(s, {{DNNL_ARG_SRC, YM},
                     {DNNL_ARG_WEIGHTS, memory(wN, eng, WPB.get_data_handle())},
                     {DNNL_ARG_DST, DXC}});
      s.wait();
    });
    double mtw = TimeMs([&] {
      pw.execute(s, {{DNNL_ARG_SRC, memory(dyT, eng, YM.get_data_handle())},
                     {DNNL_ARG_WEIGHTS, XC},
                     {DNNL_ARG_DST, DWM}});
      s.wait();
    });
    // naive im2col from nhwc bf16 (uint16) into (c, kh, kw) order
    std::vector<uint16_t> xn(size_t(sh.mb) * sh.h * sh.h * sh.c, 1), col(size_t(M * K));
    double tic = TimeMs([&] {
      for (int n = 0; n < sh.mb; ++n)
        for (int a = 0; a < oh; ++a)
          for (int b = 0; b < oh; ++b) {
            uint16_t* row = &col[((size_t(n) * oh + a) * oh + b) * K];
            for (int kh = 0; kh < 3; ++kh)
              for (int kw = 0; kw < 3; ++kw) {
                int ih = a * sh.stride + kh - 1, iw = b * sh.stride + kw - 1;
                uint16_t* d = row + kh * 3 + kw;
                if (ih < 0 || iw < 0 || ih >= sh.h || iw >= sh.h) {
                  for (int c = 0; c < sh.c; ++c) d[c * 9] = 0;
                } else {
                  const uint16_t* src = &xn[((size_t(n) * sh.h + ih) * sh.h + iw) * sh.c];
                  for (int c = 0; c < sh.c; ++c) d[c * 9] = src[c];
                }
              }
          }
    });
    printf("mb%d ic%d oc%d %dx%d s%d  (%.2f GFLOP)\n", sh.mb, sh.c, sh.m, sh.h, sh.h, sh.stride,
           gflop);
    printf("  conv   fwd %6.3f  bwd_d %6.3f  bwd_w %6.3f ms   (%s | %s | %s)\n", tf, td, tw,
           fpd.impl_info_str(), dpd.impl_info_str(), wpd.impl_info_str());
    printf("  reorder f32 oihw->fwd %6.3f ->bwd_d %6.3f ->bf16 oihw %6.3f ms\n", tr1, tr2, tr3);
    printf("  matmul fwd %6.3f  bwd_d %6.3f  bwd_w %6.3f ms   (%s | %s | %s)  im2col naive %6.3f\n",
           mtf, mtd, mtw, mf.impl_info_str(), md.impl_info_str(), mw.impl_info_str(), tic);
  }
}
static void WeightsLayout(engine& eng, stream& s) {
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
static void WeightConversion(engine& eng, stream& s) {
  std::vector<char> big(64 << 20, 1);
  auto flush = [&] {
    for (size_t i = 0; i < big.size(); i += 64) big[i]++;
  };
  for (int c : {512, 256}) {
    memory src({{512, c, 3, 3}, dt::f32, tag::oihw}, eng),
        a({{512, c, 3, 3}, dt::bf16, tag::oihw}, eng),
        b({{512, c, 3, 3}, dt::bf16, tag::ohwi}, eng);
    float* p = (float*)src.get_data_handle();
    for (size_t i = 0; i < 512ul * c * 9; ++i) p[i] = i * 1e-6f;
    reorder ra(src, a), rb(src, b);
    auto pa = reorder::primitive_desc(src, a), pb = reorder::primitive_desc(src, b);
    printf(
        "512x%dx3x3 f32 oihw -> bf16 oihw %s warm %.3f cold %.3f; -> bf16 ohwi %s warm %.3f cold "
        "%.3f ms\n",
        c, pa.impl_info_str(), TimeMs([&] { ra.execute(s, src, a); }),
        TimeMs([&] { ra.execute(s, src, a); }, flush), pb.impl_info_str(),
        TimeMs([&] { rb.execute(s, src, b); }), TimeMs([&] { rb.execute(s, src, b); }, flush));
  }
}
int main() {
  engine eng(engine::kind::cpu, 0);
  stream s(eng);
  printf("== 1. convolution against matmul\n");
  ConvAgainstMatmul(eng, s);
  printf("== 2. W plain against the matmul's layout\n");
  WeightsLayout(eng, s);
  printf("== 3. fp32 oihw -> bf16\n");
  WeightConversion(eng, s);
}
