#pragma once

#include <string>
#include <vector>

#include "crossbow/engine/learner.h"

namespace crossbow {

// A model's parameters and state blobs (batch-norm statistics), as the synchronisers see
// them: each blob's place in one flat buffer laid out [parameters | state | one count].
class ModelLayout {
 public:
  struct Entry {
    std::string name;
    Shape shape;
    int64_t offset = 0, numel = 0;
  };

  ModelLayout() = default;
  // Takes the shapes from `reference`; every blob must be a plain float32 tensor.
  explicit ModelLayout(Learner& reference);

  const std::vector<Entry>& params() const { return params_; }
  const std::vector<Entry>& state() const { return state_; }
  int64_t param_floats() const { return param_floats_; }
  int64_t count_offset() const { return count_offset_; }
  int64_t total() const { return count_offset_ + 1; }

  // One tensor per entry, each a view of its place in `flat` (floats laid out as this layout).
  static std::vector<Tensor> Views(const std::shared_ptr<uint8_t>& flat, Device device,
                                   const std::vector<Entry>& entries);

 private:
  std::vector<Entry> params_, state_;
  int64_t param_floats_ = 0, count_offset_ = 0;
};

// dst = src; both plain float32 of one shape, else a ValueError naming `what`. Either may be on
// a GPU (a synchronous copy).
void CopyTensor(const Tensor& src, Tensor* dst, const std::string& what);
void Fill(Tensor* t, float value);
// A float32 tensor of `shape` in `storage` (on `device`) from float `offset` on, sharing it.
Tensor ViewOf(const std::shared_ptr<uint8_t>& storage, Device device, int64_t offset,
              const Shape& shape);

}  // namespace crossbow
