// Issue 33, nineteenth session: oneDNN 2.6's fp32 oihw -> bf16 conversion of 3x3 weights into
// the plain oihw and into ohwi (the order Xu's columns would need for memcpy unfolding), warm
// and cold (64 MiB written between runs), one thread, median of 15.
// g++ -O2 -march=native -std=c++17 weight_conversion_micro.cc -ldnnl && OMP_NUM_THREADS=1 ./a.out
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <oneapi/dnnl/dnnl.hpp>
#include <vector>
using namespace dnnl;
using tag = memory::format_tag;
using dt = memory::data_type;
static double TimeMs(const std::function<void()>& f, const std::function<void()>& flush,
                     int reps = 15) {
  f();
  f();
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    flush();
    auto a = std::chrono::steady_clock::now();
    f();
    t.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}
int main() {
  engine eng(engine::kind::cpu, 0);
  stream s(eng);
  std::vector<char> big(64 << 20, 1);
  auto flush = [&] {
    for (size_t i = 0; i < big.size(); i += 64) big[i]++;
  };
  auto none = [] {};
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
        c, pa.impl_info_str(), TimeMs([&] { ra.execute(s, src, a); }, none),
        TimeMs([&] { ra.execute(s, src, a); }, flush), pb.impl_info_str(),
        TimeMs([&] { rb.execute(s, src, b); }, none),
        TimeMs([&] { rb.execute(s, src, b); }, flush));
  }
}
