#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "crossbow/core/operator.h"
#include "crossbow/core/shape_inference.h"

namespace crossbow {

struct MemoryStats {
  size_t planned_bytes = 0;    // intermediate blobs with buffer reuse
  size_t unplanned_bytes = 0;  // the same blobs, each in its own buffer
};

// A compiled net: one NetDef's operators bound to one context. Blobs that exist in `parent`
// when the net is compiled (parameters, inputs, optimiser state) are read and written there;
// every other blob is the net's own, in a child workspace. After the first run, the net's own
// blobs move into shared buffers chosen by liveness (except those in `keep`, which callers
// fetch), and later runs allocate nothing. On a context that can record its work (CUDA), each
// slice [begin, end) that has run once with its final buffers (memory planned, or a net that
// is never planned) is recorded on its next run and replayed from then on.
class Net {
 public:
  Net(const NetDef& def, Workspace* parent, ContextBase* context,
      const std::set<std::string>& keep = {}, bool plan_memory = true);

  // Runs operators [begin, end); a whole iteration may be run in several slices.
  void Run(size_t begin = 0, size_t end = static_cast<size_t>(-1));
  // Stops recording and replaying: every later run issues its operators one by one.
  void DisableCapture();
  // Forgets the recorded slices (a parent blob they read, such as the input, was reallocated):
  // each is recorded again, with the new addresses, on its second run from now.
  void ForgetRecordings() { slices_.clear(); }
  bool replaying(size_t begin, size_t end) const;
  size_t size() const { return ops_.size(); }
  Tensor* Blob(const std::string& name) { return ws_.GetTensor(name); }
  const NetDef& def() const { return def_; }
  const std::map<std::string, TensorShape>& shapes() const { return shapes_; }
  const MemoryStats& memory_stats() const { return stats_; }

 private:
  void PlanAndBind();
  void RunOps(size_t begin, size_t end);

  NetDef def_;
  Workspace ws_;
  ContextBase* context_;
  std::set<std::string> keep_;
  bool plan_memory_;
  bool planned_ = false;
  std::map<std::string, TensorShape> shapes_;
  std::vector<std::unique_ptr<OperatorBase>> ops_;
  std::vector<std::shared_ptr<uint8_t>> buffers_;
  struct Slice {
    int runs = 0;  // with the final buffers
    std::unique_ptr<CapturedWork> work;
  };
  bool capture_ = true;
  std::map<std::pair<size_t, size_t>, Slice> slices_;
  MemoryStats stats_;
};

}  // namespace crossbow
