#include "crossbow/comm/mpi.h"

#ifdef CROSSBOW_WITH_MPI

#include <dlfcn.h>
#include <glog/logging.h>

#include <algorithm>
#include <cstring>
#include <thread>

#include "crossbow/core/enforce.h"

namespace crossbow {
namespace {

using Clock = std::chrono::steady_clock;

// Every MPI call of the process goes through this lock (MPI_THREAD_SERIALIZED).
std::mutex& MpiLock() {
  static std::mutex lock;
  return lock;
}

std::string MpiErrorString(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return std::string(text, length);
}

#define CROSSBOW_MPI_CALL(what, call)                                                           \
  do {                                                                                          \
    std::lock_guard<std::mutex> mpi_lock(MpiLock());                                            \
    const int mpi_code = (call);                                                                \
    CROSSBOW_ENFORCE(mpi_code == MPI_SUCCESS, what, ": MPI error: ", MpiErrorString(mpi_code)); \
  } while (0)

// Chunk r of a buffer of `count` floats over `size` ranks: [Offset(r), Offset(r + 1)).
int Offset(size_t count, int size, int r) {
  return static_cast<int>(count * static_cast<size_t>(r) / static_cast<size_t>(size));
}

}  // namespace

struct MpiGroup::Buffers {
  std::vector<int> counts, displacements;
  int64_t size = 0;
  std::vector<int64_t> sizes;
  std::string send, receive;
};

MPI_Comm InitMpi() {
  std::lock_guard<std::mutex> lock(MpiLock());
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (!initialised) {
    // Open MPI's plugins resolve symbols of libmpi, which a Python extension loads privately;
    // promote it to global before MPI_Init loads them.
    for (const char* name : {"libmpi.so.40", "libmpi.so.12", "libmpi.so"}) {
      if (dlopen(name, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD) != nullptr) break;
    }
    int provided = 0;
    const int code = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
    CROSSBOW_ENFORCE(code == MPI_SUCCESS, "MPI_Init_thread failed: ", MpiErrorString(code));
    CROSSBOW_ENFORCE(provided >= MPI_THREAD_SERIALIZED, "this MPI provides thread level ", provided,
                     "; Crossbow needs MPI_THREAD_SERIALIZED (", MPI_THREAD_SERIALIZED, ")");
    // Errors come back as codes and become exceptions, instead of ending the job in MPI.
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  }
  return MPI_COMM_WORLD;
}

MpiGroup::MpiGroup(MPI_Comm comm) {
  CROSSBOW_MPI_CALL("MPI_Comm_dup", MPI_Comm_dup(comm, &data_));
  CROSSBOW_MPI_CALL("MPI_Comm_dup", MPI_Comm_dup(comm, &control_));
  CROSSBOW_MPI_CALL("MPI_Comm_size", MPI_Comm_size(comm, &size_));
  CROSSBOW_MPI_CALL("MPI_Comm_rank", MPI_Comm_rank(comm, &rank_));
  for (MPI_Comm c : {data_, control_}) MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
}

// The communicators are left to MPI_Finalize: freeing them needs MPI alive and the group whole.
MpiGroup::~MpiGroup() = default;

void MpiGroup::Abort(const std::string& reason) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (reason_.empty()) reason_ = reason;
}

bool MpiGroup::broken() {
  std::lock_guard<std::mutex> lock(mutex_);
  return !reason_.empty();
}

void MpiGroup::ThrowIfBroken(const char* what) {
  std::lock_guard<std::mutex> lock(mutex_);
  CROSSBOW_ENFORCE(reason_.empty(), what, " on rank ", rank_, " of ", size_, ": ", reason_);
}

void MpiGroup::Wait(MPI_Request* request, Clock::time_point deadline,
                    std::chrono::milliseconds timeout, const char* what,
                    std::shared_ptr<Buffers> buffers) {
  auto nap = std::chrono::microseconds(1);
  for (;;) {
    int done = 0;
    CROSSBOW_MPI_CALL(what, MPI_Test(request, &done, MPI_STATUS_IGNORE));
    if (done) return;
    std::string failure;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!reason_.empty()) {
        failure = detail::Concat(what, " on rank ", rank_, " of ", size_, " aborted: ", reason_);
      } else if (Clock::now() >= deadline) {
        failure = detail::Concat(what, " on rank ", rank_, " of ", size_, " timed out after ",
                                 timeout.count(), " ms: another rank died, hangs or stopped ",
                                 "training (collective_timeout)");
        reason_ = failure;
      }
      if (!failure.empty()) {
        if (buffers) abandoned_.push_back(std::move(buffers));
      }
    }
    if (!failure.empty()) {
      LOG(ERROR) << failure;
      CROSSBOW_FAIL(failure);
    }
    // Polling costs a core while spinning: back off to 1 ms, which is noise next to an iteration.
    std::this_thread::sleep_for(nap);
    nap = std::min(nap * 2, std::chrono::microseconds(1000));
  }
}

