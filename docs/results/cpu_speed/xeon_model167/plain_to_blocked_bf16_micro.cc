// Throwaway: oneDNN's f32 oihw -> bf16 blocked reorder against PlainToBlockedBf16.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "operators/plain_to_blocked_bf16.h"
using namespace crossbow;
using dnnl::memory;
using Tag = memory::format_tag;
int main(int argc, char** argv) {
  struct C {
    memory::dims d;
    Tag t;
    const char* name;
  };
  std::vector<C> cases = {
      {{512, 512, 3, 3}, Tag::AcdB16b16a2b, "512x512x3x3 AcdB16b16a2b"},
      {{512, 512, 3, 3}, Tag::ABcd16b16a2b, "512x512x3x3 ABcd16b16a2b"},
      {{512, 512, 3, 3}, Tag::ABcd8b16a2b, "512x512x3x3 ABcd8b16a2b"},
      {{512, 512, 3, 3}, Tag::AcdB16b64a2b, "512x512x3x3 AcdB16b64a2b"},
      {{512, 512, 3, 3}, Tag::ABcd16a16b2a, "512x512x3x3 ABcd16a16b2a"},
      {{256, 256, 3, 3}, Tag::AcdB16b16a2b, "256x256x3x3 AcdB16b16a2b"},
  };
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  for (auto& c : cases) {
    memory::desc plain(c.d, memory::data_type::f32, Tag::abcd),
        to(c.d, memory::data_type::bf16, c.t);
    size_t n = plain.get_size() / 4;
    std::vector<float> src(n);
    for (size_t i = 0; i < n; ++i) src[i] = (i % 977) * 0.001f;
    std::vector<uint16_t> a(to.get_size() / 2), b(to.get_size() / 2);
    memory ma(plain, engine, src.data()), mb(to, engine, a.data());
    dnnl::reorder r(ma, mb);
    auto copy = PlainToBlockedBf16::For(plain, to);
    static std::vector<char> junk(256 << 20);
    auto time = [&](auto f) {
      double best = 1e9;
      for (int k = 0; k < 30; ++k) {
        if (getenv("COLD")) {
          for (size_t q = 0; q < junk.size(); q += 64) junk[q]++;
        }
        auto t0 = std::chrono::steady_clock::now();
        f();
        auto t1 = std::chrono::steady_clock::now();
        best = std::min(best, std::chrono::duration<double, std::milli>(t1 - t0).count());
      }
      return best;
    };
    double t1 = time([&] {
      r.execute(stream, ma, mb);
      stream.wait();
    });
    double t2 = time([&] { copy->Run(src.data(), b.data()); });
    printf("%-28s onednn %.3f ms (%.2f el/ns)  own %.3f ms (%.2f el/ns)  same=%d\n", c.name, t1,
           n / t1 / 1e6, t2, n / t2 / 1e6, (int)(a == b));
  }
}
