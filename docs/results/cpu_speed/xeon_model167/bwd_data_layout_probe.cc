// Throwaway: does oneDNN 2.6's bf16 backward-data take the forward pass's weight layout, and at
// what speed?
#include <chrono>
#include <cstdio>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>
using namespace dnnl;
using tag = memory::format_tag;
using dt = memory::data_type;
static std::string fmt(const memory::desc& md) {
  const auto& b = md.data.format_desc.blocking;
  std::string r;
  for (int k = 0; k < b.inner_nblks; ++k)
    r += std::to_string(b.inner_blks[k]) + char('a' + b.inner_idxs[k]);
  r += " s";
  for (int d = 0; d < md.data.ndims; ++d) r += " " + std::to_string(b.strides[d]);
  return r;
}
int main() {
  setvbuf(stdout, nullptr, _IONBF, 0);
  engine eng(engine::kind::cpu, 0);
  stream s(eng);
  struct S {
    int mb, c, m, h, stride;
  };
  for (S sh : {S{16, 512, 512, 4, 1}, S{16, 256, 256, 8, 1}, S{16, 64, 64, 32, 1},
               S{16, 128, 128, 16, 1}}) {
    int oh = sh.h / sh.stride;
    memory::desc x({sh.mb, sh.c, sh.h, sh.h}, dt::bf16, tag::any),
        w({sh.m, sh.c, 3, 3}, dt::bf16, tag::any), y({sh.mb, sh.m, oh, oh}, dt::bf16, tag::any);
    convolution_forward::desc fd(prop_kind::forward_training, algorithm::convolution_direct, x, w,
                                 y, {sh.stride, sh.stride}, {1, 1}, {1, 1});
    convolution_forward::primitive_desc fpd(fd, eng);
    auto time_bd = [&](const memory::desc& wd, const char* label) {
      try {
        convolution_backward_data::desc bd(algorithm::convolution_direct, x, wd, y,
                                           {sh.stride, sh.stride}, {1, 1}, {1, 1});
        convolution_backward_data::primitive_desc bpd(bd, eng, fpd);
        memory dx(bpd.diff_src_desc(), eng), ww(bpd.weights_desc(), eng),
            dy(bpd.diff_dst_desc(), eng);
        convolution_backward_data p(bpd);
        double best = 1e9;
        if (std::string(bpd.impl_info_str()).rfind("ref", 0) == 0) {
          printf("  bwd-data %-10s %s (reference: not timed)\n", label, bpd.impl_info_str());
          return;
        }
        for (int k = 0; k < 20; ++k) {
          auto t0 = std::chrono::steady_clock::now();
          p.execute(s, {{DNNL_ARG_DIFF_SRC, dx}, {DNNL_ARG_WEIGHTS, ww}, {DNNL_ARG_DIFF_DST, dy}});
          s.wait();
          best = std::min(
              best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                        .count());
        }
        printf("  bwd-data %-10s %-36s w=%-16s %.3f ms\n", label, bpd.impl_info_str(),
               fmt(bpd.weights_desc()).c_str(), best);
      } catch (const dnnl::error& e) {
        printf("  bwd-data %-10s unimplemented (%s)\n", label, e.what());
      }
    };
    printf("mb%d ic%d oc%d %dx%d: forward %s w=%s\n", sh.mb, sh.c, sh.m, sh.h, sh.h,
           fpd.impl_info_str(), fmt(fpd.weights_desc()).c_str());
    time_bd(w, "any");
    time_bd(fpd.weights_desc(), "fwd layout");
  }
}