void MpiGroup::AllReduceSum(int rank, float* data, size_t count, ContextBase*,
                            std::chrono::milliseconds timeout) {
  CROSSBOW_ENFORCE_VALUE(rank == rank_, "all-reduce across ranks: called as rank ", rank,
                         " on rank ", rank_);
  CROSSBOW_ENFORCE_VALUE(count <= static_cast<size_t>(INT32_MAX),
                         "all-reduce across ranks: ", count,
                         " floats are more than MPI's int counts hold");
  ThrowIfBroken("all-reduce across ranks");
  if (size_ == 1) return;
  const auto deadline = Clock::now() + timeout;
  // MPI reads the count arrays until a non-blocking collective completes: they are members.
  counts_.resize(size_);
  offsets_.resize(size_);
  mine_.resize(size_);
  at_.resize(size_);
  for (int r = 0; r < size_; ++r) {
    offsets_[r] = Offset(count, size_, r);
    counts_[r] = Offset(count, size_, r + 1) - offsets_[r];
  }
  const int length = counts_[rank_];
  for (int r = 0; r < size_; ++r) {
    mine_[r] = length;
    at_[r] = r * length;
  }
  result_.assign(data, data + count);
  chunks_.resize(static_cast<size_t>(length) * size_);
  MPI_Request request;
  CROSSBOW_MPI_CALL(
      "all-reduce across ranks (all-to-all)",
      MPI_Ialltoallv(result_.data(), counts_.data(), offsets_.data(), MPI_FLOAT, chunks_.data(),
                     mine_.data(), at_.data(), MPI_FLOAT, data_, &request));
  Wait(&request, deadline, timeout, "all-reduce across ranks (all-to-all)", nullptr);
  float* sum = result_.data() + offsets_[rank_];
  std::copy_n(chunks_.data(), length, sum);
  for (int r = 1; r < size_; ++r) {
    const float* part = chunks_.data() + static_cast<size_t>(r) * length;
    for (int i = 0; i < length; ++i) sum[i] += part[i];
  }
  CROSSBOW_MPI_CALL("all-reduce across ranks (all-gather)",
                    MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_FLOAT, result_.data(), counts_.data(),
                                    offsets_.data(), MPI_FLOAT, data_, &request));
  Wait(&request, deadline, timeout, "all-reduce across ranks (all-gather)", nullptr);
  std::copy_n(result_.data(), count, data);
}

std::vector<std::string> MpiGroup::AllGather(const std::string& bytes,
                                             std::chrono::milliseconds timeout) {
  return Collect(bytes, -1, "all-gather", timeout);
}

std::vector<std::string> MpiGroup::Gather(const std::string& bytes, int root,
                                          std::chrono::milliseconds timeout) {
  CROSSBOW_ENFORCE_VALUE(root >= 0 && root < size_, "gather: root ", root, " is outside the ",
                         size_, " ranks");
  return Collect(bytes, root, "gather", timeout);
}

// root < 0: to every rank. Sizes first, then the bytes.
std::vector<std::string> MpiGroup::Collect(const std::string& bytes, int root, const char* what,
                                           std::chrono::milliseconds timeout) {
  ThrowIfBroken(what);
  const auto deadline = Clock::now() + timeout;
  CROSSBOW_ENFORCE_VALUE(bytes.size() <= static_cast<size_t>(INT32_MAX), what, ": rank ", rank_,
                         " sends ", bytes.size(), " bytes, more than MPI's int counts hold");
  auto b = std::make_shared<Buffers>();
  b->send = bytes;
  b->sizes.assign(size_, 0);
  b->size = static_cast<int64_t>(bytes.size());
  MPI_Request request;
  if (root < 0) {
    CROSSBOW_MPI_CALL(what, MPI_Iallgather(&b->size, 1, MPI_INT64_T, b->sizes.data(), 1,
                                           MPI_INT64_T, control_, &request));
  } else {
    CROSSBOW_MPI_CALL(what, MPI_Igather(&b->size, 1, MPI_INT64_T, b->sizes.data(), 1, MPI_INT64_T,
                                        root, control_, &request));
  }
  Wait(&request, deadline, timeout, what, b);
  const bool receives = root < 0 || root == rank_;
  b->counts.assign(size_, 0);
  b->displacements.assign(size_, 0);
  int64_t total = 0;
  for (int r = 0; receives && r < size_; ++r) {
    b->counts[r] = static_cast<int>(b->sizes[r]);
    b->displacements[r] = static_cast<int>(total);
    total += b->sizes[r];
  }
  CROSSBOW_ENFORCE_VALUE(total <= INT32_MAX, what, ": ", total,
                         " bytes in all, more than MPI's int counts hold");
  b->receive.resize(static_cast<size_t>(total));
  if (root < 0) {
    CROSSBOW_MPI_CALL(what, MPI_Iallgatherv(b->send.data(), static_cast<int>(b->size), MPI_BYTE,
                                            b->receive.data(), b->counts.data(),
                                            b->displacements.data(), MPI_BYTE, control_, &request));
  } else {
    CROSSBOW_MPI_CALL(
        what, MPI_Igatherv(b->send.data(), static_cast<int>(b->size), MPI_BYTE, b->receive.data(),
                           b->counts.data(), b->displacements.data(), MPI_BYTE, root, control_,
                           &request));
  }
  Wait(&request, deadline, timeout, what, b);
  std::vector<std::string> out;
  for (int r = 0; receives && r < size_; ++r) {
    out.push_back(b->receive.substr(b->displacements[r], b->counts[r]));
  }
  return out;
}

}  // namespace crossbow

#endif  // CROSSBOW_WITH_MPI
