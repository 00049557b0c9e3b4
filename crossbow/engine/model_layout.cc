#include "crossbow/engine/model_layout.h"

#include <algorithm>
#include <cstring>

namespace crossbow {

ModelLayout::ModelLayout(Learner& reference) {
  int64_t offset = 0;
  for (auto* group : {&params_, &state_}) {
    const auto& names = group == &params_ ? reference.spec().params : reference.spec().state;
    for (const auto& name : names) {
      const Tensor* t = reference.Blob(name);
      CROSSBOW_ENFORCE_VALUE(t->is_plain() && t->dtype() == DataType::kFloat32, "model '",
                             reference.spec().name, "': blob '", name,
                             "' must be a plain float32 tensor to be synchronised, got ",
                             t->DebugString());
      group->push_back({name, t->shape(), offset, t->numel()});
      offset += t->numel();
    }
    if (group == &params_) param_floats_ = offset;
  }
  count_offset_ = offset;
}

std::vector<Tensor> ModelLayout::Clone(Learner& learner, const std::vector<Entry>& entries) {
  std::vector<Tensor> out;
  for (const auto& e : entries) {
    out.emplace_back(e.shape, DataType::kFloat32);
    CopyTensor(*learner.Blob(e.name), &out.back(), e.name);
  }
  return out;
}

float* Floats(Learner& learner, const std::string& name) {
  return learner.Blob(name)->mutable_data<float>();
}

void CopyTensor(const Tensor& src, Tensor* dst, const std::string& what) {
  CROSSBOW_ENFORCE_VALUE(
      src.is_plain() && src.dtype() == DataType::kFloat32 && src.shape() == dst->shape(), "'", what,
      "' must be a plain float32 tensor of shape ", ShapeString(dst->shape()), ", got ",
      src.DebugString());
  std::memcpy(dst->mutable_data<float>(), src.data<float>(), dst->numel() * sizeof(float));
}

void Fill(Tensor* t, float value) { std::fill_n(t->mutable_data<float>(), t->numel(), value); }

}  // namespace crossbow
