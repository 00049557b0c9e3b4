// The cost of one iteration's synchronisation across ranks: MpiGroup::AllReduceSum (the
// deterministic chunked all-reduce the engine uses) and, for comparison, MPI_Allreduce, on
// buffers of the given float counts. Run under mpirun; rank 0 prints one JSON line per size:
//   mpirun -np 2 build/crossbow_bench_allreduce --floats 464154 25557032 --rounds 5 --iters 20
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "crossbow/comm/mpi.h"

namespace {

using Clock = std::chrono::steady_clock;

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <typename Op>
std::vector<double> Rounds(int rounds, int iters, Op op) {
  std::vector<double> out;
  op();  // warm-up: connections, buffers
  for (int r = 0; r < rounds; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    const auto start = Clock::now();
    for (int i = 0; i < iters; ++i) op();
    out.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count() / iters);
  }
  return out;
}

std::string Json(const std::vector<double>& ms) {
  const auto [lo, hi] = std::minmax_element(ms.begin(), ms.end());
  char text[128];
  std::snprintf(text, sizeof(text), "{\"median_ms\": %.4f, \"min_ms\": %.4f, \"max_ms\": %.4f}",
                Median(ms), *lo, *hi);
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<size_t> sizes;
  int rounds = 5, iters = 20;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--rounds") && i + 1 < argc) {
      rounds = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--iters") && i + 1 < argc) {
      iters = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--floats")) {
      while (i + 1 < argc && argv[i + 1][0] != '-') sizes.push_back(std::stoul(argv[++i]));
    }
  }
  crossbow::MpiGroup group(crossbow::InitMpi());
  const auto timeout = std::chrono::milliseconds(600000);
  for (size_t n : sizes) {
    std::vector<float> data(n, 1.f);
    const auto ours = Rounds(
        rounds, iters, [&] { group.AllReduceSum(group.rank(), data.data(), n, nullptr, timeout); });
    const auto mpi = Rounds(rounds, iters, [&] {
      MPI_Allreduce(MPI_IN_PLACE, data.data(), static_cast<int>(n), MPI_FLOAT, MPI_SUM,
                    MPI_COMM_WORLD);
    });
    if (group.rank() == 0) {
      std::printf(
          "{\"ranks\": %d, \"floats\": %zu, \"deterministic\": %s, \"mpi_allreduce\": %s}\n",
          group.size(), n, Json(ours).c_str(), Json(mpi).c_str());
      std::fflush(stdout);
    }
  }
  MPI_Finalize();
  return 0;
}
